// The volume manager: every used volume set up before waitForAttachAndMount resolves, upstream's
// FailedMount messages, per-volume back-off (500 ms doubling to 2m2s), API updates reaching the
// files on resync and the periodic remount, tear-down and orphaned pod directories.
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeMounter, UnmountedVolumesError, VolumeManager } from '../src/index.js';
import { FakeDataSource, makePod, tempRoot } from './helpers.js';

let root: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(async () => {
  await root.cleanup();
});

function setup() {
  const clock = new FakeClock();
  const source = new FakeDataSource(clock);
  const mounter = new FakeMounter();
  const events: string[] = [];
  const manager = new VolumeManager({
    rootDir: root.dir,
    dataSource: source,
    mounter,
    clock,
    remountPeriodMs: 60_000,
    recorder: (_pod, type, reason, message) => events.push(`${type} ${reason} ${message}`),
  });
  return { clock, source, mounter, events, manager };
}

async function error(p: Promise<unknown>): Promise<UnmountedVolumesError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UnmountedVolumesError);
  return err as UnmountedVolumesError;
}

const uid = 'uid-1';

async function waitForDir(dir: string, want: string[]): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (JSON.stringify((await readdir(dir)).sort()) === JSON.stringify(want)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  expect((await readdir(dir)).sort()).toEqual(want);
}

describe('VolumeManager', () => {
  it('sets up every volume a container uses and reports their host paths', async () => {
    const { manager, source, mounter } = setup();
    source.putConfigMap('default', 'cfg', { a: 'A' });
    source.putSecret('default', 's', { p: 'P' });
    const pod = makePod([
      { name: 'scratch', emptyDir: {} },
      { name: 'cfg', configMap: { name: 'cfg' } },
      { name: 'creds', secret: { secretName: 's' } },
      { name: 'host', hostPath: { path: root.dir } },
    ]);
    pod.spec?.volumes?.push({ name: 'unused', persistentVolumeClaim: { claimName: 'x' } });
    await manager.waitForAttachAndMount(pod);
    const mounted = manager.getMountedVolumesForPod(uid);
    expect([...mounted.keys()]).toEqual(['scratch', 'cfg', 'creds', 'host']);
    expect(mounted.get('cfg')?.hostPath).toBe(
      join(root.dir, 'pods/uid-1/volumes/kubernetes.io~configmap/cfg'),
    );
    expect(mounted.get('host')?.hostPath).toBe(root.dir);
    // API-backed volumes are mounted read-only whatever the volumeMount says (upstream mustMountRO).
    expect([...mounted.values()].map((m) => [m.name, m.pluginName, m.readOnly])).toEqual([
      ['scratch', 'kubernetes.io/empty-dir', false],
      ['cfg', 'kubernetes.io/configmap', true],
      ['creds', 'kubernetes.io/secret', true],
      ['host', 'kubernetes.io/host-path', false],
    ]);
    expect(await readFile(join(mounted.get('creds')?.hostPath ?? '', 'p'), 'utf8')).toBe('P');
    expect([...mounter.mounts.keys()]).toEqual([mounted.get('creds')?.hostPath]);
  });

  it('a missing ConfigMap: FailedMount events and the kubelet message, nothing mounted', async () => {
    const { manager, events } = setup();
    const pod = makePod([
      { name: 'b-cfg', configMap: { name: 'missing' } },
      { name: 'a-scratch', emptyDir: {} },
    ]);
    const err = await error(manager.waitForAttachAndMount(pod));
    expect(err.message).toBe(
      'unmounted volumes=[b-cfg], unattached volumes=[], failed to process volumes=[]: MountVolume.SetUp failed for volume "b-cfg" : configmaps "missing" not found',
    );
    expect(err.eventMessage).toBe(`Unable to attach or mount volumes: ${err.message}`);
    expect(events).toEqual([
      'Warning FailedMount MountVolume.SetUp failed for volume "b-cfg" : configmaps "missing" not found',
    ]);
    expect(manager.getMountedVolumesForPod(uid).has('b-cfg')).toBe(false);
    await expect(stat(join(root.dir, 'pods/uid-1/volumes/kubernetes.io~configmap/b-cfg'))).rejects.toThrow(
      /ENOENT/,
    );
  });

  it('PVC, CSI and other types: FailedMount saying they are not supported, listed as not processed', async () => {
    const { manager, events } = setup();
    const pod = makePod([
      { name: 'data', persistentVolumeClaim: { claimName: 'pvc' } },
      { name: 'csi', csi: { driver: 'x' } },
    ]);
    const err = await error(manager.waitForAttachAndMount(pod));
    expect(err.unmountedVolumes).toEqual(['csi', 'data']);
    expect(err.volumesNotProcessed).toEqual(['csi', 'data']);
    expect(err.message).toMatch(
      /^unmounted volumes=\[csi data\], unattached volumes=\[\], failed to process volumes=\[csi data\]: /,
    );
    expect(err.message).toContain(
      'volume "data" of type persistentVolumeClaim is not supported by this node agent (supported: emptyDir, hostPath, configMap, secret, downwardAPI, projected)',
    );
    expect(events).toHaveLength(2);
  });

  it('backs off per volume: 500 ms, then doubling, capped at 2m2s; succeeds once the object exists', async () => {
    const { manager, source, clock } = setup();
    const pod = makePod([{ name: 'cfg', configMap: { name: 'late' } }]);
    await error(manager.waitForAttachAndMount(pod));
    expect(source.calls).toBe(1);
    expect(manager.backOffRemainingMs(uid, 'cfg')).toBe(500);
    // Within the back-off the last error is reported and the API is not asked.
    const again = await error(manager.waitForAttachAndMount(pod));
    expect(again.message).toContain('configmaps "late" not found');
    expect(source.calls).toBe(1);
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      await clock.advance(manager.backOffRemainingMs(uid, 'cfg'));
      await error(manager.waitForAttachAndMount(pod));
      delays.push(manager.backOffRemainingMs(uid, 'cfg'));
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 64000, 122000, 122000, 122000]);
    source.putConfigMap('default', 'late', { k: 'v' });
    await clock.advance(122_000);
    await manager.waitForAttachAndMount(pod);
    expect(manager.backOffRemainingMs(uid, 'cfg')).toBe(0);
  });

  it('API updates reach the files on the next sync and on the periodic remount; emptyDir is not set up again', async () => {
    const { manager, source, clock, mounter } = setup();
    source.putConfigMap('default', 'cfg', { k: 'v1' });
    const pod = makePod([
      { name: 'cfg', configMap: { name: 'cfg' } },
      { name: 'mem', emptyDir: { medium: 'Memory' } },
    ]);
    await manager.start();
    try {
      await manager.waitForAttachAndMount(pod);
      const dir = manager.getMountedVolumesForPod(uid).get('cfg')?.hostPath ?? '';
      source.putConfigMap('default', 'cfg', { k: 'v2' });
      await manager.waitForAttachAndMount(pod);
      expect(await readFile(join(dir, 'k'), 'utf8')).toBe('v2');
      source.putConfigMap('default', 'cfg', { k: 'v3' });
      await clock.advance(60_000);
      await manager.waitForAttachAndMount(makePod([])); // a later pod serialises after the remount
      await new Promise((r) => setTimeout(r, 50));
      expect(await readFile(join(dir, 'k'), 'utf8')).toBe('v3');
      expect(mounter.log.filter((l) => l.startsWith('mount'))).toHaveLength(1);
    } finally {
      await manager.stop();
    }
  });

  it('a failed remount keeps the volume mounted (the pod still starts) and records FailedMount', async () => {
    const { manager, source, events } = setup();
    source.putConfigMap('default', 'cfg', { k: 'v1' });
    const pod = makePod([{ name: 'cfg', configMap: { name: 'cfg' } }]);
    await manager.waitForAttachAndMount(pod);
    source.configMaps.clear();
    await manager.waitForAttachAndMount(pod);
    expect(events).toEqual([
      'Warning FailedMount MountVolume.SetUp failed for volume "cfg" : configmaps "cfg" not found',
    ]);
    const dir = manager.getMountedVolumesForPod(uid).get('cfg')?.hostPath ?? '';
    expect(await readFile(join(dir, 'k'), 'utf8')).toBe('v1');
  });

  it('tears down: tmpfs unmounted, volume directories removed, state forgotten', async () => {
    const { manager, source, mounter } = setup();
    source.putSecret('default', 's', { p: 'P' });
    const pod = makePod([
      { name: 'creds', secret: { secretName: 's' } },
      { name: 'scratch', emptyDir: {} },
      { name: 'mem', emptyDir: { medium: 'Memory' } },
    ]);
    await manager.waitForAttachAndMount(pod);
    expect(mounter.mounts.size).toBe(2);
    await manager.unmountPodVolumes(uid);
    expect(mounter.mounts.size).toBe(0);
    expect(await readdir(join(root.dir, 'pods/uid-1/volumes'))).toEqual([]);
    expect(manager.getMountedVolumesForPod(uid).size).toBe(0);
  });

  it('tears down volumes found on disk after a restart (a new manager)', async () => {
    const first = setup();
    await first.manager.waitForAttachAndMount(makePod([{ name: 'mem', emptyDir: { medium: 'Memory' } }]));
    const second = new VolumeManager({
      rootDir: root.dir,
      dataSource: new FakeDataSource(),
      mounter: first.mounter,
    });
    await second.unmountPodVolumes(uid);
    expect(first.mounter.mounts.size).toBe(0);
  });

  it('removes orphaned pod directories (volumes torn down first), keeps pods in use', async () => {
    const { manager, mounter } = setup();
    const orphan: V1Pod = {
      ...makePod([{ name: 'mem', emptyDir: { medium: 'Memory' } }]),
      metadata: { name: 'o', namespace: 'default', uid: 'orphan' },
    };
    await manager.waitForAttachAndMount(orphan);
    await manager.unmountPodVolumes('orphan'); // forget, then recreate state on disk as after a crash
    await manager.waitForAttachAndMount(orphan);
    const other = new VolumeManager({ rootDir: root.dir, dataSource: new FakeDataSource(), mounter });
    await mkdir(join(root.dir, 'pods/kept/volumes'), { recursive: true });
    await mkdir(join(root.dir, 'pods/orphan/containers/app'), { recursive: true });
    const removed = await other.cleanupOrphanedPodDirs((u) => u === 'kept');
    expect(removed).toEqual(['orphan']);
    expect(await readdir(join(root.dir, 'pods'))).toEqual(['kept']);
    expect(mounter.mounts.size).toBe(0);
  });

  it('after start, removes orphaned pod directories every housekeeping period once podDirInUse says so', async () => {
    const clock = new FakeClock();
    const mounter = new FakeMounter();
    let ready = false;
    const manager = new VolumeManager({
      rootDir: root.dir,
      dataSource: new FakeDataSource(),
      mounter,
      clock,
      podDirInUse: (u) => !ready || u === 'kept',
    });
    await mkdir(join(root.dir, 'pods/left-over/volumes/kubernetes.io~empty-dir/x'), { recursive: true });
    await mkdir(join(root.dir, 'pods/kept'), { recursive: true });
    await manager.start();
    try {
      await clock.advance(2_000);
      await new Promise((r) => setTimeout(r, 50));
      expect((await readdir(join(root.dir, 'pods'))).sort()).toEqual(['kept', 'left-over']);
      ready = true;
      await clock.advance(2_000);
      await waitForDir(join(root.dir, 'pods'), ['kept']);
    } finally {
      await manager.stop();
    }
  });

  it('leaves an orphan whose mount cannot be removed', async () => {
    const { manager, mounter } = setup();
    await manager.waitForAttachAndMount(makePod([{ name: 'mem', emptyDir: { medium: 'Memory' } }]));
    const stuck = join(root.dir, 'pods/uid-1/elsewhere');
    await mkdir(stuck);
    await mounter.mountTmpfs(stuck);
    const other = new VolumeManager({ rootDir: root.dir, dataSource: new FakeDataSource(), mounter });
    expect(await other.cleanupOrphanedPodDirs(() => false)).toEqual([]);
    expect(await readdir(join(root.dir, 'pods'))).toEqual(['uid-1']);
  });
});

// On a real node (root): memory-backed emptyDir, secret and projected volumes sit on real
// tmpfs mounts with the kubelet's size, fsGroup ownership applies, and tear-down / orphan
// clean-up leave no mount in /proc/self/mountinfo and no directory behind.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ExecMounter, VolumeManager } from '../src/index.js';
import { FakeDataSource, makePod, tempRoot } from './helpers.js';

describeRealNode('volumes on real tmpfs', ['root'], () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  const mounter = new ExecMounter();

  async function mountsUnder(): Promise<{ point: string; fstype: string; super: string }[]> {
    const text = await readFile('/proc/self/mountinfo', 'utf8');
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const f = l.split(' ');
        const dash = f.indexOf('-');
        return { point: f[4] ?? '', fstype: f[dash + 1] ?? '', super: f[dash + 3] ?? '' };
      })
      .filter((m) => m.point.startsWith(`${root.dir}/`));
  }

  beforeAll(async () => {
    root = await tempRoot('nodeagent-volumes-real-');
  });
  afterAll(async () => {
    // Whatever a failing test left: unmount before removing.
    for (const p of await mounter.mountsUnder(root.dir)) await mounter.unmount(p).catch(() => undefined);
    await root.cleanup();
  });

  it('mounts tmpfs with the size, writes the secret there, and tears everything down', async () => {
    const source = new FakeDataSource();
    source.putSecret('default', 's', { password: 'hunter2' });
    source.putConfigMap('default', 'kube-root-ca.crt', { 'ca.crt': 'CA' });
    const manager = new VolumeManager({ rootDir: root.dir, dataSource: source, mounter });
    const pod = makePod(
      [
        { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } },
        { name: 'creds', secret: { secretName: 's' } },
        {
          name: 'kube-api-access-x',
          projected: {
            sources: [
              { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            ],
          },
        },
        { name: 'disk', emptyDir: {} },
      ],
      { securityContext: { fsGroup: 4242 } },
    );
    await manager.waitForAttachAndMount(pod);
    const v = manager.getMountedVolumesForPod('uid-1');
    const mounts = await mountsUnder();
    expect(mounts.map((m) => [m.point, m.fstype]).sort()).toEqual(
      [
        [v.get('mem')?.hostPath, 'tmpfs'],
        [v.get('creds')?.hostPath, 'tmpfs'],
        [v.get('kube-api-access-x')?.hostPath, 'tmpfs'],
      ].sort(),
    );
    const mem = mounts.find((m) => m.point === v.get('mem')?.hostPath);
    expect(mem?.super).toMatch(/size=16384k/);
    expect(await readFile(join(v.get('creds')?.hostPath ?? '', 'password'), 'utf8')).toBe('hunter2');
    const token = await stat(join(v.get('kube-api-access-x')?.hostPath ?? '', 'token'));
    expect([token.gid, token.mode & 0o777]).toEqual([4242, 0o640]);
    // Set up again (a resync): no second mount.
    await manager.waitForAttachAndMount(pod);
    expect(await mountsUnder()).toHaveLength(3);

    await manager.unmountPodVolumes('uid-1');
    expect(await mountsUnder()).toEqual([]);
    expect(await readdir(join(root.dir, 'pods/uid-1/volumes'))).toEqual([]);
    expect(await manager.cleanupOrphanedPodDirs(() => false)).toEqual(['uid-1']);
    expect(await readdir(join(root.dir, 'pods'))).toEqual([]);
  });

  it('cleans up an orphaned pod directory with a tmpfs left mounted (after a crash)', async () => {
    const first = new VolumeManager({ rootDir: root.dir, dataSource: new FakeDataSource(), mounter });
    await first.waitForAttachAndMount({
      ...makePod([{ name: 'mem', emptyDir: { medium: 'Memory' } }]),
      metadata: { name: 'o', namespace: 'default', uid: 'orphan' },
    });
    expect(await mountsUnder()).toHaveLength(1);
    const restarted = new VolumeManager({ rootDir: root.dir, dataSource: new FakeDataSource(), mounter });
    expect(await restarted.cleanupOrphanedPodDirs(() => false)).toEqual(['orphan']);
    expect(await mountsUnder()).toEqual([]);
    expect(await readdir(join(root.dir, 'pods'))).toEqual([]);
  });
});

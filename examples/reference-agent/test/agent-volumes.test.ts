// The volume manager in the agent (embedded API server + fake runtime): volumes are set up
// before containers start and mounted from the manager's host paths, a volume that cannot be
// set up keeps the pod from starting with upstream's FailedMount events, and a deleted pod's
// volumes are torn down. With --volume-memory-medium=directory no root is needed; the same
// pod on real tmpfs is checked on a real node.
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Event, V1Pod, V1Volume } from '@kubernetes/client-node';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { embeddedStore, FAST_AGENT_TIMINGS, makePod, shContainer, testLogger, waitFor } from './helpers.js';

const NODE = 'volumes-node';

function volumePod(name: string, volumes: V1Volume[]): V1Pod {
  const c = shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600');
  c.volumeMounts = volumes.map((v) => ({ name: v.name, mountPath: `/v/${v.name}` }));
  return makePod(name, NODE, [c], { volumes });
}

function mountPoints(under: string): Promise<string[]> {
  return readFile('/proc/self/mountinfo', 'utf8').then((t) =>
    t
      .split('\n')
      .map((l) => l.split(' ')[4] ?? '')
      .filter((p) => p.startsWith(`${under}/`)),
  );
}

function suite(memoryMedium: 'tmpfs' | 'directory') {
  let agent: RunningAgent;
  let rootDir: string;
  const store = () => embeddedStore(agent);
  const getPod = (name: string) => store().tryGet('pods', 'default', name) as V1Pod | undefined;

  beforeAll(async () => {
    rootDir = await mkdtemp(join(tmpdir(), 'nodeagent-agent-volumes-'));
    agent = await runAgent({
      nodeName: NODE,
      rootDir,
      volumeMemoryMedium: memoryMedium,
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
    });
  });
  afterAll(async () => {
    await agent?.stop();
    // The agent keeps a --root-dir across restarts, as the kubelet: tear down what is left.
    await agent?.volumes.cleanupOrphanedPodDirs(() => false);
    await rm(rootDir, { recursive: true, force: true });
  });

  it('sets the volumes up before the container starts, mounts their host paths, tears them down on delete', async () => {
    await agent.api.create(
      '/api/v1/namespaces/default/pods',
      volumePod('with-volumes', [
        { name: 'scratch', emptyDir: {} },
        { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
        {
          name: 'info',
          downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] },
        },
      ]),
    );
    const running = await waitFor(
      'Running pod',
      () => getPod('with-volumes')?.status?.phase === 'Running' && getPod('with-volumes'),
      20_000,
    );
    const uid = running.metadata?.uid ?? '';
    const base = join(rootDir, 'pods', uid, 'volumes');
    const paths = {
      scratch: join(base, 'kubernetes.io~empty-dir/scratch'),
      mem: join(base, 'kubernetes.io~empty-dir/mem'),
      info: join(base, 'kubernetes.io~downward-api/info'),
    };
    expect(await readFile(join(paths.info, 'name'), 'utf8')).toBe('with-volumes');
    const container = agent.fakeRuntime?.containers().find((c) => c.metadata?.name === 'app');
    expect(
      container?.mounts
        .filter((m) => m.containerPath.startsWith('/v/'))
        .map((m) => [m.containerPath, m.hostPath, m.readonly]),
    ).toEqual([
      ['/v/scratch', paths.scratch, false],
      ['/v/mem', paths.mem, false],
      ['/v/info', paths.info, true],
    ]);
    // The embedded API server's ServiceAccount admission added the kube-api-access projected
    // volume a real cluster adds: token, CA and namespace, set up like any other volume.
    const access = running.spec?.volumes?.find((v) => v.name.startsWith('kube-api-access-'))?.name ?? '';
    expect(access).toMatch(/^kube-api-access-[a-z0-9]{5}$/);
    const accessPath = join(base, 'kubernetes.io~projected', access);
    expect((await readFile(join(accessPath, 'token'), 'utf8')).split('.')).toHaveLength(3);
    expect(await readFile(join(accessPath, 'namespace'), 'utf8')).toBe('default');
    expect(
      container?.mounts.find((m) => m.containerPath === '/var/run/secrets/kubernetes.io/serviceaccount'),
    ).toMatchObject({ hostPath: accessPath, readonly: true });
    const mounts = await mountPoints(rootDir);
    expect(mounts.sort()).toEqual(memoryMedium === 'tmpfs' ? [paths.mem, paths.info, accessPath].sort() : []);

    await agent.api.delete('/api/v1/namespaces/default/pods/with-volumes', { gracePeriodSeconds: 0 });
    await waitFor('pod gone', () => getPod('with-volumes') === undefined, 20_000);
    await waitFor(
      'volumes torn down',
      async () => (await readdir(base).catch(() => [])).length === 0,
      10_000,
    );
    expect(await mountPoints(rootDir)).toEqual([]);
    await expect(stat(paths.scratch)).rejects.toThrow(/ENOENT/);
  }, 60_000);

  it('a volume that cannot be set up: FailedMount events with the kubelet messages, no container', async () => {
    await agent.api.create(
      '/api/v1/namespaces/default/pods',
      volumePod('bad-volumes', [
        { name: 'cfg', configMap: { name: 'does-not-exist' } },
        { name: 'data', persistentVolumeClaim: { claimName: 'pvc' } },
      ]),
    );
    const events = await waitFor(
      'FailedMount events',
      () => {
        const list = (store().list('events', 'default') as unknown as CoreV1Event[]).filter(
          (e) => e.involvedObject?.name === 'bad-volumes' && e.reason === 'FailedMount',
        );
        return list.some((e) => e.message?.startsWith('Unable to attach or mount volumes')) && list;
      },
      20_000,
    );
    const messages = events.map((e) => e.message ?? '');
    expect(messages).toContain(
      'MountVolume.SetUp failed for volume "cfg" : configmaps "does-not-exist" not found',
    );
    const summary = messages.find((m) => m.startsWith('Unable to attach or mount volumes'));
    expect(summary).toMatch(
      /^Unable to attach or mount volumes: unmounted volumes=\[cfg data\], unattached volumes=\[\], failed to process volumes=\[data\]: /,
    );
    expect(summary).toContain(
      'volume "data" of type persistentVolumeClaim is not supported by this node agent',
    );
    expect(getPod('bad-volumes')?.status?.phase).toBe('Pending');
    expect(
      agent.fakeRuntime
        ?.containers()
        .filter((c) => c.metadata?.name === 'app' && c.labels['io.kubernetes.pod.name'] === 'bad-volumes'),
    ).toEqual([]);
    await agent.api.delete('/api/v1/namespaces/default/pods/bad-volumes', { gracePeriodSeconds: 0 });
    await waitFor('pod gone', () => getPod('bad-volumes') === undefined, 20_000);
    // The volumes that were set up (the kube-api-access one) are torn down too. Grace 0 removes
    // the pod from the API at once (as kube-apiserver: a forced delete), before the agent has
    // seen it, so the teardown follows the removal; with a grace period the agent tears down
    // first and only then deletes the pod (agent-real-pod-real-node.test.ts checks that order).
    await waitFor('no mounts left', async () => (await mountPoints(rootDir)).length === 0, 10_000);
  }, 60_000);
}

describe('agent volumes without root (--volume-memory-medium=directory)', () => suite('directory'));
describeRealNode('agent volumes on real tmpfs', ['root'], () => suite('tmpfs'));

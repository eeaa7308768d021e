// The runtime manager against a real containerd in a private node sandbox: init + app
// containers run, a crashing container restarts with growing delays, SIGTERM-ignoring
// containers are killed at the end of the grace period, preStop runs before the stop, and a
// restarted manager adopts what is running.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { CriClient } from '@nodeagent/cri';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KubeRuntimeManager, type KubeRuntimeManagerOptions } from '../src/index.js';
import { runtimeOn } from './support/real-runtime.js';

describeRealNode('kuberuntime on a real containerd', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  let manager: KubeRuntimeManager;
  let options: KubeRuntimeManagerOptions;

  beforeAll(async () => {
    node = await startNodeSandbox({ name: 'krtnode' });
    ({ cri, manager, options } = runtimeOn(node, { crashLoopBackOff: { initialMs: 1000, maxMs: 4000 } }));
  });
  afterAll(async () => {
    cri?.close();
    await node?.stop();
  });

  const c = (name: string, script: string, extra: Partial<V1Container> = {}): V1Container => ({
    name,
    image: node.imageRef,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', script],
    ...extra,
  });
  const makePod = (name: string, spec: Partial<NonNullable<V1Pod['spec']>>): V1Pod => ({
    metadata: { name, namespace: 'krt', uid: `${name}-${process.pid}` },
    spec: {
      containers: [],
      terminationGracePeriodSeconds: 2,
      volumes: [{ name: 'work', emptyDir: {} }],
      ...spec,
    },
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function syncUntil(pod: V1Pod, done: (phase: string | undefined) => boolean, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = await manager.syncPod(pod, await manager.getPodStatus(pod));
      const status = await manager.getPodStatus(pod);
      const api = manager.computePodStatus(pod, status);
      if (done(api.phase) || Date.now() > deadline) return { result, status, api };
      await sleep(200);
    }
  }

  const mount = { volumeMounts: [{ name: 'work', mountPath: '/work' }] };
  const multi = () =>
    makePod('multi', {
      initContainers: [c('init', 'echo initialized > /work/init.txt', mount)],
      containers: [c('a', 'sleep 3600', mount), c('b', 'sleep 3600', mount)],
    });

  it('runs a pod with an init container and two containers', async () => {
    const pod = multi();
    const { api, status, result } = await syncUntil(pod, (p) => p === 'Running');
    expect(result.error()).toBeUndefined();
    expect(api.phase).toBe('Running');
    expect(api.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: 'Completed',
    });
    expect(api.containerStatuses?.map((s) => [s.name, s.ready, s.state?.running !== undefined])).toEqual([
      ['a', true, true],
      ['b', true, true],
    ]);
    expect(api.conditions?.filter((x) => x.status === 'True').map((x) => x.type)).toEqual([
      'PodReadyToStartContainers',
      'Initialized',
      'Ready',
      'ContainersReady',
      'PodScheduled',
    ]);
    expect(api.podIP).toMatch(/^10\./);
    const a = status.containerStatuses.find((s) => s.name === 'a' && s.state === 'running');
    const out = await cri.runtime.execSync({
      containerId: a?.id ?? '',
      cmd: ['cat', '/work/init.txt'],
      timeout: 10n,
    });
    expect(out.stdout.toString()).toBe('initialized\n');
  });

  it('restarts a crashing container with growing delays and reports CrashLoopBackOff', async () => {
    const pod = makePod('crash', { containers: [c('crash', 'exit 3')] });
    const starts: number[] = [];
    const t0 = Date.now();
    let sawBackOff = false;
    while (Date.now() - t0 < 9_000 && starts.length < 4) {
      const before = await manager.getPodStatus(pod);
      const result = await manager.syncPod(pod, before);
      if (result.results.some((r) => r.action === 'StartContainer' && r.error === undefined))
        starts.push(Date.now() - t0);
      const api = manager.computePodStatus(pod, await manager.getPodStatus(pod));
      if (api.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff') {
        sawBackOff = true;
        expect(api.containerStatuses[0]?.lastState?.terminated).toMatchObject({
          exitCode: 3,
          reason: 'Error',
        });
      }
      await sleep(100);
    }
    expect(sawBackOff).toBe(true);
    expect(starts.length).toBe(4);
    const gaps = starts.slice(1).map((t, i) => t - (starts[i] ?? 0));
    // first restart at once, then ≥1 s, ≥2 s (base 1 s doubling)
    expect(gaps[1]).toBeGreaterThanOrEqual(1000);
    expect(gaps[2]).toBeGreaterThanOrEqual(2000);
    expect(gaps[2]).toBeGreaterThan(gaps[1] ?? 0);
    const status = await manager.getPodStatus(pod);
    expect(Math.max(...status.containerStatuses.map((s) => s.restartCount))).toBe(3);
    await manager.killPod(pod, status);
  });

  it('kills a container that ignores SIGTERM at the end of its grace period', async () => {
    const pod = makePod('stubborn', {
      terminationGracePeriodSeconds: 3,
      containers: [c('stubborn', 'trap "" TERM; touch /tmp/trapped; while true; do sleep 1; done')],
    });
    const { status } = await syncUntil(pod, (p) => p === 'Running');
    // Running is not "trap installed": a SIGTERM before the shell ran `trap` would end it at once.
    const id = status.containerStatuses[0]?.id ?? '';
    for (let i = 0; ; i++) {
      const probe = await cri.runtime.execSync({
        containerId: id,
        cmd: ['test', '-e', '/tmp/trapped'],
        timeout: 5n,
      });
      if (probe.exitCode === 0) break;
      if (i >= 50) throw new Error('the container never installed its TERM trap');
      await new Promise((r) => setTimeout(r, 100));
    }
    const t0 = Date.now();
    const result = await manager.killPod(pod, status);
    const tookMs = Date.now() - t0;
    expect(result.error()).toBeUndefined();
    expect(tookMs).toBeGreaterThanOrEqual(2_500);
    const after = await manager.getPodStatus(pod);
    expect(after.containerStatuses[0]).toMatchObject({ state: 'exited', exitCode: 137 });
  });

  it('runs the preStop hook before stopping the container', async () => {
    const pod = makePod('prestop', {
      terminationGracePeriodSeconds: 10,
      containers: [
        // the hook and the SIGTERM handler append to one file: its order is the order they ran in
        c('web', 'trap "echo sigterm >> /work/order.txt; exit 0" TERM; while true; do sleep 1; done', {
          ...mount,
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop >> /work/order.txt'] } } },
        }),
      ],
    });
    const { status } = await syncUntil(pod, (p) => p === 'Running');
    await manager.killPod(pod, status);
    const file = join(
      node.rootDir,
      'pods',
      pod.metadata?.uid ?? '',
      'volumes',
      'kubernetes.io~empty-dir',
      'work',
      'order.txt',
    );
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('prestop\nsigterm\n');
    const after = await manager.getPodStatus(pod);
    expect(after.containerStatuses[0]).toMatchObject({ state: 'exited', exitCode: 0 });
  });

  it('a restarted manager adopts the running pod without duplicating anything', async () => {
    const pod = multi();
    const before = await cri.runtime.listContainers({});
    const sandboxesBefore = await cri.runtime.listPodSandbox({});
    const adopted = new KubeRuntimeManager(options);
    const result = await adopted.syncPod(pod, await adopted.getPodStatus(pod));
    expect(
      result.results.filter((r) => r.action === 'StartContainer' || r.action === 'CreatePodSandbox'),
    ).toEqual([]);
    expect((await cri.runtime.listContainers({})).containers.length).toBe(before.containers.length);
    expect((await cri.runtime.listPodSandbox({})).items.length).toBe(sandboxesBefore.items.length);
    expect(adopted.computePodStatus(pod, await adopted.getPodStatus(pod)).phase).toBe('Running');
    const killed = await adopted.killPod(pod, await adopted.getPodStatus(pod));
    expect(killed.error()).toBeUndefined();
  });
});

import { criPodStatusSource, criRuntimeLister } from '@nodeagent/kubecontainer';
import * as promClient from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  GenericPLEG,
  type GenericPlegOptions,
  type PodLifecycleEvent,
  type RelistResult,
} from '../src/index.js';
import { type Harness, kubeletContainer, kubeletPod, startHarness } from './helpers.js';

function drain(pleg: GenericPLEG): string[] {
  const out: string[] = [];
  for (let e = pleg.channel.tryReceive(); e !== undefined; e = pleg.channel.tryReceive())
    out.push(describeEvent(e));
  return out;
}

/** Polls (real time) until `fn` is true; the fake clock's timers run their callbacks asynchronously. */
async function waitUntil(fn: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

let names = new Map<string, string>();
function describeEvent(e: PodLifecycleEvent): string {
  return `${e.type}:${names.get(e.data) ?? e.data}`;
}

describe('GenericPLEG over the fake runtime', () => {
  let h: Harness;
  let pleg: GenericPLEG;
  const make = (options: Partial<GenericPlegOptions> = {}) =>
    new GenericPLEG({
      lister: criRuntimeLister(h.cri),
      statusSource: criPodStatusSource(h.cri, { clock: h.clock }),
      clock: h.clock,
      ...options,
    });

  beforeEach(async () => {
    h = await startHarness();
    names = new Map();
    pleg = make();
  });
  afterEach(async () => {
    await pleg.stop();
    await h.close();
  });

  async function runPod(name: string): Promise<{ id: string; uid: string }> {
    const config = kubeletPod(name);
    const { podSandboxId } = await h.cri.runtime.runPodSandbox({ config });
    names.set(podSandboxId, `${name}/sandbox`);
    return { id: podSandboxId, uid: config.metadata?.uid ?? '' };
  }
  async function createContainer(pod: string, podName: string, name: string, start = true): Promise<string> {
    const sandboxConfig = kubeletPod(podName);
    const { containerId } = await h.cri.runtime.createContainer({
      podSandboxId: pod,
      config: kubeletContainer(sandboxConfig, name),
      sandboxConfig,
    });
    names.set(containerId, `${podName}/${name}`);
    if (start) await h.cri.runtime.startContainer({ containerId });
    return containerId;
  }
  /** Starts the loop, waits for its first relist and drains its events; returns the relists so far. */
  async function startAfterFirstRelist(): Promise<RelistResult[]> {
    const relists: RelistResult[] = [];
    pleg.on('relist', (r) => relists.push(r));
    await pleg.start();
    await h.clock.advance(0);
    await waitUntil(() => relists.length === 1);
    drain(pleg);
    return relists;
  }

  it('emits every transition, Died before Removed, and keeps the cache in step', async () => {
    const pod = await runPod('web');
    await pleg.relist();
    expect(drain(pleg)).toEqual(['ContainerStarted:web/sandbox']);

    const app = await createContainer(pod.id, 'web', 'app', false);
    await pleg.relist();
    expect(drain(pleg)).toEqual([]); // created → "unknown": ContainerChanged is never sent
    expect(pleg.cache.get(pod.uid).status.containerStatuses.map((c) => [c.name, c.state])).toEqual([
      ['app', 'created'],
    ]);

    await h.cri.runtime.startContainer({ containerId: app });
    await pleg.relist();
    expect(drain(pleg)).toEqual(['ContainerStarted:web/app']);

    await h.cri.runtime.stopContainer({ containerId: app, timeout: 0n });
    await pleg.relist();
    expect(drain(pleg)).toEqual(['ContainerDied:web/app']);
    expect(pleg.cache.get(pod.uid).status.containerStatuses[0]).toMatchObject({
      state: 'exited',
      exitCode: 137,
    });

    await h.cri.runtime.removeContainer({ containerId: app });
    await pleg.relist();
    expect(drain(pleg)).toEqual(['ContainerRemoved:web/app']);

    // A running container that disappears between two relists died unseen: Died, then Removed.
    const sidecar = await createContainer(pod.id, 'web', 'sidecar');
    await pleg.relist();
    expect(drain(pleg)).toEqual(['ContainerStarted:web/sidecar']);
    await h.cri.runtime.removeContainer({ containerId: sidecar });
    await pleg.relist();
    expect(drain(pleg)).toEqual(['ContainerDied:web/sidecar', 'ContainerRemoved:web/sidecar']);

    await h.cri.runtime.stopPodSandbox({ podSandboxId: pod.id });
    await pleg.relist();
    expect(drain(pleg)).toEqual(['ContainerDied:web/sandbox']);
    await h.cri.runtime.removePodSandbox({ podSandboxId: pod.id });
    await pleg.relist();
    expect(drain(pleg)).toEqual(['ContainerRemoved:web/sandbox']);
    expect(pleg.cache.modifiedAt(pod.uid)).toBeUndefined();
  });

  it('inspects only the pods that changed (call log)', async () => {
    const pods = await Promise.all(['a', 'b', 'c'].map((n) => runPod(n)));
    const containers = await Promise.all(
      pods.map((p, i) => createContainer(p.id, ['a', 'b', 'c'][i] ?? '', 'app')),
    );
    await pleg.relist();
    expect(h.fake.calls('PodSandboxStatus')).toHaveLength(3);
    drain(pleg);

    h.fake.clearCalls();
    await pleg.relist();
    expect(h.fake.callNames().sort()).toEqual(['ListContainers', 'ListPodSandbox']);

    h.fake.clearCalls();
    await h.cri.runtime.stopContainer({ containerId: containers[1] ?? '', timeout: 0n });
    h.fake.clearCalls();
    await pleg.relist();
    const inspected = h.fake
      .calls('PodSandboxStatus')
      .map((c) => (c.request as { podSandboxId: string }).podSandboxId);
    expect(inspected).toEqual([pods[1]?.id]);
    expect(
      h.fake.calls('ContainerStatus').map((c) => (c.request as { containerId: string }).containerId),
    ).toEqual([containers[1]]);
    expect(drain(pleg)).toEqual(['ContainerDied:b/app']);
  });

  it('re-inspects a pod whose inspection failed, and sends its events then', async () => {
    const pod = await runPod('flaky');
    const app = await createContainer(pod.id, 'flaky', 'app');
    await pleg.relist();
    drain(pleg);
    const inspectErrors: string[] = [];
    pleg.on('inspectError', (uid) => inspectErrors.push(uid));

    await h.cri.runtime.stopContainer({ containerId: app, timeout: 0n });
    h.fake.injectError('PodSandboxStatus', { code: 14, message: 'runtime hiccup' });
    await pleg.relist();
    expect(drain(pleg)).toEqual([]);
    expect(inspectErrors).toEqual([pod.uid]);
    expect(pleg.cache.get(pod.uid).error?.message).toContain('runtime hiccup');

    h.fake.clearCalls();
    await pleg.relist();
    expect(h.fake.calls('PodSandboxStatus')).toHaveLength(1);
    expect(drain(pleg)).toEqual(['ContainerDied:flaky/app']);
    expect(pleg.cache.get(pod.uid).error).toBeUndefined();

    h.fake.clearCalls();
    await pleg.relist();
    expect(h.fake.calls('PodSandboxStatus')).toHaveLength(0);
  });

  it('sends PodSync for a pod re-inspected without container events', async () => {
    const pod = await runPod('quiet');
    await pleg.relist();
    drain(pleg);
    pleg.requestReinspect(pod.uid);
    await pleg.relist();
    expect(pleg.channel.tryReceive()).toEqual({ id: pod.uid, type: 'PodSync', data: '' });
  });

  it('drops events when the buffer is full, counting them and the metric', async () => {
    const registry = new promClient.Registry();
    pleg = make({ channelCapacity: 2, metrics: { registry, promClient } });
    const pod = await runPod('busy');
    for (const n of ['a', 'b', 'c']) await createContainer(pod.id, 'busy', n);
    const results: RelistResult[] = [];
    pleg.on('relist', (r) => results.push(r));
    await pleg.relist();
    expect(pleg.channel.length).toBe(2);
    expect(pleg.channel.dropped).toBe(2);
    expect(results[0]).toMatchObject({ pods: 1, inspected: 1, sent: 2, dropped: 2 });
    const discard = await registry.getSingleMetric('kubelet_pleg_discard_events')?.get();
    expect(discard?.values[0]?.value).toBe(2);
    const duration = await registry.getSingleMetric('kubelet_pleg_relist_duration_seconds')?.get();
    expect(
      duration?.values.find((v) => (v as { metricName?: string }).metricName?.endsWith('_count'))?.value,
    ).toBe(1);
  });

  it('sets kubelet_running_pods (running sandboxes) and kubelet_running_containers by container_state', async () => {
    // Upstream TestRunningPodAndContainerCount: pods count when a sandbox runs; containers by state.
    const registry = new promClient.Registry();
    pleg = make({ metrics: { registry, promClient } });
    const a = await runPod('a');
    await createContainer(a.id, 'a', 'web');
    const exited = await createContainer(a.id, 'a', 'job');
    await h.cri.runtime.stopContainer({ containerId: exited, timeout: 0n });
    await createContainer(a.id, 'a', 'idle', false);
    const b = await runPod('b');
    await createContainer(b.id, 'b', 'web');
    await h.cri.runtime.stopPodSandbox({ podSandboxId: b.id });
    await runPod('c');
    await pleg.relist();
    const gauge = async (name: string) =>
      Object.fromEntries(
        ((await registry.getSingleMetric(name)?.get())?.values ?? []).map((v) => [
          String(v.labels.container_state ?? ''),
          v.value,
        ]),
      );
    expect(await gauge('kubelet_running_pods')).toEqual({ '': 2 });
    // b's container is stopped with its sandbox.
    expect(await gauge('kubelet_running_containers')).toEqual({ running: 1, exited: 2, created: 1 });
    await h.cri.runtime.removePodSandbox({ podSandboxId: a.id });
    await pleg.relist();
    expect(await gauge('kubelet_running_containers')).toEqual({ running: 0, exited: 1, created: 0 });
    expect(await gauge('kubelet_running_pods')).toEqual({ '': 1 });
  });

  it('health: not before the first relist, then the kubelet message after 3 minutes without one', async () => {
    expect(pleg.healthy()).toEqual({ ok: false, message: 'pleg has yet to be successful' });
    await pleg.relist();
    expect(pleg.healthy()).toEqual({ ok: true, message: '' });
    h.fake.injectError('ListPodSandbox', { code: 14, message: 'down' });
    expect(await pleg.relist()).toBe(false);
    await h.clock.advance(180_000);
    expect(pleg.healthy().ok).toBe(true); // exactly the threshold is still healthy
    await h.clock.advance(100);
    expect(pleg.healthy()).toEqual({
      ok: false,
      message: 'pleg was last seen active 3m0.1s ago; threshold is 3m0s',
    });
    expect(await pleg.relist()).toBe(true);
    expect(pleg.healthy().ok).toBe(true);
  });

  it('keeps the pod IPs once the sandbox is stopped and its IP released', async () => {
    const pod = await runPod('ip');
    await pleg.relist();
    const ips = pleg.cache.get(pod.uid).status.ips;
    expect(ips).toHaveLength(1);
    await h.cri.runtime.stopPodSandbox({ podSandboxId: pod.id });
    const raw = await h.cri.runtime.podSandboxStatus({ podSandboxId: pod.id });
    expect(raw.status?.network?.ip ?? '').toBe('');
    await pleg.relist();
    expect(pleg.cache.get(pod.uid).status.ips).toEqual(ips);
  });

  it('getNewerThan is released by the relist that follows, and by the pod write', async () => {
    const pod = await runPod('wait');
    await pleg.relist();
    const since = h.clock.now();
    const quiet = pleg.cache.getNewerThan('unrelated-pod', since);
    const changed = pleg.cache.getNewerThan(pod.uid, since);
    await h.clock.advance(1);
    await createContainer(pod.id, 'wait', 'app');
    await pleg.relist();
    await expect(quiet).resolves.toMatchObject({ status: { id: 'unrelated-pod', containerStatuses: [] } });
    const fresh = await changed;
    expect(fresh.status.containerStatuses.map((c) => c.name)).toEqual(['app']);
  });

  it('relistPod lists and inspects only that pod, even unchanged, waking its readers', async () => {
    const a = await runPod('one');
    const b = await runPod('two');
    await pleg.relist();
    drain(pleg);
    const app = await createContainer(b.id, 'two', 'app');
    await createContainer(a.id, 'one', 'app');
    h.fake.clearCalls();
    await pleg.relistPod(b.uid);
    expect(drain(pleg)).toEqual(['ContainerStarted:two/app']);
    const lists = h.fake.calls('ListContainers').map((c) => c.request);
    expect(lists.every((r) => JSON.stringify(r).includes(b.uid))).toBe(true);
    // The listing and the inspection share one round of list calls (listPodAndGetStatus).
    expect(lists).toHaveLength(1);
    expect(h.fake.calls('ListPodSandbox')).toHaveLength(1);
    expect(pleg.cache.get(b.uid).status.containerStatuses[0]?.id).toBe(app);

    await h.clock.advance(5);
    const reader = pleg.cache.getNewerThan(b.uid, h.clock.now() - 1);
    await pleg.relistPod(b.uid);
    await expect(reader).resolves.toMatchObject({ status: { id: b.uid } });
    expect(drain(pleg)).toEqual([]);

    // The full relist still reports pod "one" (the on-demand relist did not consume its change).
    await pleg.relist();
    expect(drain(pleg)).toEqual(['ContainerStarted:one/app']);
  });

  /**
   * A new PLEG over `criPodStatusSource` (only its `getPodStatus` when `limited`), with the
   * sandbox of pod `name` run and relisted, its events drained.
   */
  async function listedPod(name: string, limited = false) {
    const source = criPodStatusSource(h.cri, { clock: h.clock });
    await pleg.stop();
    pleg = make({
      statusSource: limited ? { getPodStatus: (...args) => source.getPodStatus(...args) } : source,
    });
    const pod = await runPod(name);
    await pleg.relist();
    drain(pleg);
    return pod;
  }

  it.each([
    ['a status source that lists and inspects in one read', 1],
    ['a status source without listPodAndGetStatus', 2],
  ] as const)(
    'relistPod with %s: the same events and cache, a pod gone from the runtime included',
    async (_, rounds) => {
      const pod = await listedPod('solo', rounds !== 1);
      const app = await createContainer(pod.id, 'solo', 'app');
      h.fake.clearCalls();
      await pleg.relistPod(pod.uid);
      expect(drain(pleg)).toEqual(['ContainerStarted:solo/app']);
      expect(h.fake.calls('ListContainers')).toHaveLength(rounds);
      expect(pleg.cache.get(pod.uid).status).toMatchObject({
        name: 'solo',
        namespace: 'default',
        containerStatuses: [{ id: app, state: 'running' }],
      });
      // Gone: the container and the sandbox removed in the runtime.
      await h.cri.runtime.stopContainer({ containerId: app, timeout: 0n });
      await h.cri.runtime.removeContainer({ containerId: app });
      await h.cri.runtime.stopPodSandbox({ podSandboxId: pod.id });
      await h.cri.runtime.removePodSandbox({ podSandboxId: pod.id });
      await pleg.relistPod(pod.uid);
      expect(drain(pleg).sort()).toEqual([
        'ContainerDied:solo/app',
        'ContainerDied:solo/sandbox',
        'ContainerRemoved:solo/app',
        'ContainerRemoved:solo/sandbox',
      ]);
      expect(pleg.cache.get(pod.uid).status.containerStatuses).toEqual([]);
    },
  );

  it("relistPod reads the known sandboxes and containers (its last listing, the caller's) with the lists", async () => {
    const pod = await listedPod('known');
    const app = await createContainer(pod.id, 'known', 'app');
    const side = await createContainer(pod.id, 'known', 'side');
    h.fake.clearCalls();
    // The sandbox from the PLEG's last listing, `app` from the caller; `side` is known to neither.
    await pleg.relistPod(pod.uid, undefined, { containerIds: [app] });
    expect(drain(pleg).sort()).toEqual(['ContainerStarted:known/app', 'ContainerStarted:known/side']);
    const calls = h.fake.calls().map((c) => `${c.method} ${JSON.stringify(c.request)}`);
    const firstList = calls.findIndex((c) => c.startsWith('List'));
    const at = (method: string, id: string) => calls.findIndex((c) => c.startsWith(method) && c.includes(id));
    expect(at('PodSandboxStatus', pod.id)).toBeLessThan(firstList);
    expect(at('ContainerStatus', app)).toBeLessThan(firstList);
    expect(at('ContainerStatus', side)).toBeGreaterThan(firstList);
    expect(h.fake.calls('ContainerStatus')).toHaveLength(2);
    expect(h.fake.calls('ListContainers')).toHaveLength(1);
    expect(
      pleg.cache
        .get(pod.uid)
        .status.containerStatuses.map((c) => [c.id, c.state])
        .sort(),
    ).toEqual(
      [
        [app, 'running'],
        [side, 'running'],
      ].sort(),
    );
  });

  it('inspectPod reads the known sandboxes and containers alone: same events and cache as relistPod, no list calls', async () => {
    const pod = await listedPod('ins');
    const app = await createContainer(pod.id, 'ins', 'app');
    h.fake.clearCalls();
    // The sandbox from the PLEG's last listing, `app` from the caller.
    await pleg.inspectPod(pod.uid, { containerIds: [app] });
    expect(h.fake.callNames().filter((n) => n.startsWith('List'))).toEqual([]);
    expect(drain(pleg)).toEqual(['ContainerStarted:ins/app']);
    const cached = pleg.cache.get(pod.uid).status;
    expect(cached).toMatchObject({
      name: 'ins',
      namespace: 'default',
      sandboxStatuses: [{ id: pod.id }],
      containerStatuses: [{ id: app, state: 'running' }],
    });
    // A relist finds nothing new: the record inspectPod wrote matches the runtime's listing.
    await pleg.relist();
    expect(drain(pleg)).toEqual([]);
    // Gone: the container removed; inspectPod (knowing it from its last listing) sees it go.
    await h.cri.runtime.stopContainer({ containerId: app, timeout: 0n });
    await h.cri.runtime.removeContainer({ containerId: app });
    await pleg.inspectPod(pod.uid, {});
    expect(drain(pleg).sort()).toEqual(['ContainerDied:ins/app', 'ContainerRemoved:ins/app']);
    expect(pleg.cache.get(pod.uid).status.containerStatuses).toEqual([]);
  });

  it('inspectPod without getPodAndStatusByIds relists the pod', async () => {
    const pod = await listedPod('fallback', true);
    const app = await createContainer(pod.id, 'fallback', 'app');
    h.fake.clearCalls();
    await pleg.inspectPod(pod.uid, { containerIds: [app] });
    expect(h.fake.calls('ListContainers').length).toBeGreaterThan(0);
    expect(drain(pleg)).toEqual(['ContainerStarted:fallback/app']);
  });

  it('relistPod on a running loop: the event and the fresh cache come before the next period (fake time)', async () => {
    const pod = await runPod('early');
    const relists = await startAfterFirstRelist();
    const syncStart = h.clock.now();
    const app = await createContainer(pod.id, 'early', 'app');
    // The pod worker's next sync waits for a cache entry newer than its last sync.
    const fresh = pleg.cache.getNewerThan(pod.uid, syncStart);
    await h.clock.advance(10); // well within the 1 s period: no periodic relist runs
    await pleg.relistPod(pod.uid);
    expect(drain(pleg)).toEqual(['ContainerStarted:early/app']);
    await expect(fresh).resolves.toMatchObject({
      status: { containerStatuses: [{ id: app, state: 'running' }] },
    });
    expect(relists).toHaveLength(1);
    // The next periodic relist does not send the same event again.
    await h.clock.advance(1_000);
    await waitUntil(() => relists.length === 2);
    expect(drain(pleg)).toEqual([]);
  });

  it('getNewerThan relists the pod at once when the cache is not newer, and makes no call when it is (fake time)', async () => {
    const pod = await runPod('waiter');
    const relists = await startAfterFirstRelist();
    // Already newer (a worker's first sync): answered from the cache, no CRI call.
    h.fake.clearCalls();
    await expect(pleg.getNewerThan(pod.uid, 0)).resolves.toMatchObject({ status: { id: pod.uid } });
    expect(h.fake.calls('ListPodSandbox')).toHaveLength(0);
    // A worker whose last sync started after the relist: the pod is relisted now, not in 1 s.
    await h.clock.advance(10);
    const lastSync = h.clock.now();
    const app = await createContainer(pod.id, 'waiter', 'app');
    await h.clock.advance(10);
    await expect(pleg.getNewerThan(pod.uid, lastSync)).resolves.toMatchObject({
      status: { containerStatuses: [{ id: app, state: 'running' }] },
    });
    expect(relists).toHaveLength(1);
    expect(drain(pleg)).toEqual(['ContainerStarted:waiter/app']);
  });

  it('an on-demand relist overtaken by a full relist is skipped', async () => {
    const pod = await runPod('skip');
    h.fake.clearCalls();
    const full = pleg.relist();
    const single = pleg.relistPod(pod.uid);
    await Promise.all([full, single]);
    expect(h.fake.calls('ListPodSandbox')).toHaveLength(2); // the full list + the inspection's filtered one
    expect(h.fake.calls('PodSandboxStatus')).toHaveLength(1);
  });

  it('updateCache inspects a given pod into the cache', async () => {
    const pod = await runPod('direct');
    const listed = await criRuntimeLister(h.cri).listPods();
    const result = await pleg.updateCache(listed[0] ?? expect.fail('no pod'));
    expect(result).toMatchObject({ updated: true, error: undefined });
    expect(pleg.cache.get(pod.uid).status.sandboxStatuses[0]?.id).toBe(pod.id);
  });

  it('stop() cancels a relist in progress', async () => {
    await runPod('slow');
    h.fake.setLatency('ListContainers', 60_000);
    const relists: RelistResult[] = [];
    pleg.on('relist', (r) => relists.push(r));
    await pleg.start();
    await h.clock.advance(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await pleg.stop();
    expect(pleg.running).toBe(false);
    expect(relists).toEqual([]);
    expect(pleg.healthy().ok).toBe(false);
  });
});

import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  criPodStatusSource,
  criRuntimeLister,
  findContainerStatusByName,
  runningContainerStatuses,
} from '../src/index.js';
import {
  type FakeRuntimeHarness,
  kubeletContainerConfig as kubeletContainer,
  kubeletPodConfig as kubeletPod,
  startFakeRuntime,
} from '../src/testing.js';

describe('criPodStatusSource and criRuntimeLister', () => {
  let h: {
    readonly fake: FakeRuntimeHarness['runtime'];
    readonly cri: FakeRuntimeHarness['cri'];
    readonly clock: FakeClock;
    close(): Promise<void>;
  };
  beforeEach(async () => {
    const clock = new FakeClock();
    const { runtime, cri, stop } = await startFakeRuntime({ clock });
    h = { fake: runtime, cri, clock, close: stop };
  });
  afterEach(() => h.close());

  it('builds the kubelet PodStatus: identity, IPs, annotations, newest first, exit data only when exited', async () => {
    const config = kubeletPod('web', 'uid-web', 'prod');
    const { podSandboxId } = await h.cri.runtime.runPodSandbox({ config });
    h.fake.addBehaviour({ name: 'job' }, { exitAfterMs: 500, exitCode: 3, message: 'bad' });
    const first = await h.fake.addContainer(
      podSandboxId,
      kubeletContainer(config, 'job', { restartCount: 0, hash: 'ff' }),
    );
    await h.clock.advance(1000);
    const second = await h.fake.addContainer(
      podSandboxId,
      kubeletContainer(config, 'job', { attempt: 1, restartCount: 1, hash: 'ff' }),
    );
    await h.clock.advance(10);
    const created = await h.fake.addContainer(podSandboxId, kubeletContainer(config, 'side'), {
      start: false,
    });
    await h.clock.advance(10);
    // Something else on the node, not this pod.
    await h.cri.runtime.runPodSandbox({ config: kubeletPod('other') });

    const source = criPodStatusSource(h.cri, {
      clock: h.clock,
      terminationMessage: async (s) => (s.id === first ? 'from file' : undefined),
    });
    const status = await source.getPodStatus('uid-web', 'web', 'prod');
    expect(status).toMatchObject({ id: 'uid-web', name: 'web', namespace: 'prod', timestamp: h.clock.now() });
    expect(status.ips).toHaveLength(1);
    expect(status.sandboxStatuses.map((s) => s.id)).toEqual([podSandboxId]);
    expect(status.containerStatuses.map((c) => c.id)).toEqual([created, second, first]);
    const [side, running, exited] = status.containerStatuses;
    expect(side).toMatchObject({ name: 'side', state: 'created', startedAt: 0, finishedAt: 0 });
    expect(running).toMatchObject({
      name: 'job',
      state: 'running',
      restartCount: 1,
      hash: 0xffn,
      exitCode: 0,
    });
    expect(running?.startedAt).toBeGreaterThan(0);
    expect(exited).toMatchObject({
      state: 'exited',
      exitCode: 3,
      reason: 'Error',
      message: 'bad: from file',
    });
    expect(exited?.finishedAt).toBe(exited ? exited.startedAt + 500 : -1);
    expect(exited?.image).toBe('registry.local/busybox:latest');
    expect(exited?.imageId).not.toBe('');
    expect(findContainerStatusByName(status, 'job')?.id).toBe(second);
    expect(runningContainerStatuses(status).map((c) => c.id)).toEqual([second]);

    // One read for a single-pod relist: the same status, and the pod as the lister lists it.
    h.fake.clearCalls();
    const both = await source.listPodAndGetStatus?.('uid-web', 'web', 'prod');
    expect(both?.status).toEqual(status);
    expect(both?.pod).toEqual(await criRuntimeLister(h.cri).listPod?.('uid-web'));
    expect(both?.pod?.containers.map((c) => c.id).sort()).toEqual([first, second, created].sort());
    expect(h.fake.calls('ListContainers').length).toBe(2); // ours, then the lister's
    expect(await source.listPodAndGetStatus?.('uid-none', '', '')).toMatchObject({
      pod: undefined,
      status: { id: 'uid-none', containerStatuses: [], sandboxStatuses: [] },
    });
  });

  it('an unknown pod gives an empty status; NOT_FOUND between list and status is skipped', async () => {
    const source = criPodStatusSource(h.cri, { clock: h.clock });
    await expect(source.getPodStatus('nope', 'n', 'ns')).resolves.toMatchObject({
      containerStatuses: [],
      sandboxStatuses: [],
      ips: [],
    });
    const config = kubeletPod('racy');
    const { podSandboxId } = await h.cri.runtime.runPodSandbox({ config });
    await h.fake.addContainer(podSandboxId, kubeletContainer(config, 'app'));
    h.fake.injectError('ContainerStatus', { code: 5, message: 'container gone' });
    const status = await source.getPodStatus('uid-racy', 'racy', 'default');
    expect(status.containerStatuses).toEqual([]);
    expect(status.sandboxStatuses).toHaveLength(1);
    h.fake.injectError('PodSandboxStatus', { code: 14, message: 'unavailable' });
    await expect(source.getPodStatus('uid-racy', 'racy', 'default')).rejects.toThrow('unavailable');
  });

  it('known IDs: their status reads go out with the lists, same result; stale or unlisted reads are not kept', async () => {
    const config = kubeletPod('hint');
    const { podSandboxId } = await h.cri.runtime.runPodSandbox({ config });
    const app = await h.fake.addContainer(podSandboxId, kubeletContainer(config, 'app'));
    const side = await h.fake.addContainer(podSandboxId, kubeletContainer(config, 'side'));
    // The calls as the source makes them; `exitOnList` ends a container while the lists run.
    const seen: string[] = [];
    let exitOnList: string | undefined;
    const reads = new Map<string, Promise<unknown>>();
    const runtime = h.cri.runtime;
    const cri = {
      runtime: {
        listPodSandbox: async (...a: Parameters<typeof runtime.listPodSandbox>) => {
          seen.push('ListPodSandbox');
          const r = await runtime.listPodSandbox(...a);
          seen.push('ListPodSandbox done');
          return r;
        },
        listContainers: async (...a: Parameters<typeof runtime.listContainers>) => {
          seen.push('ListContainers');
          if (exitOnList !== undefined) {
            // After the early read has its answer (running), before the list is made.
            await reads.get(exitOnList);
            h.fake.killContainer(exitOnList, { exitCode: 2 });
          }
          const r = await runtime.listContainers(...a);
          seen.push('ListContainers done');
          return r;
        },
        podSandboxStatus: (...a: Parameters<typeof runtime.podSandboxStatus>) => {
          seen.push(`PodSandboxStatus ${a[0]?.podSandboxId}`);
          return runtime.podSandboxStatus(...a);
        },
        containerStatus: (...a: Parameters<typeof runtime.containerStatus>) => {
          seen.push(`ContainerStatus ${a[0]?.containerId ?? ''}`);
          const read = runtime.containerStatus(...a);
          reads.set(
            a[0]?.containerId ?? '',
            read.catch(() => undefined),
          );
          return read;
        },
      },
    };
    const source = criPodStatusSource(cri, { clock: h.clock });
    const listAndGet = source.listPodAndGetStatus;
    if (listAndGet === undefined) throw new Error('criPodStatusSource has listPodAndGetStatus');
    const plain = await listAndGet('uid-hint', 'hint', 'default');
    // Without known IDs: the lists, then the status reads.
    expect(seen.slice(0, 4).sort()).toEqual(
      ['ListContainers', 'ListContainers done', 'ListPodSandbox', 'ListPodSandbox done'].sort(),
    );

    seen.length = 0;
    const hinted = await listAndGet('uid-hint', 'hint', 'default', undefined, {
      sandboxIds: [podSandboxId, 'gone-sandbox'],
      containerIds: [app, 'gone-container'],
    });
    expect(hinted).toEqual(plain);
    const firstListDone = seen.findIndex((c) => c.endsWith(' done'));
    // The known reads went out before the lists returned; `side`, unknown, only after them.
    expect(seen.slice(0, firstListDone)).toEqual(
      expect.arrayContaining([`PodSandboxStatus ${podSandboxId}`, `ContainerStatus ${app}`]),
    );
    expect(seen.indexOf(`ContainerStatus ${side}`)).toBeGreaterThan(firstListDone);
    // Each known ID was read once: its early read matched the list.
    expect(seen.filter((c) => c === `ContainerStatus ${app}`)).toHaveLength(1);

    // `app` exits between its early read (running) and the list (exited): read again.
    seen.length = 0;
    exitOnList = app;
    const after = await listAndGet('uid-hint', 'hint', 'default', undefined, { containerIds: [app] });
    expect(seen.filter((c) => c === `ContainerStatus ${app}`)).toHaveLength(2);
    expect(after.status.containerStatuses.find((c) => c.id === app)).toMatchObject({
      state: 'exited',
      exitCode: 2,
    });
    expect(after.pod?.containers.find((c) => c.id === app)?.state).toBe('exited');
  });

  it('getPodAndStatusByIds: the named sandboxes and containers only, no list calls; the same pod and status as a listing', async () => {
    const config = kubeletPod('ids', 'uid-ids', 'prod');
    const { podSandboxId } = await h.cri.runtime.runPodSandbox({ config });
    h.fake.addBehaviour({ name: 'job' }, { exitAfterMs: 5, exitCode: 3, message: 'bad' });
    const job = await h.fake.addContainer(podSandboxId, kubeletContainer(config, 'job', { hash: 'ff' }));
    await h.clock.advance(100);
    const app = await h.fake.addContainer(podSandboxId, kubeletContainer(config, 'app'));
    const source = criPodStatusSource(h.cri, {
      clock: h.clock,
      terminationMessage: async (s) => (s.id === job ? 'from file' : undefined),
    });
    const { getPodAndStatusByIds, listPodAndGetStatus } = source;
    if (getPodAndStatusByIds === undefined || listPodAndGetStatus === undefined)
      throw new Error('criPodStatusSource reads by IDs and lists');
    const listed = await listPodAndGetStatus('uid-ids', 'ids', 'prod');
    h.fake.clearCalls();
    const byIds = await getPodAndStatusByIds('uid-ids', '', '', {
      sandboxIds: [podSandboxId, 'gone-sandbox'],
      containerIds: [app, job, app, 'gone-container'],
    });
    expect(h.fake.callNames().filter((n) => n.startsWith('List'))).toEqual([]);
    expect(h.fake.calls('ContainerStatus')).toHaveLength(3);
    expect(byIds.status).toEqual(listed.status);
    expect(byIds.status.containerStatuses.find((c) => c.id === job)?.message).toBe('bad: from file');
    expect(byIds.pod).toEqual({
      ...listed.pod,
      containers: expect.arrayContaining(
        listed.pod?.containers.map((c) => expect.objectContaining({ ...c, imageRef: expect.any(String) })) ??
          [],
      ),
    });
    expect(byIds.pod?.containers).toHaveLength(2);
    // Only what is named: the app container alone.
    const partial = await getPodAndStatusByIds('uid-ids', 'ids', 'prod', { containerIds: [app] });
    expect(partial.status.containerStatuses.map((c) => c.id)).toEqual([app]);
    expect(partial.status.sandboxStatuses).toEqual([]);
    expect(partial.pod?.containers.map((c) => c.id)).toEqual([app]);
    // Nothing left of what is named: no pod, an empty status.
    const none = await getPodAndStatusByIds('uid-ids', 'ids', 'prod', { containerIds: ['gone'] });
    expect(none.pod).toBeUndefined();
    expect(none.status).toMatchObject({ id: 'uid-ids', containerStatuses: [], sandboxStatuses: [], ips: [] });
  });

  it('IPs come only from the newest sandbox while it is ready', async () => {
    const old = kubeletPod('re');
    const { podSandboxId: first } = await h.cri.runtime.runPodSandbox({ config: old });
    await h.cri.runtime.stopPodSandbox({ podSandboxId: first });
    await h.clock.advance(10);
    const { podSandboxId: second } = await h.cri.runtime.runPodSandbox({
      config: { ...old, metadata: { ...old.metadata, attempt: 1 } },
    });
    const source = criPodStatusSource(h.cri, { clock: h.clock });
    let status = await source.getPodStatus('uid-re', 're', 'default');
    expect(status.sandboxStatuses.map((s) => s.id)).toEqual([second, first]);
    expect(status.ips).toHaveLength(1);
    await h.cri.runtime.stopPodSandbox({ podSandboxId: second });
    status = await source.getPodStatus('uid-re', 're', 'default');
    expect(status.ips).toEqual([]);
  });

  it('the lister groups sandboxes and containers by pod UID, including orphan containers', async () => {
    const a = kubeletPod('a');
    const { podSandboxId } = await h.cri.runtime.runPodSandbox({ config: a });
    await h.fake.addContainer(podSandboxId, kubeletContainer(a, 'app'));
    await h.fake.addContainer(podSandboxId, kubeletContainer(a, 'init'), { start: false });
    // A container whose labels name a pod with no sandbox of its own (upstream makes a pod for it).
    await h.fake.addContainer(podSandboxId, kubeletContainer(kubeletPod('ghost'), 'x'));
    const pods = await criRuntimeLister(h.cri).listPods();
    const byId = new Map(pods.map((p) => [p.id, p]));
    expect(byId.get('uid-a')).toMatchObject({ name: 'a', namespace: 'default' });
    expect(byId.get('uid-a')?.sandboxes.map((s) => s.state)).toEqual(['running']);
    expect(
      byId
        .get('uid-a')
        ?.containers.map((c) => [c.name, c.state, c.hash])
        .sort(),
    ).toEqual([
      ['app', 'running', 0xabc123n],
      ['init', 'created', 0xabc123n],
    ]);
    expect(byId.get('uid-ghost')).toMatchObject({ name: 'ghost', sandboxes: [], createdAt: 0 });
    expect(await criRuntimeLister(h.cri).listPod?.('uid-a')).toMatchObject({ id: 'uid-a' });
    expect(await criRuntimeLister(h.cri).listPod?.('uid-none')).toBeUndefined();
  });
});

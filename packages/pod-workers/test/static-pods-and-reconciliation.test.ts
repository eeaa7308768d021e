import { describe, expect, it } from 'vitest';
import { createHarness, deferred, makePod } from './harness.js';

const staticPod = (uid: string) => makePod(uid, { name: 'etcd', namespace: 'kube-system', source: 'file' });

describe('static pods with the same full name', () => {
  it('never run at once: the second UID waits until the first terminated, then starts in order', async () => {
    const h = createHarness();
    const firstTerminated = deferred<undefined>();
    h.syncer.behavior = (c) =>
      c.uid === 's1' && c.method === 'syncTerminatedPod' ? firstTerminated.promise : undefined;
    h.workers.updatePod({ updateType: 'create', pod: staticPod('s1') });
    h.workers.updatePod({ updateType: 'create', pod: staticPod('s2') });
    h.workers.updatePod({ updateType: 'create', pod: staticPod('s3') });
    await h.settle();
    expect(h.syncer.methodsFor('s1')).toEqual(['syncPod']);
    expect(h.syncer.calls.filter((c) => c.uid !== 's1')).toHaveLength(0);
    // Denied pods are retried after the back-off period, as upstream.
    expect(h.queue.lastFor('s2')?.delayMs).toBe(10_000);
    expect(h.workers.getPodSyncStatus('s2')).toMatchObject({ startedAt: undefined, working: false });

    // s1 is edited away: it terminates; s2 must not start before s1 has finished.
    h.workers.updatePod({ updateType: 'kill', pod: staticPod('s1') });
    await h.settle();
    expect(h.workers.isPodForMirrorPodTerminatingByFullName('etcd_kube-system')).toBe(false); // terminated already
    h.workers.updatePod({ updateType: 'sync', pod: staticPod('s2') }); // the retry arriving early
    await h.settle();
    expect(h.syncer.calls.filter((c) => c.uid === 's2')).toHaveLength(0);

    firstTerminated.resolve(undefined);
    await h.settle();
    // s2 (first in line) starts at once when s1 finishes; s3 still waits.
    expect(h.syncer.methodsFor('s2')).toEqual(['syncPod']);
    expect(h.syncer.methodsFor('s3')).toEqual([]);
    const s1Done = h.syncer.callsFor('s1', 'syncTerminatedPod')[0]?.at ?? Number.NaN;
    expect(h.syncer.callsFor('s2')[0]?.at).toBeGreaterThanOrEqual(s1Done);
  });

  it('reports the started static pod as terminating for its mirror pod while it terminates', async () => {
    const h = createHarness();
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.method === 'syncTerminatingPod' ? gate.promise : undefined);
    h.workers.updatePod({ updateType: 'create', pod: staticPod('s1') });
    await h.settle();
    expect(h.workers.isPodForMirrorPodTerminatingByFullName('etcd_kube-system')).toBe(false);
    h.workers.updatePod({ updateType: 'kill', pod: staticPod('s1') });
    await h.settle();
    expect(h.workers.isPodForMirrorPodTerminatingByFullName('etcd_kube-system')).toBe(true);
    expect(h.workers.isPodForMirrorPodTerminatingByFullName('other_kube-system')).toBe(false);
    gate.resolve(undefined);
    await h.settle();
    expect(h.workers.isPodForMirrorPodTerminatingByFullName('etcd_kube-system')).toBe(false);
  });

  it('skips a waiting UID that was killed before it started: it finishes without any callback', async () => {
    const h = createHarness();
    let completed = false;
    h.workers.updatePod({ updateType: 'create', pod: staticPod('s1') });
    h.workers.updatePod({ updateType: 'create', pod: staticPod('s2') });
    h.workers.updatePod({ updateType: 'create', pod: staticPod('s3') });
    await h.settle();
    h.workers.updatePod({
      updateType: 'kill',
      pod: staticPod('s2'),
      killOptions: { onCompleted: () => (completed = true) },
    });
    await h.settle();
    expect(h.syncer.methodsFor('s2')).toEqual([]);
    expect(h.workers.getPodSyncStatus('s2')).toMatchObject({ finished: true, state: 'terminated' });
    expect(completed).toBe(true);
    h.workers.updatePod({ updateType: 'kill', pod: staticPod('s1') });
    await h.settle();
    expect(h.syncer.methodsFor('s3')).toEqual(['syncPod']);
  });

  it('reports how long the waiting static pod took to start in kubelet_pod_worker_start_duration_seconds', async () => {
    const promClient = await import('prom-client');
    const registry = new promClient.Registry();
    const h = createHarness({ metrics: { registry, promClient } });
    const startTime = h.clock.now();
    h.workers.updatePod({ updateType: 'create', pod: staticPod('s1'), startTime });
    h.workers.updatePod({ updateType: 'create', pod: staticPod('s2'), startTime });
    await h.settle();
    await h.clock.advance(3_000);
    h.workers.updatePod({ updateType: 'kill', pod: staticPod('s1') });
    await h.settle();
    const text = await registry.metrics();
    expect(text).toContain('kubelet_pod_worker_start_duration_seconds_sum 3');
    expect(text).toContain('kubelet_pod_worker_start_duration_seconds_count 2');
  });

  it('does not serialise non-static pods with the same full name (as upstream)', async () => {
    const h = createHarness();
    h.workers.updatePod({ updateType: 'create', pod: makePod('p1', { name: 'web' }) });
    h.workers.updatePod({ updateType: 'create', pod: makePod('p2', { name: 'web' }) });
    await h.settle();
    expect(h.syncer.calls.map((c) => c.uid).sort()).toEqual(['p1', 'p2']);
  });
});

describe('syncKnownPods', () => {
  it('reports each remaining worker with state, orphan, hasConfig and static', async () => {
    const h = createHarness();
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) =>
      c.uid === 'term' && c.method === 'syncTerminatingPod' ? gate.promise : undefined;
    h.workers.updatePod({ updateType: 'create', pod: makePod('run') });
    h.workers.updatePod({ updateType: 'create', pod: staticPod('st') });
    h.workers.updatePod({ updateType: 'kill', pod: makePod('term') });
    await h.settle();
    const result = h.workers.syncKnownPods([makePod('run'), staticPod('st'), makePod('term')]);
    expect(Object.fromEntries(result)).toEqual({
      run: { state: 'sync', orphan: false, hasConfig: true, static: false },
      st: { state: 'sync', orphan: false, hasConfig: true, static: true },
      term: { state: 'terminating', orphan: false, hasConfig: true, static: false },
    });
    gate.resolve(undefined);
    await h.settle();
  });

  it('forgets finished orphans, drops never-started orphans, terminates running orphans with 1 s', async () => {
    const h = createHarness();
    h.workers.updatePod({ updateType: 'kill', pod: makePod('finished') });
    h.workers.updatePod({ updateType: 'create', pod: makePod('running') });
    h.workers.updatePod({ updateType: 'create', pod: staticPod('holder') });
    h.workers.updatePod({ updateType: 'create', pod: staticPod('waiting') });
    await h.settle();
    expect(h.workers.getPodSyncStatus('waiting')?.startedAt).toBeUndefined();
    const result = h.workers.syncKnownPods([staticPod('holder')]);
    expect([...result.keys()].sort()).toEqual(['holder', 'running']);
    expect(result.get('running')).toMatchObject({ state: 'terminating', orphan: true });
    expect(h.workers.getPodSyncStatus('finished')).toBeUndefined();
    expect(h.workers.getPodSyncStatus('waiting')).toBeUndefined();
    await h.settle();
    expect(h.syncer.methodsFor('running')).toEqual(['syncPod', 'syncTerminatingPod', 'syncTerminatedPod']);
    expect(h.syncer.callsFor('running', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(1);
    expect(h.workers.getPodSyncStatus('running')?.deleted).toBe(true);
    // Next pass forgets it.
    expect(h.workers.syncKnownPods([staticPod('holder')]).has('running')).toBe(false);
  });

  it('purges a terminated UID that was re-created (restartRequested) so a new create starts it again', async () => {
    const h = createHarness();
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.method === 'syncTerminatingPod' ? gate.promise : undefined);
    const pod = staticPod('fixed');
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    h.workers.updatePod({ updateType: 'kill', pod });
    await h.settle();
    h.workers.updatePod({ updateType: 'create', pod });
    expect(h.workers.getPodSyncStatus('fixed')?.restartRequested).toBe(true);
    // Still terminating: kept.
    expect(h.workers.syncKnownPods([pod]).get('fixed')?.state).toBe('terminating');
    gate.resolve(undefined);
    await h.settle();
    expect(h.workers.syncKnownPods([pod]).has('fixed')).toBe(false);
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    expect(h.syncer.methodsFor('fixed')).toEqual([
      'syncPod',
      'syncTerminatingPod',
      'syncTerminatedPod',
      'syncPod',
    ]);
  });

  it('sets kubelet_working_pods by lifecycle, config and static', async () => {
    const promClient = await import('prom-client');
    const registry = new promClient.Registry();
    const h = createHarness({ metrics: { registry, promClient } });
    h.workers.updatePod({ updateType: 'create', pod: makePod('a') });
    h.workers.updatePod({ updateType: 'create', pod: staticPod('s') });
    await h.settle();
    h.workers.syncKnownPods([makePod('a'), staticPod('s')]);
    const text = await registry.metrics();
    expect(text).toContain('kubelet_working_pods{lifecycle="sync",config="desired",static="false"} 1');
    expect(text).toContain('kubelet_working_pods{lifecycle="sync",config="desired",static="true"} 1');
    expect(text).toContain('kubelet_working_pods{lifecycle="terminating",config="orphan",static="false"} 0');
    expect(text).toContain('kubelet_pod_worker_start_duration_seconds_count 0');
  });
});

describe('queries', () => {
  it('answer conservatively for unknown UIDs before the first syncKnownPods, and as gone after', () => {
    const h = createHarness();
    const w = h.workers;
    expect([
      w.couldHaveRunningContainers('x'),
      w.shouldPodBeFinished('x'),
      w.shouldPodContainersBeTerminating('x'),
    ]).toEqual([true, false, false]);
    expect([
      w.shouldPodRuntimeBeRemoved('x'),
      w.shouldPodContentBeRemoved('x'),
      w.isPodKnownTerminated('x'),
    ]).toEqual([false, false, false]);
    w.syncKnownPods([]);
    expect([
      w.couldHaveRunningContainers('x'),
      w.shouldPodBeFinished('x'),
      w.shouldPodContainersBeTerminating('x'),
    ]).toEqual([false, true, true]);
    expect([
      w.shouldPodRuntimeBeRemoved('x'),
      w.shouldPodContentBeRemoved('x'),
      w.isPodKnownTerminated('x'),
    ]).toEqual([true, true, false]);
    expect(w.isPodTerminationRequested('x')).toBe(false);
  });

  it('follow a pod through its lifecycle', async () => {
    const h = createHarness();
    const w = h.workers;
    const terminating = deferred<undefined>();
    const terminated = deferred<undefined>();
    h.syncer.behavior = (c) =>
      c.method === 'syncTerminatingPod'
        ? terminating.promise
        : c.method === 'syncTerminatedPod'
          ? terminated.promise
          : undefined;
    const pod = makePod('a', { deleted: true });
    const snapshot = () => ({
      requested: w.isPodTerminationRequested('a'),
      containersTerminating: w.shouldPodContainersBeTerminating('a'),
      couldRun: w.couldHaveRunningContainers('a'),
      knownTerminated: w.isPodKnownTerminated('a'),
      runtimeRemoved: w.shouldPodRuntimeBeRemoved('a'),
      contentRemoved: w.shouldPodContentBeRemoved('a'),
      finished: w.shouldPodBeFinished('a'),
    });
    w.updatePod({ updateType: 'create', pod: makePod('a') });
    await h.settle();
    w.updatePod({ updateType: 'update', pod });
    // Requested, but the worker has not observed it yet.
    expect(snapshot()).toMatchObject({ requested: true, containersTerminating: false, couldRun: true });
    await h.settle();
    expect(snapshot()).toEqual({
      requested: true,
      containersTerminating: true,
      couldRun: true,
      knownTerminated: false,
      runtimeRemoved: false,
      contentRemoved: false,
      finished: false,
    });
    terminating.resolve(undefined);
    await h.settle();
    expect(snapshot()).toEqual({
      requested: true,
      containersTerminating: true,
      couldRun: false,
      knownTerminated: true,
      runtimeRemoved: true,
      contentRemoved: true,
      finished: false,
    });
    terminated.resolve(undefined);
    await h.settle();
    expect(snapshot().finished).toBe(true);
  });
});

describe('runtime-only pods', () => {
  const running = { id: 'orphan', name: 'old', namespace: 'default' };

  it('are terminated with syncTerminatingRuntimePod, without status wait, then forgotten', async () => {
    const h = createHarness();
    h.workers.updatePod({ updateType: 'sync', runningPod: running });
    expect(h.workers.getPodSyncStatus('orphan')).toBeUndefined();
    h.workers.updatePod({ updateType: 'kill', runningPod: running });
    await h.settle();
    expect(h.syncer.methodsFor('orphan')).toEqual(['syncTerminatingRuntimePod']);
    expect(h.cache.reads).toHaveLength(0);
    expect(h.workers.getPodSyncStatus('orphan')).toMatchObject({
      finished: true,
      deleted: true,
      observedRuntime: true,
    });
    expect(h.workers.syncKnownPods([]).has('orphan')).toBe(false);
  });

  it('use the known pod spec instead when one was seen for the UID', async () => {
    const h = createHarness();
    h.workers.updatePod({ updateType: 'create', pod: makePod('orphan') });
    await h.settle();
    h.workers.updatePod({ updateType: 'kill', runningPod: running });
    await h.settle();
    expect(h.syncer.methodsFor('orphan')).toEqual(['syncPod', 'syncTerminatingPod', 'syncTerminatedPod']);
    // Seen in the runtime without config: it counts as deleted, so its content goes too.
    expect(h.workers.getPodSyncStatus('orphan')).toMatchObject({ deleted: true, observedRuntime: true });
    expect(h.workers.shouldPodContentBeRemoved('orphan')).toBe(true);
  });

  it('ignore a stale runtime-pod kill while the pod is terminated but not finished', async () => {
    const h = createHarness();
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.method === 'syncTerminatedPod' ? gate.promise : undefined);
    h.workers.updatePod({ updateType: 'kill', pod: makePod('orphan') });
    await h.settle();
    expect(h.workers.isPodKnownTerminated('orphan')).toBe(true);
    h.workers.updatePod({ updateType: 'kill', runningPod: running });
    expect(h.workers.getPodSyncStatus('orphan')?.working).toBe(true); // still busy with syncTerminatedPod only
    gate.resolve(undefined);
    await h.settle();
    expect(h.syncer.methodsFor('orphan')).toEqual(['syncTerminatingPod', 'syncTerminatedPod']);
  });
});

describe('after an agent restart', () => {
  it('records a terminal pod with no running containers as terminated: only syncTerminatedPod runs', async () => {
    const h = createHarness();
    h.cache.runtimeTerminal.add('done');
    h.workers.updatePod({ updateType: 'sync', pod: makePod('done', { phase: 'Failed' }) });
    expect(h.workers.isPodKnownTerminated('done')).toBe(true);
    await h.settle();
    expect(h.syncer.methodsFor('done')).toEqual(['syncTerminatedPod']);
  });

  it('terminates a terminal pod whose containers still run', async () => {
    const h = createHarness();
    h.workers.updatePod({ updateType: 'sync', pod: makePod('done', { phase: 'Failed' }) });
    expect(h.workers.isPodKnownTerminated('done')).toBe(false);
    await h.settle();
    expect(h.syncer.methodsFor('done')).toEqual(['syncTerminatingPod', 'syncTerminatedPod']);
  });
});

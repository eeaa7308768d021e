import { describe, expect, it } from 'vitest';
import type { PodLifecycleState } from '../src/index.js';
import { InvalidPodUpdateError } from '../src/index.js';
import { createHarness, deferred, makePod } from './harness.js';

describe('pod worker lifecycle', () => {
  it('runs syncPod for a new pod with the update type, mirror pod and the cached status', async () => {
    const h = createHarness();
    const pod = makePod('a');
    const mirror = makePod('a-mirror');
    h.workers.updatePod({ updateType: 'create', pod, mirrorPod: mirror });
    await h.settle();
    const [call] = h.syncer.calls;
    expect(call).toMatchObject({ method: 'syncPod', uid: 'a', updateType: 'create', mirrorPod: mirror });
    expect(call?.status).toEqual({ uid: 'a', observedAt: h.clock.now() });
    expect(h.workers.getPodSyncStatus('a')).toMatchObject({
      state: 'sync',
      working: false,
      fullname: 'pod-a_default',
    });
  });

  it('moves sync → terminating → terminated → finished on a kill, emitting each state once', async () => {
    const h = createHarness();
    const states: PodLifecycleState[] = [];
    h.workers.on('stateChange', (e) => states.push(e.state));
    const pod = makePod('a', { terminationGracePeriodSeconds: 20 });
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    h.workers.updatePod({ updateType: 'kill', pod });
    await h.settle();
    expect(h.syncer.methodsFor('a')).toEqual(['syncPod', 'syncTerminatingPod', 'syncTerminatedPod']);
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(20);
    expect(states).toEqual(['terminating', 'terminated', 'finished']);
    const status = h.workers.getPodSyncStatus('a');
    expect(status).toMatchObject({
      state: 'terminated',
      finished: true,
      startedTerminating: true,
      working: false,
    });
    expect(status?.terminatingAt).toBeDefined();
    expect(status?.terminatedAt).toBeDefined();
  });

  it('ignores every update once finished, until syncKnownPods forgets the UID', async () => {
    const h = createHarness();
    const pod = makePod('a');
    h.workers.updatePod({ updateType: 'kill', pod });
    await h.settle();
    const before = h.syncer.calls.length;
    h.workers.updatePod({ updateType: 'update', pod });
    h.workers.updatePod({ updateType: 'sync', pod });
    await h.settle();
    expect(h.syncer.calls.length).toBe(before);
    h.workers.syncKnownPods([]);
    expect(h.workers.getPodSyncStatus('a')).toBeUndefined();
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    expect(h.syncer.calls.at(-1)).toMatchObject({ method: 'syncPod', updateType: 'create' });
  });

  it('starts terminating on a deletion timestamp, a terminal phase, or syncPod saying terminal', async () => {
    const h = createHarness();
    h.workers.updatePod({ updateType: 'update', pod: makePod('del', { deleted: true }) });
    h.workers.updatePod({ updateType: 'update', pod: makePod('done', { phase: 'Succeeded' }) });
    h.syncer.behavior = (c) => c.uid === 'natural';
    h.workers.updatePod({ updateType: 'create', pod: makePod('natural') });
    await h.settle();
    expect(h.syncer.methodsFor('del')).toEqual(['syncTerminatingPod', 'syncTerminatedPod']);
    expect(h.syncer.methodsFor('done')).toEqual(['syncTerminatingPod', 'syncTerminatedPod']);
    expect(h.syncer.methodsFor('natural')).toEqual(['syncPod', 'syncTerminatingPod', 'syncTerminatedPod']);
    // The pod ended by itself and no kill gave a grace period: the callback uses the pod's own.
    expect(h.syncer.callsFor('natural', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBeUndefined();
    expect(h.workers.getPodSyncStatus('del')?.deleted).toBe(true);
    expect(h.workers.getPodSyncStatus('done')?.deleted).toBe(false);
    // A phase transition requeues at once.
    expect(h.queue.adds.filter((a) => a.uid === 'natural').map((a) => a.delayMs)).toContain(0);
  });

  it('never goes back to syncPod after termination was requested, whatever updates follow', async () => {
    const h = createHarness();
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.method === 'syncTerminatingPod' ? gate.promise : undefined);
    const pod = makePod('a');
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    h.workers.updatePod({ updateType: 'kill', pod });
    await h.settle();
    for (const updateType of ['update', 'sync', 'update'] as const) h.workers.updatePod({ updateType, pod });
    gate.resolve(undefined);
    await h.settle();
    const methods = h.syncer.methodsFor('a');
    expect(methods.indexOf('syncPod')).toBe(0);
    expect(methods.slice(1).every((m) => m !== 'syncPod')).toBe(true);
    expect(methods.at(-1)).toBe('syncTerminatedPod');
  });

  it('rejects an update that names no pod with a typed error and keeps the other workers', async () => {
    const h = createHarness();
    h.workers.updatePod({ updateType: 'create', pod: makePod('ok') });
    expect(() => h.workers.updatePod({ updateType: 'create' })).toThrow(InvalidPodUpdateError);
    expect(() => h.workers.updatePod({ updateType: 'create', pod: { metadata: { name: 'x' } } })).toThrow(
      /has no metadata.uid/,
    );
    await h.settle();
    expect(h.syncer.methodsFor('ok')).toEqual(['syncPod']);
  });
});

describe('coalescing', () => {
  it('hands a busy worker only the newest of the updates that arrived meanwhile', async () => {
    const h = createHarness();
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.updateType === 'create' ? gate.promise : undefined);
    h.workers.updatePod({ updateType: 'create', pod: makePod('a') });
    await h.settle();
    for (let i = 1; i <= 5; i++) {
      const pod = makePod('a');
      pod.metadata = { ...pod.metadata, labels: { v: String(i) } };
      h.workers.updatePod({ updateType: 'update', pod });
    }
    gate.resolve(undefined);
    await h.settle();
    const syncs = h.syncer.callsFor('a', 'syncPod');
    expect(syncs).toHaveLength(2);
    expect(syncs[1]?.pod?.metadata?.labels).toEqual({ v: '5' });
  });

  it('does not lose a kill to a later sync or update that coalesces with it', async () => {
    const h = createHarness();
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.updateType === 'create' ? gate.promise : undefined);
    const pod = makePod('a');
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    h.workers.updatePod({
      updateType: 'kill',
      pod,
      killOptions: { podTerminationGracePeriodSecondsOverride: 5 },
    });
    h.workers.updatePod({ updateType: 'sync', pod });
    h.workers.updatePod({ updateType: 'update', pod });
    gate.resolve(undefined);
    await h.settle();
    expect(h.syncer.methodsFor('a')).toEqual(['syncPod', 'syncTerminatingPod', 'syncTerminatedPod']);
    // The grace period of the kill survives the later updates.
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(5);
  });

  it('runs a coalesced update once per wake-up and never two callbacks for one pod at once', async () => {
    const h = createHarness();
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.updateType === 'create' ? gate.promise : undefined);
    h.workers.updatePod({ updateType: 'create', pod: makePod('a') });
    await h.settle();
    for (let i = 0; i < 100; i++) h.workers.updatePod({ updateType: 'sync', pod: makePod('a') });
    expect(h.workers.getPodSyncStatus('a')?.working).toBe(true);
    gate.resolve(undefined);
    await h.settle();
    expect(h.syncer.callsFor('a', 'syncPod').map((c) => c.updateType)).toEqual(['create', 'sync']);
    expect(h.syncer.violations).toEqual([]);
    expect(h.workers.getPodSyncStatus('a')?.working).toBe(false);
  });

  it('keeps the oldest start time of coalesced updates for the latency metric', async () => {
    const promClient = await import('prom-client');
    const registry = new promClient.Registry();
    const h = createHarness({ metrics: { registry, promClient } });
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.updateType === 'create' ? gate.promise : undefined);
    const pod = makePod('a');
    const t0 = h.clock.now();
    h.workers.updatePod({ updateType: 'create', pod, startTime: t0 });
    await h.settle();
    await h.clock.advance(1000);
    h.workers.updatePod({ updateType: 'update', pod, startTime: h.clock.now() });
    await h.clock.advance(1000);
    h.workers.updatePod({ updateType: 'update', pod, startTime: h.clock.now() });
    await h.clock.advance(3000);
    gate.resolve(undefined);
    await h.settle();
    const text = await registry.metrics();
    // Oldest pending start (t0 + 1 s) to processing (t0 + 5 s): 4 s.
    expect(text).toContain('kubelet_pod_worker_duration_seconds_sum{operation_type="update"} 4');
    expect(text).toContain('kubelet_pod_worker_duration_seconds_count{operation_type="update"} 1');
    // The create waited 5 s in its sync: observed when it completed.
    expect(text).toContain('kubelet_pod_worker_duration_seconds_sum{operation_type="create"} 5');
    // The worker started right away after the create was handed over.
    expect(text).toContain('kubelet_pod_worker_start_duration_seconds_sum 0');
  });
});

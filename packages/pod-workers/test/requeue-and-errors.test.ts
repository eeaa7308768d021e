import { WorkQueue } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';
import { PodWorkers } from '../src/index.js';
import { createHarness, FakeStatusCache, makePod, RecordingSyncer } from './harness.js';

describe('requeue timing', () => {
  it.each([
    ['success: resync interval', undefined, 0, 60_000],
    ['success: jittered up to 1.5 × interval', undefined, 0.999, 60_000 * 1.4995],
    ['error: backOffPeriod 10 s', new Error('boom'), 0, 10_000],
    ['error: jittered up to 15 s', new Error('boom'), 0.5, 12_500],
    ['network not ready: 1 s', new Error('network is not ready: cni config uninitialized'), 0, 1_000],
    ['network not ready: jittered up to 1.5 s', new Error('network is not ready: x'), 0.999, 1_499.5],
  ])('%s', async (_, error, random, expectedMs) => {
    const h = createHarness({ random: () => random });
    h.syncer.behavior = () => {
      if (error) throw error;
      return undefined;
    };
    h.workers.updatePod({ updateType: 'create', pod: makePod('a') });
    await h.settle();
    expect(h.queue.lastFor('a')?.delayMs).toBeCloseTo(expectedMs, 6);
  });

  it('requeues a successful sync sooner when it asks (a back-off expiring), never later than the resync', async () => {
    const h = createHarness();
    h.syncer.behavior = (c) => ({ isTerminal: false, requeueAfterMs: c.uid === 'soon' ? 4_000 : 90_000 });
    h.workers.updatePod({ updateType: 'create', pod: makePod('soon') });
    h.workers.updatePod({ updateType: 'create', pod: makePod('late') });
    await h.settle();
    expect(h.queue.lastFor('soon')?.delayMs).toBe(4_000);
    expect(h.queue.lastFor('late')?.delayMs).toBe(60_000);
  });

  it('honours resyncIntervalMs and backOffPeriodMs options', async () => {
    const h = createHarness({ resyncIntervalMs: 5_000, backOffPeriodMs: 2_000 });
    h.workers.updatePod({ updateType: 'create', pod: makePod('ok') });
    h.syncer.behavior = (c) => {
      if (c.uid === 'bad') throw new Error('boom');
      return undefined;
    };
    h.workers.updatePod({ updateType: 'create', pod: makePod('bad') });
    await h.settle();
    expect(h.queue.lastFor('ok')?.delayMs).toBe(5_000);
    expect(h.queue.lastFor('bad')?.delayMs).toBe(2_000);
  });

  it('retries a failing pod after a fixed 10 s forever by default (no per-pod backoff upstream)', async () => {
    const h = createHarness();
    h.syncer.behavior = () => {
      throw new Error('boom');
    };
    const pod = makePod('a');
    for (let i = 0; i < 5; i++) {
      h.workers.updatePod({ updateType: 'sync', pod });
      await h.settle();
    }
    expect(h.queue.adds.map((a) => a.delayMs)).toEqual([10_000, 10_000, 10_000, 10_000, 10_000]);
  });

  it('backs off exponentially per pod with errorBackoff, and a success resets it', async () => {
    const h = createHarness({ errorBackoff: { capMs: 60_000 } });
    let fail = true;
    h.syncer.behavior = (c) => {
      if (fail && c.uid === 'a') throw new Error('boom');
      return undefined;
    };
    const pod = makePod('a');
    for (let i = 0; i < 5; i++) {
      h.workers.updatePod({ updateType: 'sync', pod });
      await h.settle();
    }
    // Another pod's errors do not share the sequence.
    h.workers.updatePod({ updateType: 'sync', pod: makePod('b') });
    await h.settle();
    expect(h.queue.adds.filter((a) => a.uid === 'a').map((a) => a.delayMs)).toEqual([
      10_000, 20_000, 40_000, 60_000, 60_000,
    ]);
    fail = false;
    h.workers.updatePod({ updateType: 'sync', pod });
    await h.settle();
    expect(h.queue.lastFor('a')?.delayMs).toBe(60_000); // resync after success
    fail = true;
    h.workers.updatePod({ updateType: 'sync', pod });
    await h.settle();
    expect(h.queue.lastFor('a')?.delayMs).toBe(10_000);
  });

  it('network-not-ready retries stay at 1 s even with errorBackoff', async () => {
    const h = createHarness({ errorBackoff: {} });
    h.syncer.behavior = () => {
      throw new Error('network is not ready: x');
    };
    for (let i = 0; i < 3; i++) {
      h.workers.updatePod({ updateType: 'sync', pod: makePod('a') });
      await h.settle();
    }
    expect(h.queue.adds.map((a) => a.delayMs)).toEqual([1_000, 1_000, 1_000]);
  });

  it('drives resyncs end to end through a core WorkQueue and the fake clock', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const syncer = new RecordingSyncer(clock);
    const workQueue = new WorkQueue<string>({ clock });
    const workers = new PodWorkers({
      syncer,
      statusProvider: new FakeStatusCache(clock),
      workQueue,
      clock,
      random: () => 0,
    });
    const pod = makePod('a');
    // The kubelet side: due UIDs become sync updates.
    const loop = (async () => {
      for await (const uid of workQueue) {
        workers.updatePod({ updateType: 'sync', pod });
        workQueue.done(uid);
      }
    })();
    workers.updatePod({ updateType: 'create', pod });
    await clock.advance(0);
    expect(syncer.calls.map((c) => c.at)).toEqual([0]);
    await clock.advance(59_999);
    expect(syncer.calls).toHaveLength(1);
    await clock.advance(1);
    await clock.advance(60_000);
    expect(syncer.calls.map((c) => [c.updateType, c.at])).toEqual([
      ['create', 0],
      ['sync', 60_000],
      ['sync', 120_000],
    ]);
    workQueue.shutDown();
    await loop;
  });
});

describe('a callback that throws', () => {
  it('is logged and reported as syncError, and the worker keeps serving updates', async () => {
    const h = createHarness();
    const errors: string[] = [];
    h.workers.on('syncError', (e) =>
      errors.push(`${e.uid}:${e.operation}:${e.error.message}:${e.retryInMs}`),
    );
    let calls = 0;
    h.syncer.behavior = () => {
      calls++;
      if (calls === 1) throw new Error('first sync fails');
      if (calls === 2) throw 'a string, not an Error';
      return undefined;
    };
    const pod = makePod('a');
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    h.workers.updatePod({ updateType: 'sync', pod });
    await h.settle();
    h.workers.updatePod({ updateType: 'sync', pod });
    await h.settle();
    expect(errors).toEqual([
      'a:syncPod:first sync fails:10000',
      'a:syncPod:non-Error thrown: a string, not an Error:10000',
    ]);
    expect(h.logger.find('Error syncing pod', 'error')).toHaveLength(2);
    expect(h.syncer.callsFor('a')).toHaveLength(3);
    expect(h.queue.lastFor('a')?.delayMs).toBe(60_000);
  });

  it('a failing termination is retried; the pod is never reported terminated before it succeeds', async () => {
    const h = createHarness();
    let failures = 2;
    h.syncer.behavior = (c) => {
      if (c.method === 'syncTerminatingPod' && failures-- > 0) throw new Error('kill failed');
      return undefined;
    };
    const pod = makePod('a');
    h.workers.updatePod({ updateType: 'kill', pod });
    await h.settle();
    expect(h.workers.isPodKnownTerminated('a')).toBe(false);
    expect(h.workers.couldHaveRunningContainers('a')).toBe(true);
    // The kubelet turns the due requeue into a sync update; the worker stays terminating.
    h.workers.updatePod({ updateType: 'sync', pod });
    await h.settle();
    h.workers.updatePod({ updateType: 'sync', pod });
    await h.settle();
    expect(h.syncer.methodsFor('a')).toEqual([
      'syncTerminatingPod',
      'syncTerminatingPod',
      'syncTerminatingPod',
      'syncTerminatedPod',
    ]);
    expect(h.workers.shouldPodBeFinished('a')).toBe(true);
  });

  it('a failed status read records FailedSync and retries after the back-off', async () => {
    const events: string[] = [];
    const h = createHarness({
      recorder: { event: (_p, type, reason, msg) => events.push(`${type}/${reason}/${msg}`) },
    });
    h.cache.failNext = new Error('cache closed');
    h.workers.updatePod({ updateType: 'create', pod: makePod('a') });
    await h.settle();
    expect(events).toEqual(['Warning/FailedSync/error determining status: cache closed']);
    expect(h.syncer.calls).toHaveLength(0);
    expect(h.queue.lastFor('a')?.delayMs).toBe(10_000);
  });

  it('an event listener that throws is logged and does not break the worker', async () => {
    const h = createHarness();
    h.workers.on('stateChange', () => {
      throw new Error('listener bug');
    });
    h.workers.updatePod({ updateType: 'kill', pod: makePod('a') });
    await h.settle();
    expect(h.workers.shouldPodBeFinished('a')).toBe(true);
    expect(h.logger.find('event listener threw', 'error').length).toBeGreaterThan(0);
  });
});

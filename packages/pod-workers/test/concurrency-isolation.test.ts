import { InvalidOptionsError } from '@nodeagent/core';
import { describe, expect, it } from 'vitest';
import { PodWorkers } from '../src/index.js';
import { createHarness, deferred, makePod, untilAborted } from './harness.js';

const N = 1_000;

describe('global concurrency limit', () => {
  it('one pod whose sync hangs among 1,000: every other pod completes (limit 8)', async () => {
    const h = createHarness({ concurrency: 8 });
    h.syncer.behavior = (c) => (c.uid === 'stuck' ? new Promise<undefined>(() => {}) : undefined);
    h.workers.updatePod({ updateType: 'create', pod: makePod('stuck') });
    for (let i = 0; i < N - 1; i++) h.workers.updatePod({ updateType: 'create', pod: makePod(`p${i}`) });
    await h.settle();
    const done = new Set(h.syncer.calls.map((c) => c.uid));
    expect(done.size).toBe(N);
    // Each finished pod was requeued for its resync; the stuck one was not.
    expect(h.queue.adds.length).toBe(N - 1);
    expect(h.queue.lastFor('stuck')).toBeUndefined();
    expect(h.syncer.maxConcurrent).toBeLessThanOrEqual(8);
    expect(h.syncer.violations).toEqual([]);
  });

  it('with a limit of 1, a hung sync releases its slot after maxSlotHoldMs and the others complete', async () => {
    const h = createHarness({ concurrency: 1, maxSlotHoldMs: 5_000 });
    const slow: string[] = [];
    h.workers.on('slowSync', (e) => slow.push(e.uid));
    h.syncer.behavior = (c) => (c.uid === 'stuck' ? new Promise<undefined>(() => {}) : undefined);
    h.workers.updatePod({ updateType: 'create', pod: makePod('stuck') });
    for (let i = 0; i < N - 1; i++) h.workers.updatePod({ updateType: 'create', pod: makePod(`p${i}`) });
    await h.settle();
    expect(h.syncer.calls).toHaveLength(1);
    await h.clock.advance(4_999);
    expect(h.syncer.calls).toHaveLength(1);
    await h.clock.advance(1);
    expect(new Set(h.syncer.calls.map((c) => c.uid)).size).toBe(N);
    expect(slow).toEqual(['stuck']);
    expect(h.logger.find('Pod sync is slow', 'warn')).toHaveLength(1);
  });

  it('never runs more callbacks at once than the limit, and serializes per pod', async () => {
    const h = createHarness({ concurrency: 3 });
    const gates = new Map<string, ReturnType<typeof deferred<undefined>>>();
    h.syncer.behavior = (c) => {
      const d = deferred<undefined>();
      gates.set(`${c.uid}:${h.syncer.callsFor(c.uid).length}`, d);
      return d.promise;
    };
    for (let i = 0; i < 10; i++) h.workers.updatePod({ updateType: 'create', pod: makePod(`p${i}`) });
    await h.settle();
    expect(h.syncer.calls).toHaveLength(3);
    for (let round = 0; round < 10; round++) {
      for (const [key, d] of gates) {
        gates.delete(key);
        d.resolve(undefined);
      }
      await h.settle();
    }
    expect(h.syncer.calls).toHaveLength(10);
    expect(h.syncer.maxConcurrent).toBe(3);
  });

  it('a pod aborted while waiting for a slot leaves the queue and terminates once a slot frees', async () => {
    const h = createHarness({ concurrency: 1 });
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) =>
      c.uid === 'first' ? gate.promise : c.method === 'syncPod' ? untilAborted(c.ctx.signal) : undefined;
    h.workers.updatePod({ updateType: 'create', pod: makePod('first') });
    h.workers.updatePod({ updateType: 'create', pod: makePod('waiting') });
    await h.settle();
    h.workers.updatePod({ updateType: 'kill', pod: makePod('waiting') });
    await h.settle();
    expect(h.syncer.methodsFor('waiting')).toEqual([]);
    gate.resolve(undefined);
    await h.settle();
    // The queued syncPod never ran: it was aborted before getting a slot.
    expect(h.syncer.methodsFor('waiting')).toEqual(['syncTerminatingPod', 'syncTerminatedPod']);
  });

  it('rejects a limit below 1', () => {
    const h = createHarness();
    expect(
      () => new PodWorkers({ syncer: h.syncer, statusProvider: h.cache, workQueue: h.queue, concurrency: 0 }),
    ).toThrow(InvalidOptionsError);
  });
});

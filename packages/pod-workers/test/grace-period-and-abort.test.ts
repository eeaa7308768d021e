import { describe, expect, it } from 'vitest';
import { calculateEffectiveGracePeriod, killPodWaitTimeoutSeconds } from '../src/index.js';
import { createHarness, deferred, makePod, untilAborted } from './harness.js';

describe('calculateEffectiveGracePeriod', () => {
  it.each([
    // [name, current, deletionGrace, override, spec, expected, shortened]
    ['spec only', 0, undefined, undefined, 45, 45, false],
    ['spec absent: API default 30', 0, undefined, undefined, undefined, 30, false],
    ['deletion grace beats spec', 0, 10, undefined, 45, 10, false],
    ['deletion grace may exceed spec (it is the API word)', 0, 60, undefined, 45, 60, false],
    ['override shorter than deletion grace wins', 0, 10, 3, 45, 3, false],
    ['override longer than deletion grace loses', 0, 10, 20, 45, 10, false],
    ['override alone beats spec', 0, undefined, 5, 45, 5, false],
    ['override alone may be longer than spec', 0, undefined, 60, 45, 60, false],
    // Upstream's Test_calculateEffectiveGracePeriod: "deletion grace 0" and "override 0" give 1.
    ['deletion grace 0 (force delete) gives the 1 s minimum, not the spec', 0, 0, undefined, 45, 1, false],
    ['override 0 gives the 1 s minimum, not the spec', 0, undefined, 0, 45, 1, false],
    ['override 0 shrinks a running termination to 1 s', 30, undefined, 0, 45, 1, true],
    ['deletion grace 0 shrinks a running termination to 1 s', 30, 0, undefined, 45, 1, true],
    ['spec 0 is clamped to 1', 0, undefined, undefined, 0, 1, false],
    ['negative override is clamped to 1', 0, undefined, -5, 45, 1, false],
    ['current value is kept when nothing is shorter', 20, 30, 25, 45, 20, false],
    ['current value never grows from the spec', 20, undefined, undefined, 45, 20, false],
    ['deletion grace shrinks the current value', 20, 5, undefined, 45, 5, true],
    ['override shrinks the current value', 20, undefined, 2, 45, 2, true],
    ['shrinking to below 1 gives 1', 20, undefined, -1, 45, 1, true],
    ['equal values are not a shrink', 5, 5, 5, 45, 5, false],
  ] as const)('%s', (_, current, deletionGrace, override, spec, expected, shortened) => {
    const pod = makePod('a', {
      ...(deletionGrace !== undefined ? { deletionGracePeriodSeconds: deletionGrace } : {}),
      ...(spec !== undefined ? { terminationGracePeriodSeconds: spec } : {}),
    });
    expect(calculateEffectiveGracePeriod(current, pod, override)).toEqual({
      gracePeriodSeconds: expected,
      shortened,
    });
  });

  it.each([
    [30, undefined, 45],
    [1, undefined, 10],
    [3, undefined, 10],
    [7, undefined, 10],
    [25, undefined, 37],
    [30, 60, 90],
    [30, 0, 10],
    [undefined, undefined, 10],
  ])('kill wait timeout: spec %s, override %s → %s s', (spec, override, expected) => {
    const pod = makePod('a', spec !== undefined ? { terminationGracePeriodSeconds: spec } : {});
    expect(killPodWaitTimeoutSeconds(pod, override)).toBe(expected);
  });
});

describe('grace period in the workers', () => {
  it('only shrinks across kills and restarts the running termination with the shorter value', async () => {
    const h = createHarness();
    const firstTermination = deferred<undefined>();
    h.syncer.behavior = (c) => {
      if (c.method !== 'syncTerminatingPod') return undefined;
      if (c.gracePeriodSeconds === 30)
        return Promise.race([firstTermination.promise, untilAborted(c.ctx.signal)]);
      return undefined;
    };
    const pod = makePod('a', { terminationGracePeriodSeconds: 30 });
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    h.workers.updatePod({ updateType: 'kill', pod });
    await h.settle();
    const running = h.syncer.callsFor('a', 'syncTerminatingPod')[0];
    expect(running?.gracePeriodSeconds).toBe(30);
    // A longer override is ignored and does not abort.
    h.workers.updatePod({
      updateType: 'kill',
      pod,
      killOptions: { podTerminationGracePeriodSecondsOverride: 60 },
    });
    await h.settle();
    expect(running?.ctx.signal.aborted).toBe(false);
    expect(h.workers.getPodSyncStatus('a')?.gracePeriodSeconds).toBe(30);
    // A shorter one aborts the running termination, which restarts with it.
    h.workers.updatePod({
      updateType: 'kill',
      pod,
      killOptions: { podTerminationGracePeriodSecondsOverride: 2 },
    });
    await h.settle();
    expect(running?.ctx.signal.aborted).toBe(true);
    expect(h.syncer.callsFor('a', 'syncTerminatingPod').map((c) => c.gracePeriodSeconds)).toEqual([30, 2]);
    expect(h.syncer.methodsFor('a').at(-1)).toBe('syncTerminatedPod');
    expect(h.syncer.violations).toEqual([]);
  });

  it('uses the deletion grace period of a deleted pod', async () => {
    const h = createHarness();
    h.workers.updatePod({
      updateType: 'update',
      pod: makePod('a', { deletionGracePeriodSeconds: 7, terminationGracePeriodSeconds: 30 }),
    });
    await h.settle();
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(7);
  });
});

describe('aborting a running sync', () => {
  it('aborts a long syncPod when termination is requested; termination then runs at once', async () => {
    const h = createHarness();
    h.syncer.behavior = (c) => (c.method === 'syncPod' ? untilAborted(c.ctx.signal) : undefined);
    const pod = makePod('a');
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    const sync = h.syncer.callsFor('a', 'syncPod')[0];
    expect(sync?.ctx.signal.aborted).toBe(false);
    h.workers.updatePod({ updateType: 'kill', pod });
    expect(sync?.ctx.signal.aborted).toBe(true);
    expect(sync?.ctx.signal.reason).toMatchObject({ name: 'AbortError' });
    await h.settle();
    expect(h.syncer.methodsFor('a')).toEqual(['syncPod', 'syncTerminatingPod', 'syncTerminatedPod']);
    // An abort is not an error: no syncError event, no error log.
    expect(h.logger.find('Error syncing pod')).toHaveLength(0);
    // The next callbacks got a fresh, unaborted signal.
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.ctx.signal.aborted).toBe(false);
  });

  it('a sync that fails with an AbortError (a cancellation) is not logged as an error, as context.Canceled upstream', async () => {
    const h = createHarness();
    h.syncer.behavior = (c) => {
      if (c.method !== 'syncPod') return undefined;
      const err = new Error('the host is stopping');
      err.name = 'AbortError';
      throw err;
    };
    h.workers.updatePod({ updateType: 'create', pod: makePod('a') });
    await h.settle();
    expect(h.syncer.callsFor('a', 'syncPod')).toHaveLength(1);
    expect(h.logger.find('Error syncing pod')).toHaveLength(0);
    expect(h.logger.find('Sync exited with context cancellation error', 'debug')).toHaveLength(1);
  });

  it('aborts the wait for a newer status when termination is requested', async () => {
    const h = createHarness();
    const pod = makePod('a');
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    h.cache.fresh = false;
    h.workers.updatePod({ updateType: 'sync', pod });
    await h.settle();
    expect(h.syncer.calls).toHaveLength(1); // waiting for a newer status
    h.workers.updatePod({ updateType: 'kill', pod });
    await h.settle();
    // The worker moved on to terminating, and waits for a status newer than its last sync.
    expect(h.cache.reads.at(-1)).toMatchObject({ uid: 'a', minTimeMs: h.syncer.calls[0]?.at });
    h.cache.publish('a');
    await h.settle();
    expect(h.syncer.methodsFor('a')).toEqual(['syncPod', 'syncTerminatingPod', 'syncTerminatedPod']);
  });

  it('does not abort a running sync for a plain update', async () => {
    const h = createHarness();
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.updateType === 'create' ? gate.promise : undefined);
    h.workers.updatePod({ updateType: 'create', pod: makePod('a') });
    await h.settle();
    h.workers.updatePod({ updateType: 'update', pod: makePod('a') });
    expect(h.syncer.calls[0]?.ctx.signal.aborted).toBe(false);
    gate.resolve(undefined);
    await h.settle();
  });
});

describe('killPodAndWait', () => {
  it('resolves when syncTerminatingPod finishes and passes evict, grace and the status func', async () => {
    const h = createHarness();
    const pod = makePod('a', { terminationGracePeriodSeconds: 30 });
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    const statusFn = () => {};
    let done = false;
    const killed = h.workers
      .killPodAndWait(pod, { evict: true, gracePeriodSecondsOverride: 4, podStatusFunc: statusFn })
      .then(() => {
        done = true;
      });
    await h.settle();
    await killed;
    expect(done).toBe(true);
    const term = h.syncer.callsFor('a', 'syncTerminatingPod')[0];
    expect(term?.gracePeriodSeconds).toBe(4);
    expect(term?.podStatusFn).toBe(statusFn);
    expect(h.workers.getPodSyncStatus('a')?.evicted).toBe(true);
    expect(h.workers.shouldPodContentBeRemoved('a')).toBe(true);
  });

  it('times out after max(1.5 × grace, 10 s), records ExceededGracePeriod, and the kill goes on', async () => {
    const events: string[] = [];
    const h = createHarness({
      recorder: { event: (_pod, type, reason) => events.push(`${type}/${reason}`) },
    });
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.method === 'syncTerminatingPod' ? gate.promise : undefined);
    const pod = makePod('a', { terminationGracePeriodSeconds: 30 });
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    let outcome: unknown = 'pending';
    const timeouts: number[] = [];
    h.workers.on('exceededGracePeriod', (e) => timeouts.push(e.timeoutSeconds));
    h.workers.killPodAndWait(pod).then(
      () => {
        outcome = 'resolved';
      },
      (err: unknown) => {
        outcome = err;
      },
    );
    await h.clock.advance(44_999);
    expect(outcome).toBe('pending');
    await h.clock.advance(1);
    expect(outcome).toMatchObject({ name: 'KillPodTimeoutError', podUid: 'a', timeoutSeconds: 45 });
    expect(events).toEqual(['Warning/ExceededGracePeriod']);
    expect(timeouts).toEqual([45]);
    gate.resolve(undefined);
    await h.settle();
    expect(h.workers.shouldPodBeFinished('a')).toBe(true);
  });

  it("an override of 0 gives the containers 1 s, within the 10 s wait (not the pod's 20 s)", async () => {
    const h = createHarness();
    const pod = makePod('a', { terminationGracePeriodSeconds: 20 });
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    let outcome: unknown = 'pending';
    h.workers.killPodAndWait(pod, { gracePeriodSecondsOverride: 0 }).then(
      () => {
        outcome = 'resolved';
      },
      (err: unknown) => {
        outcome = err;
      },
    );
    await h.settle();
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(1);
    expect(h.workers.getPodSyncStatus('a')?.gracePeriodSeconds).toBe(1);
    expect(outcome).toBe('resolved');
  });

  it("a force delete (deletion grace 0) terminates with 1 s, not the spec's 30 s", async () => {
    const h = createHarness();
    h.workers.updatePod({ updateType: 'create', pod: makePod('a', { terminationGracePeriodSeconds: 30 }) });
    await h.settle();
    const deleted = makePod('a', { terminationGracePeriodSeconds: 30, deletionGracePeriodSeconds: 0 });
    h.workers.updatePod({ updateType: 'update', pod: deleted });
    await h.settle();
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(1);
  });

  it('resolves at once for a pod that is already terminated', async () => {
    const h = createHarness();
    const gate = deferred<undefined>();
    h.syncer.behavior = (c) => (c.method === 'syncTerminatedPod' ? gate.promise : undefined);
    const pod = makePod('a');
    h.workers.updatePod({ updateType: 'kill', pod });
    await h.settle();
    expect(h.workers.isPodKnownTerminated('a')).toBe(true);
    await h.workers.killPodAndWait(pod);
    gate.resolve(undefined);
    await h.settle();
  });

  it('calls onCompleted at once when kill options reach a pod that is not terminating', () => {
    const h = createHarness();
    let completed = 0;
    h.workers.updatePod({
      updateType: 'update',
      pod: makePod('a'),
      killOptions: { onCompleted: () => completed++ },
    });
    expect(completed).toBe(1);
    expect(h.workers.isPodTerminationRequested('a')).toBe(false);
  });
});

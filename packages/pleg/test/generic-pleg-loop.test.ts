import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';
import { emptyPodStatus, GenericPLEG, type RuntimeLister, type RuntimePod } from '../src/index.js';

/** An in-memory lister counting its calls, so loop timing is tested without sockets. */
function countingLister(pods: () => RuntimePod[] = () => []): RuntimeLister & { calls: number[] } {
  const calls: number[] = [];
  return {
    calls,
    async listPods() {
      calls.push(calls.length);
      return pods();
    },
  };
}

const statusSource = {
  async getPodStatus(uid: string, name: string, namespace: string) {
    return emptyPodStatus(uid, name, namespace);
  },
};

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('GenericPLEG loop', () => {
  it('has no timers before start, relists at once, then every period after the previous ends', async () => {
    const clock = new FakeClock();
    const lister = countingLister();
    const pleg = new GenericPLEG({ lister, statusSource, clock });
    expect(clock.pendingTimers()).toBe(0);
    pleg.start();
    await clock.advance(0);
    await settle();
    expect(lister.calls).toHaveLength(1);
    await clock.advance(999);
    await settle();
    expect(lister.calls).toHaveLength(1);
    await clock.advance(1);
    await settle();
    expect(lister.calls).toHaveLength(2);
    await clock.advance(3000);
    await settle();
    expect(lister.calls.length).toBeGreaterThanOrEqual(4);
    await pleg.stop();
    const stoppedAt = lister.calls.length;
    await clock.advance(10_000);
    expect(lister.calls).toHaveLength(stoppedAt);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('an abort signal stops the loop, and setRelistTiming changes the period', async () => {
    const clock = new FakeClock();
    const lister = countingLister();
    const pleg = new GenericPLEG({ lister, statusSource, clock, relistPeriodMs: 300_000 });
    const controller = new AbortController();
    pleg.start(controller.signal);
    await clock.advance(0);
    await settle();
    await clock.advance(299_999);
    await settle();
    expect(lister.calls).toHaveLength(1);
    pleg.setRelistTiming({ periodMs: 1000, thresholdMs: 180_000 });
    await clock.advance(1);
    await settle();
    expect(lister.calls).toHaveLength(2);
    await clock.advance(1000);
    await settle();
    expect(lister.calls).toHaveLength(3);
    controller.abort();
    await settle();
    expect(pleg.running).toBe(false);
  });

  it('a failing listing does not advance the relist time (health trips after the threshold)', async () => {
    const clock = new FakeClock();
    let fail = false;
    const lister: RuntimeLister = {
      async listPods() {
        if (fail) throw new Error('runtime down');
        return [];
      },
    };
    const pleg = new GenericPLEG({ lister, statusSource, clock });
    const errors: string[] = [];
    pleg.on('relistError', (e) => errors.push(e.message));
    pleg.start();
    await clock.advance(0);
    await settle();
    const first = pleg.lastRelistTime;
    fail = true;
    for (let i = 0; i < 200; i++) {
      await clock.advance(1000);
      await settle();
    }
    expect(pleg.lastRelistTime).toBe(first);
    expect(errors.length).toBeGreaterThan(150);
    expect(pleg.healthy()).toEqual({
      ok: false,
      message: `pleg was last seen active 3m20s ago; threshold is 3m0s`,
    });
    await pleg.stop();
  });
});

import { AlreadyStartedError, InvalidOptionsError } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import type { RuntimeLister, RuntimePod } from '@nodeagent/kubecontainer';
import { describe, expect, it } from 'vitest';
import { GenericPLEG } from '../src/index.js';
import { FakeRuntimeLister, fakePodStatusSource } from '../src/testing.js';

/** An in-memory lister counting its calls, so loop timing is tested without sockets. */
function countingLister(pods: RuntimePod[] = []): FakeRuntimeLister {
  return new FakeRuntimeLister(pods);
}

const statusSource = fakePodStatusSource();

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('GenericPLEG loop', () => {
  it('has no timers before start, relists at once, then every period after the previous ends', async () => {
    const clock = new FakeClock();
    const lister = countingLister();
    const pleg = new GenericPLEG({ lister, statusSource, clock });
    expect(clock.pendingTimers()).toBe(0);
    await pleg.start();
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

  it('stop() ends the loop, and setRelistTiming changes the period', async () => {
    const clock = new FakeClock();
    const lister = countingLister();
    const pleg = new GenericPLEG({ lister, statusSource, clock, relistPeriodMs: 300_000 });
    await pleg.start();
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
    await pleg.stop();
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
    await pleg.start();
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

  it('start() resolves at once, rejects a second time and when the signal is already aborted', async () => {
    const clock = new FakeClock();
    const pleg = new GenericPLEG({ lister: countingLister(), statusSource, clock });
    await pleg.start();
    expect(pleg.running).toBe(true);
    await expect(pleg.start()).rejects.toBeInstanceOf(AlreadyStartedError);
    await pleg.stop();
    await pleg.stop();
    const aborted = new GenericPLEG({ lister: countingLister(), statusSource, clock });
    await expect(aborted.start(AbortSignal.abort(new Error('gave up')))).rejects.toThrow('gave up');
    expect(aborted.running).toBe(false);
  });

  it('an abort after start() resolved does not stop the loop', async () => {
    const clock = new FakeClock();
    const lister = countingLister();
    const pleg = new GenericPLEG({ lister, statusSource, clock });
    const controller = new AbortController();
    await pleg.start(controller.signal);
    controller.abort();
    await clock.advance(0);
    await settle();
    await clock.advance(1000);
    await settle();
    expect(lister.calls).toHaveLength(2);
    await pleg.stop();
  });

  it("buffers events in a channel of the kubelet's plegChannelCapacity (1000) and refuses nonsense", () => {
    const pleg = new GenericPLEG({ lister: countingLister(), statusSource });
    expect(pleg.channel.capacity).toBe(1000);
    expect(
      new GenericPLEG({ lister: countingLister(), statusSource, channelCapacity: 5 }).channel.capacity,
    ).toBe(5);
    expect(() => new GenericPLEG({ lister: countingLister(), statusSource, channelCapacity: 0 })).toThrow(
      InvalidOptionsError,
    );
  });
});

import { Backoff } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';

describe('Backoff', () => {
  it('doubles from 800 ms to the 30 s cap without jitter (client-go reflector defaults)', () => {
    const backoff = new Backoff({ jitter: 0, clock: new FakeClock() });
    const seq = Array.from({ length: 9 }, () => backoff.next());
    expect(seq).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]);
    expect(backoff.failures).toBe(9);
  });

  it('adds jitter in [base, base·(1+jitter)) from the injected random source', () => {
    const lows = new Backoff({ clock: new FakeClock(), random: () => 0 });
    const highs = new Backoff({ clock: new FakeClock(), random: () => 0.999_999 });
    const half = new Backoff({ clock: new FakeClock(), jitter: 0.5, random: () => 0.5 });
    expect([lows.next(), lows.next()]).toEqual([800, 1600]);
    const [h1, h2] = [highs.next(), highs.next()];
    expect(h1).toBeGreaterThan(1599);
    expect(h1).toBeLessThan(1600);
    expect(h2).toBeLessThan(3200);
    expect(half.next()).toBe(800 * 1.25);
  });

  it('caps the base, not the jitter: at most capMs·(1+jitter)', () => {
    const backoff = new Backoff({
      clock: new FakeClock(),
      random: () => 0.999,
      capMs: 1000,
      initialMs: 1000,
    });
    for (let i = 0; i < 5; i++) expect(backoff.next()).toBeLessThan(2000);
  });

  it('starts over after resetAfterMs without a failure, not before', async () => {
    const clock = new FakeClock();
    const backoff = new Backoff({ jitter: 0, clock });
    backoff.next();
    backoff.next();
    await clock.advance(119_999);
    expect(backoff.next()).toBe(3200); // still within the healthy window of the last failure
    await clock.advance(120_000);
    expect(backoff.next()).toBe(800);
    expect(backoff.failures).toBe(1);
  });

  it('reset() starts over; sleep() waits the delay on the clock and honours abort', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const backoff = new Backoff({ jitter: 0, clock });
    backoff.next();
    backoff.reset();
    expect(backoff.failures).toBe(0);
    let woke = false;
    const sleeping = backoff.sleep().then(() => {
      woke = true;
    });
    await clock.advance(799);
    expect(woke).toBe(false);
    await clock.advance(1);
    await sleeping;
    expect(woke).toBe(true);
    const ac = new AbortController();
    const aborted = backoff.sleep(ac.signal);
    ac.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('rejects invalid options with RangeError naming the field', () => {
    expect(() => new Backoff({ initialMs: -1 })).toThrow(/initialMs/);
    expect(() => new Backoff({ factor: 0.5 })).toThrow(/factor/);
    expect(() => new Backoff({ initialMs: 10, capMs: 5 })).toThrow(/capMs/);
    expect(() => new Backoff({ jitter: -0.1 })).toThrow(/jitter/);
    expect(() => new Backoff({ resetAfterMs: Number.NaN })).toThrow(/resetAfterMs/);
  });
});

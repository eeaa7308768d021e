import { formatGoDuration, InvalidOptionsError, KeyedBackoff } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';

describe('CrashLoopBackOff numbers', () => {
  it('10 s doubling to 5 min: 10, 20, 40, 80, 160, 300, 300', () => {
    const clock = new FakeClock();
    const b = new KeyedBackoff({ initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000, clock });
    const seen: number[] = [];
    for (let i = 0; i < 7; i++) {
      // the container crashes right after each restart
      b.next('k', clock.now());
      seen.push(b.get('k'));
      clock.advanceSync(b.get('k'));
    }
    expect(seen).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('is in backoff until the delay has passed since the container finished', () => {
    const clock = new FakeClock();
    const b = new KeyedBackoff({ clock });
    const finishedAt = clock.now();
    expect(b.isInBackOffSince('k', finishedAt)).toBe(false);
    b.next('k', finishedAt);
    clock.advanceSync(9_999);
    expect(b.isInBackOffSince('k', finishedAt)).toBe(true);
    clock.advanceSync(1);
    expect(b.isInBackOffSince('k', finishedAt)).toBe(false);
  });

  it('resets after the container ran for 10 minutes', () => {
    const clock = new FakeClock();
    const b = new KeyedBackoff({ initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000, clock });
    for (let i = 0; i < 4; i++) b.next('k', clock.now());
    expect(b.get('k')).toBe(80_000);
    clock.advanceSync(600_000); // ran exactly 10 min: not yet "more than"
    b.next('k', clock.now());
    expect(b.get('k')).toBe(160_000);
    clock.advanceSync(600_001);
    b.next('k', clock.now());
    expect(b.get('k')).toBe(10_000);
  });

  it('keys are independent; gc drops stale entries', () => {
    const clock = new FakeClock();
    const b = new KeyedBackoff({ clock, resetAfterMs: 1000 });
    b.next('a', 0);
    b.next('b', 0);
    b.next('b', 0);
    expect([b.get('a'), b.get('b')]).toEqual([10_000, 20_000]);
    clock.advanceSync(1001);
    b.gc();
    expect(b.size).toBe(0);
  });

  it('rejects nonsense options', () => {
    expect(() => new KeyedBackoff({ initialMs: 0 })).toThrow(InvalidOptionsError);
    expect(() => new KeyedBackoff({ initialMs: 10, maxMs: 5 })).toThrow(InvalidOptionsError);
  });

  it.each([
    [10_000, '10s'],
    [80_000, '1m20s'],
    [160_000, '2m40s'],
    [300_000, '5m0s'],
    [1500, '1.5s'],
    [3_600_000, '1h0m0s'],
  ])('formats %i ms as %s (Go)', (ms, text) => expect(formatGoDuration(ms)).toBe(text));
});

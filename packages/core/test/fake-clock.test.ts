import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';

describe('FakeClock', () => {
  it('fires due timers in order, including timers scheduled by timers', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const seen: string[] = [];
    clock.setTimeout(() => {
      seen.push(`a@${clock.now()}`);
      clock.setTimeout(() => seen.push(`c@${clock.now()}`), 5);
    }, 10);
    clock.setTimeout(() => seen.push(`b@${clock.now()}`), 12);
    await clock.advance(20);
    expect(seen).toEqual(['a@10', 'b@12', 'c@15']);
    expect(clock.now()).toBe(20);
  });

  it('fires timers due at the same instant in scheduling order', () => {
    const clock = new FakeClock({ startMs: 0 });
    const seen: number[] = [];
    for (let i = 0; i < 20; i++) clock.setTimeout(() => seen.push(i), 5);
    clock.setTimeout(() => seen.push(-1), 4);
    clock.advanceSync(5);
    expect(seen).toEqual([-1, ...Array.from({ length: 20 }, (_, i) => i)]);
  });

  it('starts at a fixed instant by default and treats negative delays as 0', () => {
    const clock = new FakeClock();
    expect(clock.now()).toBe(1_700_000_000_000);
    let fired = false;
    clock.setTimeout(() => {
      fired = true;
    }, -10);
    clock.advanceSync(0);
    expect(fired).toBe(true);
  });

  it('repeats intervals, catching up within one advance, until cancelled', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const at: number[] = [];
    const timer = clock.setInterval(() => at.push(clock.now()), 1000);
    await clock.advance(3500);
    expect(at).toEqual([1000, 2000, 3000]);
    timer.cancel();
    await clock.advance(5000);
    expect(at).toEqual([1000, 2000, 3000]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('lets an interval cancel itself from its callback', () => {
    const clock = new FakeClock({ startMs: 0 });
    let n = 0;
    const timer = clock.setInterval(() => {
      if (++n === 2) timer.cancel();
    }, 10);
    clock.advanceSync(100);
    expect(n).toBe(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('orders an interval repetition after timers scheduled earlier for the same instant', () => {
    const clock = new FakeClock({ startMs: 0 });
    const seen: string[] = [];
    const interval = clock.setInterval(() => seen.push(`i@${clock.now()}`), 10);
    clock.setTimeout(() => seen.push(`t@${clock.now()}`), 20); // scheduled before the 2nd repetition
    clock.advanceSync(20);
    interval.cancel();
    expect(seen).toEqual(['i@10', 't@20', 'i@20']);
  });

  it('cancels timers; cancelling twice or after firing is a no-op', () => {
    const clock = new FakeClock({ startMs: 0 });
    const seen: string[] = [];
    const a = clock.setTimeout(() => seen.push('a'), 10);
    const b = clock.setTimeout(() => seen.push('b'), 10);
    a.cancel();
    a.cancel();
    expect(clock.pendingTimers()).toBe(1);
    clock.advanceSync(10);
    b.cancel();
    expect(seen).toEqual(['b']);
    expect(a.unref()).toBe(a);
  });

  it('lets awaited sleeps chain within one advance', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const at: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(100);
        at.push(clock.now());
      }
    })();
    await clock.advance(300);
    await loop;
    expect(at).toEqual([100, 200, 300]);
  });

  it('sleep rejects when its signal aborts, and removes its timer', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const ac = new AbortController();
    const sleeping = clock.sleep(1000, ac.signal);
    expect(clock.pendingTimers()).toBe(1);
    ac.abort();
    await expect(sleeping).rejects.toMatchObject({ name: 'AbortError' });
    expect(clock.pendingTimers()).toBe(0);
    await expect(clock.sleep(10, AbortSignal.abort('why'))).rejects.toThrow('why');
  });

  it('reports the next due time and runs everything with runAll', async () => {
    const clock = new FakeClock({ startMs: 0 });
    expect(clock.nextDueAt()).toBeUndefined();
    clock.setTimeout(() => clock.setTimeout(() => {}, 50), 30);
    expect(clock.nextDueAt()).toBe(30);
    await clock.runAll();
    expect(clock.now()).toBe(80);
    clock.setInterval(() => {}, 1);
    await expect(clock.runAll(10)).rejects.toThrow(/still 1 timer/);
  });

  it('rejects negative and NaN advances', async () => {
    const clock = new FakeClock({ startMs: 0 });
    await expect(clock.advance(-1)).rejects.toThrow(RangeError);
    expect(() => clock.advanceSync(Number.NaN)).toThrow(RangeError);
    expect(clock.now()).toBe(0);
  });

  it('fires thousands of timers in due order (heap-backed)', () => {
    const clock = new FakeClock({ startMs: 0 });
    const n = 20_000;
    const seen: number[] = [];
    // A scrambled but deterministic order of due times, with duplicates.
    for (let i = 0; i < n; i++) {
      const due = (i * 7919) % 5000;
      clock.setTimeout(() => seen.push(due * n + i), due);
    }
    const cancelled = clock.setTimeout(() => seen.push(-1), 2500);
    cancelled.cancel();
    clock.advanceSync(5000);
    expect(seen).toHaveLength(n);
    for (let i = 1; i < n; i++) expect(seen[i] as number).toBeGreaterThan(seen[i - 1] as number);
  });
});

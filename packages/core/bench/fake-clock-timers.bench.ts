// FakeClock with thousands of timers: the heap-backed clock next to the earlier linear
// scan (reimplemented here as the reference). Prints ms; asserts nothing about speed.

import { FakeClock } from '@nodeagent/core/testing';
import { it } from 'vitest';

/** The previous algorithm: scan every pending timer for the earliest before each firing. */
class LinearScanClock {
  private now = 0;
  private nextId = 0;
  private readonly timers = new Map<number, { id: number; at: number; fn: () => void }>();
  setTimeout(fn: () => void, delayMs: number): void {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.now + delayMs, fn });
  }
  advanceSync(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      let best: { id: number; at: number; fn: () => void } | undefined;
      for (const t of this.timers.values()) {
        if (!best || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
      }
      if (!best || best.at > target) break;
      this.now = best.at;
      this.timers.delete(best.id);
      best.fn();
    }
    this.now = target;
  }
}

function run(
  clock: { setTimeout(fn: () => void, ms: number): unknown; advanceSync(ms: number): void },
  n: number,
) {
  let fired = 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) clock.setTimeout(() => fired++, (i * 7919) % 10_000);
  clock.advanceSync(10_000);
  const ms = performance.now() - t0;
  if (fired !== n) throw new Error(`fired ${fired} of ${n}`);
  return ms;
}

it('fake clock: schedule and fire n timers', () => {
  const lines: string[] = [];
  for (const n of [1_000, 10_000, 30_000]) {
    const heap = run(new FakeClock({ startMs: 0 }), n);
    const linear = run(new LinearScanClock(), n);
    lines.push(
      `${String(n).padStart(6)} timers   FakeClock (heap) ${heap.toFixed(1).padStart(8)} ms   linear scan ${linear.toFixed(1).padStart(9)} ms`,
    );
  }
  console.log(lines.join('\n'));
});

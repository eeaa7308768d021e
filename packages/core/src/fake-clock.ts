/**
 * A deterministic {@link Clock} for tests: time moves only when the test advances it.
 *
 * @module
 */
import { type Clock, sleepOn, type Timer } from './clock.js';

interface Scheduled {
  readonly id: number;
  at: number;
  readonly periodMs: number | undefined;
  readonly fn: () => void;
  cancelled: boolean;
}

/** Options for {@link FakeClock}. */
export interface FakeClockOptions {
  /**
   * The initial time, in milliseconds since the epoch.
   * @default 1_700_000_000_000 (a fixed instant, so test output is stable)
   */
  readonly startMs?: number;
}

/**
 * A manual clock. `advance(ms)` moves time forward and fires every timer that falls due,
 * in due-time order (ties in scheduling order), including timers scheduled by timers that
 * fire during the same advance. Between timers it lets pending promise callbacks run, so
 * `await clock.sleep()` chains in the code under test make progress as they would in
 * real time.
 *
 * @example
 * ```ts
 * const clock = new FakeClock();
 * let fired = 0;
 * clock.setInterval(() => fired++, 1000);
 * await clock.advance(3500);
 * // fired === 3
 * ```
 */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 0;
  private readonly timers = new Map<number, Scheduled>();

  constructor(options: FakeClockOptions = {}) {
    this.current = options.startMs ?? 1_700_000_000_000;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, delayMs: number): Timer {
    return this.schedule(fn, Math.max(0, delayMs), undefined);
  }

  setInterval(fn: () => void, periodMs: number): Timer {
    const p = Math.max(1, periodMs);
    return this.schedule(fn, p, p);
  }

  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, delayMs, signal);
  }

  /** Number of timers that have not fired (or, for intervals, not been cancelled). */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** The due time of the earliest pending timer, or `undefined` when none is pending. */
  nextDueAt(): number | undefined {
    return this.earliest()?.at;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and letting promise
   * callbacks settle after each one.
   */
  async advance(ms: number): Promise<void> {
    if (ms < 0) throw new RangeError(`FakeClock.advance: ms must be >= 0, got ${ms}`);
    const target = this.current + ms;
    await flushMicrotasks();
    for (;;) {
      const next = this.earliest();
      if (!next || next.at > target) break;
      this.current = next.at;
      this.fire(next);
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }

  /** Moves time to the absolute instant `ms` (which must not be in the past). */
  async advanceTo(ms: number): Promise<void> {
    await this.advance(ms - this.current);
  }

  /**
   * Like {@link advance}, without yielding to promise callbacks: for purely synchronous
   * code under test.
   */
  advanceSync(ms: number): void {
    if (ms < 0) throw new RangeError(`FakeClock.advanceSync: ms must be >= 0, got ${ms}`);
    const target = this.current + ms;
    for (;;) {
      const next = this.earliest();
      if (!next || next.at > target) break;
      this.current = next.at;
      this.fire(next);
    }
    this.current = target;
  }

  /**
   * Fires timers until none is pending, advancing time to each. Stops with an error after
   * `maxTimers` firings (a self-rescheduling timer would otherwise never end).
   */
  async runAll(maxTimers = 10_000): Promise<void> {
    for (let i = 0; i < maxTimers; i++) {
      const next = this.earliest();
      if (!next) return;
      await this.advanceTo(next.at);
    }
    throw new Error(`FakeClock.runAll: still ${this.timers.size} timer(s) pending after ${maxTimers} firings`);
  }

  private schedule(fn: () => void, delayMs: number, periodMs: number | undefined): Timer {
    const entry: Scheduled = { id: this.nextId++, at: this.current + delayMs, periodMs, fn, cancelled: false };
    this.timers.set(entry.id, entry);
    const timers = this.timers;
    const timer: Timer = {
      cancel() {
        entry.cancelled = true;
        timers.delete(entry.id);
      },
      unref() {
        return timer;
      },
    };
    return timer;
  }

  private earliest(): Scheduled | undefined {
    let best: Scheduled | undefined;
    for (const t of this.timers.values()) {
      if (!best || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
    }
    return best;
  }

  private fire(t: Scheduled): void {
    if (t.periodMs === undefined) this.timers.delete(t.id);
    else t.at += t.periodMs;
    t.fn();
  }
}

/** Lets queued promise callbacks (and the ones they queue) run. */
async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

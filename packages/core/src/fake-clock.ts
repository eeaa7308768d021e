/**
 * A deterministic {@link Clock} for tests: time moves only when the test advances it.
 *
 * @module
 */
import { type Clock, sleepOn, type Timer } from './clock.js';
import { IndexedHeap } from './internal/indexed-heap.js';

interface Scheduled {
  /** Scheduling order: breaks ties between timers due at the same instant. */
  seq: number;
  at: number;
  readonly periodMs: number | undefined;
  readonly fn: () => void;
  heapIndex: number;
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
  private nextSeq = 0;
  // A heap keeps each firing O(log n), so tests with thousands of timers stay fast.
  private readonly timers = new IndexedHeap<Scheduled>(
    (a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq),
  );

  constructor(options: FakeClockOptions = {}) {
    this.current = options.startMs ?? 1_700_000_000_000;
  }

  /** The fake current time, in milliseconds since the epoch. */
  now(): number {
    return this.current;
  }

  /** Schedules `fn` at `now() + delayMs` (negative delays count as 0). */
  setTimeout(fn: () => void, delayMs: number): Timer {
    return this.schedule(fn, Math.max(0, delayMs), undefined);
  }

  /**
   * Schedules `fn` every `periodMs` (minimum 1 ms). Each repetition is rescheduled when
   * the previous one fires, so it ties after timers scheduled earlier for the same instant.
   */
  setInterval(fn: () => void, periodMs: number): Timer {
    const p = Math.max(1, periodMs);
    return this.schedule(fn, p, p);
  }

  /** Resolves once the clock has been advanced by `delayMs`; rejects when `signal` aborts. */
  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, delayMs, signal);
  }

  /** Number of timers that have not fired (or, for intervals, not been cancelled). */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** The due time of the earliest pending timer, or `undefined` when none is pending. */
  nextDueAt(): number | undefined {
    return this.timers.peek()?.at;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and letting promise
   * callbacks settle after each one.
   */
  async advance(ms: number): Promise<void> {
    const target = this.targetOf('advance', ms);
    await flushMicrotasks();
    for (;;) {
      const next = this.timers.peek();
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
    const target = this.targetOf('advanceSync', ms);
    for (;;) {
      const next = this.timers.peek();
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
      const next = this.timers.peek();
      if (!next) return;
      await this.advanceTo(next.at);
    }
    throw new Error(
      `FakeClock.runAll: still ${this.timers.size} timer(s) pending after ${maxTimers} firings`,
    );
  }

  private targetOf(method: string, ms: number): number {
    // NaN would otherwise fire every timer and leave the clock at NaN.
    if (!(ms >= 0) || !Number.isFinite(ms)) {
      throw new RangeError(`FakeClock.${method}: ms must be a finite number >= 0, got ${ms}`);
    }
    return this.current + ms;
  }

  private schedule(fn: () => void, delayMs: number, periodMs: number | undefined): Timer {
    const entry: Scheduled = { seq: this.nextSeq++, at: this.current + delayMs, periodMs, fn, heapIndex: -1 };
    this.timers.push(entry);
    const timers = this.timers;
    const timer: Timer = {
      cancel() {
        timers.remove(entry);
      },
      unref() {
        return timer;
      },
    };
    return timer;
  }

  private fire(t: Scheduled): void {
    this.timers.pop();
    if (t.periodMs !== undefined) {
      // Re-armed before running, so the callback can cancel its own interval.
      t.at += t.periodMs;
      t.seq = this.nextSeq++;
      this.timers.push(t);
    }
    t.fn();
  }
}

/** Lets queued promise callbacks (and the ones they queue) run. */
async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

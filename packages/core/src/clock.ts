/**
 * Time as an injected dependency. Every timing rule in `@nodeagent` (relist periods,
 * backoffs, grace periods, health thresholds) reads time and schedules work through a
 * {@link Clock}, so tests drive it with `FakeClock` from `@nodeagent/core/testing`
 * instead of sleeping.
 *
 * @module
 */

/** A scheduled callback that can be cancelled. */
export interface Timer {
  /** Cancels the timer. Cancelling twice, or after it fired, is a no-op. */
  cancel(): void;
  /**
   * Lets the process exit while this timer is pending (Node's `unref`).
   * A no-op on clocks that do not own real timers.
   * @returns the same timer, for chaining.
   */
  unref(): Timer;
}

/** The source of time and timers for every component that has timing rules. */
export interface Clock {
  /** Milliseconds since the Unix epoch (wall clock, like `Date.now()`). */
  now(): number;
  /** Runs `fn` once after `delayMs` milliseconds (negative delays count as 0). */
  setTimeout(fn: () => void, delayMs: number): Timer;
  /** Runs `fn` every `periodMs` milliseconds until cancelled. Minimum period: 1 ms. */
  setInterval(fn: () => void, periodMs: number): Timer;
  /**
   * Resolves after `delayMs` milliseconds. Rejects with the signal's reason
   * (an `AbortError` by default) as soon as `signal` aborts, and at once if it already has.
   */
  sleep(delayMs: number, signal?: AbortSignal): Promise<void>;
}

/** Rejects with the abort reason of `signal`, normalised to an Error. */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const err = new Error(reason === undefined ? 'The operation was aborted' : String(reason));
  err.name = 'AbortError';
  return err;
}

/**
 * Implements {@link Clock.sleep} on top of a clock's own `setTimeout`, so the fake and
 * the real clock share one abort behaviour.
 * @internal
 */
export function sleepOn(
  clock: Pick<Clock, 'setTimeout'>,
  delayMs: number,
  signal?: AbortSignal,
): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      timer.cancel();
      reject(abortReason(signal as AbortSignal));
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Node fires timers longer than this (about 24.8 days) after 1 ms instead, with a warning. */
const MAX_NODE_DELAY_MS = 2_147_483_647;

/** A Node timer that splits delays longer than Node's limit into chunks. */
class RealTimer implements Timer {
  private handle: NodeJS.Timeout | undefined;
  private unrefed = false;
  private cancelled = false;

  constructor(
    private readonly fn: () => void,
    private readonly delayMs: number,
    private readonly repeat: boolean,
  ) {
    this.arm(delayMs);
  }

  cancel(): void {
    this.cancelled = true;
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.handle = undefined;
  }

  unref(): Timer {
    this.unrefed = true;
    this.handle?.unref();
    return this;
  }

  private arm(remainingMs: number): void {
    const chunk = Math.min(remainingMs, MAX_NODE_DELAY_MS);
    this.handle = setTimeout(() => {
      if (this.cancelled) return;
      if (remainingMs > chunk) return this.arm(remainingMs - chunk);
      // Re-armed before running, so the callback can cancel its own interval.
      if (this.repeat) this.arm(this.delayMs);
      else this.handle = undefined;
      this.fn();
    }, chunk);
    if (this.unrefed) this.handle.unref();
  }
}

/** The process's real time: `Date.now()` and Node's timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, delayMs) => new RealTimer(fn, Math.max(0, delayMs) || 0, false),
  setInterval: (fn, periodMs) => new RealTimer(fn, Math.max(1, periodMs) || 1, true),
  sleep(delayMs, signal) {
    return sleepOn(realClock, delayMs, signal);
  },
};

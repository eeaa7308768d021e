/**
 * Time as an injected dependency. Every timing rule in @nodeagent (relist periods,
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
export function sleepOn(clock: Pick<Clock, 'setTimeout'>, delayMs: number, signal?: AbortSignal): Promise<void> {
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

class RealTimer implements Timer {
  constructor(
    private readonly handle: NodeJS.Timeout,
    private readonly clear: (h: NodeJS.Timeout) => void,
  ) {}
  cancel(): void {
    this.clear(this.handle);
  }
  unref(): Timer {
    this.handle.unref();
    return this;
  }
}

/** The process's real time: `Date.now()` and Node's timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, delayMs) => new RealTimer(setTimeout(fn, Math.max(0, delayMs)), clearTimeout),
  setInterval: (fn, periodMs) => new RealTimer(setInterval(fn, Math.max(1, periodMs)), clearInterval),
  sleep(delayMs, signal) {
    return sleepOn(realClock, delayMs, signal);
  },
};

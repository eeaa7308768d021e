/**
 * Jittered exponential backoff, as client-go's reflector and the kubelet use it:
 * each failure waits longer (×factor, capped), with random jitter so many clients
 * do not retry in lockstep, and the sequence starts over after a healthy period.
 *
 * @module
 */
import { type Clock, realClock } from './clock.js';

/** Options for {@link Backoff}. All durations in milliseconds. */
export interface BackoffOptions {
  /**
   * The base delay after the first failure.
   * Minimum: 0.
   * @default 800 (client-go's reflector)
   */
  readonly initialMs?: number;
  /**
   * The multiplier applied after each failure.
   * Minimum: 1.
   * @default 2
   */
  readonly factor?: number;
  /**
   * The largest base delay.
   * @default 30_000
   */
  readonly capMs?: number;
  /**
   * Random extra delay as a fraction of the base: the delay is
   * `base + random() * jitter * base` (client-go's `wait.Jitter`). 0 disables jitter.
   * @default 1.0
   */
  readonly jitter?: number;
  /**
   * After this long without a failure, the next failure starts again from `initialMs`.
   * @default 120_000 (2 minutes)
   */
  readonly resetAfterMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** Random source in [0, 1). @default Math.random */
  readonly random?: () => number;
}

/**
 * A stateful backoff: call {@link Backoff.next} after each failure to get how long to wait.
 *
 * @example
 * ```ts
 * const backoff = new Backoff({ initialMs: 800, capMs: 30_000 });
 * for (;;) {
 *   try { await watchOnce(); backoff.reset(); }
 *   catch { await backoff.sleep(signal); }
 * }
 * ```
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly factor: number;
  private readonly capMs: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private baseMs: number;
  private lastFailureAt: number | undefined;
  private failureCount = 0;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 800;
    this.factor = options.factor ?? 2;
    this.capMs = options.capMs ?? 30_000;
    this.jitter = options.jitter ?? 1.0;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    if (!(this.initialMs >= 0))
      throw new RangeError(`Backoff: initialMs must be >= 0, got ${this.initialMs}`);
    if (!(this.factor >= 1)) throw new RangeError(`Backoff: factor must be >= 1, got ${this.factor}`);
    if (!(this.capMs >= this.initialMs)) {
      throw new RangeError(`Backoff: capMs (${this.capMs}) must be >= initialMs (${this.initialMs})`);
    }
    if (!(this.resetAfterMs >= 0)) {
      throw new RangeError(`Backoff: resetAfterMs must be >= 0, got ${this.resetAfterMs}`);
    }
    if (!(this.jitter >= 0)) throw new RangeError(`Backoff: jitter must be >= 0, got ${this.jitter}`);
    this.baseMs = this.initialMs;
  }

  /** Failures counted since the last reset. */
  get failures(): number {
    return this.failureCount;
  }

  /** Records a failure and returns the delay to wait before retrying, in ms. */
  next(): number {
    const now = this.clock.now();
    if (this.lastFailureAt !== undefined && now - this.lastFailureAt >= this.resetAfterMs) this.reset();
    this.lastFailureAt = now;
    const base = this.baseMs;
    this.baseMs = Math.min(this.capMs, base * this.factor);
    this.failureCount++;
    return base + (this.jitter > 0 ? this.random() * this.jitter * base : 0);
  }

  /** Records a failure and sleeps for the returned delay on the backoff's clock. */
  async sleep(signal?: AbortSignal): Promise<void> {
    await this.clock.sleep(this.next(), signal);
  }

  /** Starts over from `initialMs` (call after a success that proves health). */
  reset(): void {
    this.baseMs = this.initialMs;
    this.lastFailureAt = undefined;
    this.failureCount = 0;
  }
}

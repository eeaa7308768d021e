/**
 * Rate limiters for {@link WorkQueue.addRateLimited}, with client-go's names and
 * arithmetic (`util/workqueue/default_rate_limiters.go`): per-item exponential failure
 * backoff, a token bucket shared by all items, fast/slow retries, and combinators.
 *
 * @module
 */
import { type Clock, realClock } from './clock.js';
import { TokenBucketRateLimiter } from './token-bucket-rate-limiter.js';

/**
 * Decides how long a key waits before it is retried, and counts its retries.
 * Keys are compared by value (`Map` semantics), like the work queue's.
 */
export interface RateLimiter<K> {
  /** Records a retry of `key` and returns how long to wait before it, in ms. */
  when(key: K): number;
  /** Stops tracking `key` (call after it was processed successfully). */
  forget(key: K): void;
  /** How many times `key` has been retried since it was last forgotten. */
  numRequeues(key: K): number;
}

function requireNonNegative(owner: string, field: string, value: number): void {
  if (!(value >= 0)) throw new RangeError(`${owner}: ${field} must be a number >= 0, got ${value}`);
}

/**
 * Per-key exponential backoff: `baseMs · 2^failures`, capped at `maxMs`. Overflow-safe:
 * once the doubling exceeds what a number can hold the delay simply stays at `maxMs`.
 *
 * @example
 * ```ts
 * const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000);
 * limiter.when('a'); // 5
 * limiter.when('a'); // 10
 * ```
 */
export class ItemExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();

  /**
   * @param baseMs the delay of the first retry, in ms. Minimum: 0.
   * @param maxMs the largest delay, in ms. Minimum: 0.
   */
  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {
    requireNonNegative('ItemExponentialFailureRateLimiter', 'baseMs', baseMs);
    requireNonNegative('ItemExponentialFailureRateLimiter', 'maxMs', maxMs);
  }

  /** Returns `min(maxMs, baseMs · 2^n)` where n counts earlier retries of `key`. */
  when(key: K): number {
    const exp = this.failures.get(key) ?? 0;
    this.failures.set(key, exp + 1);
    if (this.baseMs === 0) return 0;
    // 2 ** exp is Infinity past 1023, which Math.min caps like client-go's MaxInt64 check.
    return Math.min(this.maxMs, this.baseMs * 2 ** exp);
  }

  /** Resets the failure count of `key`. */
  forget(key: K): void {
    this.failures.delete(key);
  }

  /** Failures of `key` since it was last forgotten. */
  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * A token bucket shared by every key (golang.org/x/time/rate's `Reserve().Delay()`):
 * the bucket starts full with `burst` tokens and refills at `qps` tokens per second;
 * each retry takes a token, and when none is left the retry waits for one. Reservations
 * are committed, so a burst of retries is spread out at `qps`.
 */
export class BucketRateLimiter<K> implements RateLimiter<K> {
  private readonly bucket: TokenBucketRateLimiter;

  /**
   * @param qps tokens added per second. Must be > 0 (`Infinity` means no limit).
   * @param burst the bucket size (and initial tokens). Minimum: 1.
   * @param clock the time source for refills. Default: `realClock`.
   */
  constructor(qps: number, burst: number, clock: Clock = realClock) {
    if (!(qps > 0)) throw new RangeError(`BucketRateLimiter: qps must be > 0, got ${qps}`);
    if (!(burst >= 1) || !Number.isInteger(burst)) {
      throw new RangeError(`BucketRateLimiter: burst must be an integer >= 1, got ${burst}`);
    }
    this.bucket = new TokenBucketRateLimiter(qps, burst, clock);
  }

  /** Takes a token and returns how long until it is available, in ms (0 when one was left). */
  when(_key: K): number {
    // qps > 0 and burst >= 1: a reservation always succeeds.
    return this.bucket.reserveDelayMs() ?? 0;
  }

  /** No-op: the bucket does not track keys. */
  forget(_key: K): void {}

  /** Always 0: the bucket does not track keys. */
  numRequeues(_key: K): number {
    return 0;
  }
}

/**
 * `fastMs` for the first `maxFastAttempts` retries of a key, `slowMs` after that.
 */
export class ItemFastSlowRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();

  /**
   * @param fastMs the delay of the first `maxFastAttempts` retries, in ms. Minimum: 0.
   * @param slowMs the delay of later retries, in ms. Minimum: 0.
   * @param maxFastAttempts how many retries use `fastMs`. Minimum: 0.
   */
  constructor(
    private readonly fastMs: number,
    private readonly slowMs: number,
    private readonly maxFastAttempts: number,
  ) {
    requireNonNegative('ItemFastSlowRateLimiter', 'fastMs', fastMs);
    requireNonNegative('ItemFastSlowRateLimiter', 'slowMs', slowMs);
    requireNonNegative('ItemFastSlowRateLimiter', 'maxFastAttempts', maxFastAttempts);
  }

  /** Counts a retry of `key` and returns `fastMs` or `slowMs`. */
  when(key: K): number {
    const attempts = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, attempts);
    return attempts <= this.maxFastAttempts ? this.fastMs : this.slowMs;
  }

  /** Resets the retry count of `key`. */
  forget(key: K): void {
    this.failures.delete(key);
  }

  /** Retries of `key` since it was last forgotten. */
  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * The worst (longest) delay of several limiters. Every limiter sees every retry, so each
 * keeps its own count.
 */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: readonly RateLimiter<K>[];

  /** @param limiters the limiters to combine. At least one. */
  constructor(...limiters: RateLimiter<K>[]) {
    if (limiters.length === 0) throw new RangeError('MaxOfRateLimiter: needs at least one limiter');
    this.limiters = limiters;
  }

  /** Asks every limiter and returns the longest delay, in ms. */
  when(key: K): number {
    let longest = 0;
    for (const l of this.limiters) longest = Math.max(longest, l.when(key));
    return longest;
  }

  /** Forgets `key` in every limiter. */
  forget(key: K): void {
    for (const l of this.limiters) l.forget(key);
  }

  /** The largest retry count any limiter reports for `key`. */
  numRequeues(key: K): number {
    let most = 0;
    for (const l of this.limiters) most = Math.max(most, l.numRequeues(key));
    return most;
  }
}

/** Caps the delay of another limiter at `maxDelayMs` (client-go's `WithMaxWaitRateLimiter`). */
export class WithMaxWaitRateLimiter<K> implements RateLimiter<K> {
  /**
   * @param limiter the limiter whose delays are capped.
   * @param maxDelayMs the longest delay returned, in ms. Minimum: 0.
   */
  constructor(
    private readonly limiter: RateLimiter<K>,
    private readonly maxDelayMs: number,
  ) {
    requireNonNegative('WithMaxWaitRateLimiter', 'maxDelayMs', maxDelayMs);
  }

  /** The wrapped limiter's delay, at most `maxDelayMs`. */
  when(key: K): number {
    return Math.min(this.maxDelayMs, this.limiter.when(key));
  }

  /** Forgets `key` in the wrapped limiter. */
  forget(key: K): void {
    this.limiter.forget(key);
  }

  /** The wrapped limiter's retry count for `key`. */
  numRequeues(key: K): number {
    return this.limiter.numRequeues(key);
  }
}

/**
 * client-go's `DefaultControllerRateLimiter`: the longer of a per-key exponential backoff
 * (5 ms doubling up to 1000 s) and an overall token bucket (10 qps, burst 100).
 *
 * @param clock the time source of the token bucket. Default: `realClock`.
 */
export function defaultControllerRateLimiter<K>(clock: Clock = realClock): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialFailureRateLimiter<K>(5, 1_000_000),
    new BucketRateLimiter<K>(10, 100, clock),
  );
}

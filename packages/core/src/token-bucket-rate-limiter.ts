/**
 * client-go's `flowcontrol.NewTokenBucketRateLimiter` (`util/flowcontrol/throttle.go`) on
 * golang.org/x/time/rate's arithmetic: the bucket starts full with `burst` tokens, refills at
 * `qps` tokens per second up to `burst`, and each request takes one token. `tryAccept` never
 * waits; `wait` reserves a token and resolves when it is due, so concurrent waiters are
 * spread `1/qps` apart. A waiter that is aborted gives its token back (x/time/rate's
 * `Reservation.Cancel`) unless later reservations already count on it.
 *
 * This is the limiter of API clients (kubelet `--kube-api-qps`, kube-proxy
 * `clientConnection.qps`); the work queue's {@link BucketRateLimiter} and the event spam
 * filter's per-object buckets share its arithmetic.
 *
 * @module
 */
import { abortReason, type Clock, realClock } from './clock.js';
import { InvalidOptionsError } from './options-error.js';

/** What an API client needs from a request rate limiter (client-go's `flowcontrol.RateLimiter`). */
export interface RequestRateLimiter {
  /** Takes a token if one is available now; false (and nothing taken) otherwise. */
  tryAccept(): boolean;
  /**
   * Takes a token, waiting until it is due. Resolves at once, without a timer, when a token
   * is available. Rejects with the abort reason when `signal` aborts (the token is given
   * back), and with {@link RateLimiterWaitError} when no token can ever come.
   */
  wait(signal?: AbortSignal): Promise<void>;
  /** Tokens added per second (client-go's `QPS()`). */
  readonly qps: number;
}

/** {@link RequestRateLimiter.wait} can never be satisfied: `burst` is 0, or `qps` is 0 and the bucket is empty. */
export class RateLimiterWaitError extends Error {
  override readonly name = 'RateLimiterWaitError';

  /**
   * @param qps the limiter's refill rate.
   * @param burst the limiter's bucket size.
   */
  constructor(
    readonly qps: number,
    readonly burst: number,
  ) {
    super(
      burst < 1
        ? `rate: Wait(n=1) exceeds limiter's burst ${burst}`
        : `rate: Wait(n=1) can never be satisfied: qps is ${qps} and the ${burst} tokens are spent`,
    );
  }
}

/** One reserved token: when it may be used and the bucket it came from. */
interface Reservation {
  readonly timeToActMs: number;
}

/**
 * A token bucket: `burst` tokens to start with, `qps` refill, one token per request.
 *
 * - `qps = Infinity` accepts everything (x/time/rate's `Inf`).
 * - `qps = 0` hands out the `burst` initial tokens and then nothing (x/time/rate's limit 0).
 * - `burst = 0` never accepts (unless `qps` is `Infinity`).
 *
 * A clock that steps back refills nothing. client-go's REST config turns `qps <= 0` into
 * "no limiter" or the defaults before it builds one; see `restClientRateLimiter` in
 * `@nodeagent/informer`.
 *
 * @example
 * ```ts
 * const limiter = new TokenBucketRateLimiter(50, 100);
 * await limiter.wait(signal); // at once for the first 100, then 20 ms apart
 * ```
 */
export class TokenBucketRateLimiter implements RequestRateLimiter {
  readonly #clock: Clock;
  #tokens: number;
  /** When `#tokens` was last brought up to date, ms (undefined before the first use). */
  #lastMs: number | undefined;
  /** The latest time to act of any reservation, ms (x/time/rate's `lastEvent`). */
  #lastEventMs = Number.NEGATIVE_INFINITY;

  /**
   * @param qps tokens added per second. Minimum: 0; `Infinity` means no limit.
   * @param burst the bucket size and the initial tokens. An integer, minimum: 0.
   * @param clock the time source for refills and waits. Default: `realClock`.
   */
  constructor(
    readonly qps: number,
    readonly burst: number,
    clock: Clock = realClock,
  ) {
    if (!(qps >= 0)) {
      throw new InvalidOptionsError('TokenBucketRateLimiter', `qps must be a number >= 0, got ${qps}`);
    }
    if (!Number.isInteger(burst) || burst < 0) {
      throw new InvalidOptionsError('TokenBucketRateLimiter', `burst must be an integer >= 0, got ${burst}`);
    }
    this.#clock = clock;
    this.#tokens = burst;
  }

  /** Tokens available now (fractional while refilling; negative while tokens are reserved ahead). */
  tokensAt(nowMs: number = this.#clock.now()): number {
    if (this.qps === Number.POSITIVE_INFINITY) return this.burst;
    return this.#advance(nowMs);
  }

  /** Takes a token if one is available now (client-go's `TryAccept`). */
  tryAccept(): boolean {
    return this.tryAcceptAt(this.#clock.now());
  }

  /**
   * {@link TokenBucketRateLimiter.tryAccept} at an explicit time, for callers that pass time
   * around instead of holding a clock (x/time/rate's `AllowN(t, 1)`).
   */
  tryAcceptAt(nowMs: number): boolean {
    if (this.qps === Number.POSITIVE_INFINITY) return true;
    const tokens = this.#advance(nowMs) - 1;
    if (tokens < 0) return false;
    this.#lastMs = nowMs;
    this.#tokens = tokens;
    this.#lastEventMs = nowMs;
    return true;
  }

  /**
   * Takes a token whatever the wait and returns how long until it is due, in ms (0 when one
   * was available); `undefined` when no token can ever come (see {@link RateLimiterWaitError}).
   * The reservation is committed: the caller must wait that long.
   */
  reserveDelayMs(nowMs: number = this.#clock.now()): number | undefined {
    if (this.qps === Number.POSITIVE_INFINITY) return 0;
    const r = this.#reserve(nowMs);
    return r === undefined ? undefined : r.timeToActMs - nowMs;
  }

  /** Takes a token, waiting for it if the bucket is empty (client-go's `Wait(ctx)`). */
  wait(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.qps === Number.POSITIVE_INFINITY) return RESOLVED;
    const now = this.#clock.now();
    const reservation = this.#reserve(now);
    if (reservation === undefined) return Promise.reject(new RateLimiterWaitError(this.qps, this.burst));
    const delayMs = reservation.timeToActMs - now;
    // The fast path of every request while the bucket has tokens: no timer, no listener.
    if (delayMs <= 0) return RESOLVED;
    return this.#clock.sleep(delayMs, signal).catch((err: unknown) => {
      this.#cancel(reservation, this.#clock.now());
      throw err;
    });
  }

  /** Tokens at `nowMs`, without changing state (x/time/rate's `advance`). */
  #advance(nowMs: number): number {
    const last = this.#lastMs === undefined ? nowMs : Math.min(this.#lastMs, nowMs);
    const refill = this.qps === 0 ? 0 : ((nowMs - last) * this.qps) / 1000;
    return Math.min(this.burst, this.#tokens + refill);
  }

  #reserve(nowMs: number): Reservation | undefined {
    if (this.burst < 1) return undefined;
    const tokens = this.#advance(nowMs) - 1;
    if (tokens < 0 && this.qps === 0) return undefined;
    const waitMs = tokens < 0 ? (-tokens * 1000) / this.qps : 0;
    const timeToActMs = nowMs + waitMs;
    this.#lastMs = nowMs;
    this.#tokens = tokens;
    this.#lastEventMs = timeToActMs;
    return { timeToActMs };
  }

  /**
   * Gives an unused reservation back (x/time/rate's `CancelAt`): only the part of its token
   * that no later reservation counts on returns to the bucket.
   */
  #cancel(r: Reservation, nowMs: number): void {
    if (r.timeToActMs < nowMs) return;
    const reservedAfter = ((this.#lastEventMs - r.timeToActMs) * this.qps) / 1000;
    const restore = 1 - reservedAfter;
    if (restore <= 0) return;
    this.#tokens = Math.min(this.burst, this.#advance(nowMs) + restore);
    this.#lastMs = nowMs;
    if (r.timeToActMs === this.#lastEventMs) {
      const prevEventMs = r.timeToActMs - 1000 / this.qps;
      if (prevEventMs >= nowMs) this.#lastEventMs = prevEventMs;
    }
  }
}

const RESOLVED: Promise<void> = Promise.resolve();

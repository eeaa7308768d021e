/**
 * client-go's client-side throttling of a REST client (`rest/config.go` `RESTClientFor`,
 * `rest/request.go` `tryThrottle`): one token bucket per client config, shared by every
 * request made with it; a request waits for a token before it is sent, the wait is
 * observed in `rest_client_rate_limiter_duration_seconds{verb,host}`, and a wait longer than
 * 50 ms is logged as "Waited before sending request" (at debug, klog's V(3)); a wait longer
 * than 1 s also at info, at most once per 10 s per limiter (klog's throttled logger).
 *
 * As client-go, watches are not throttled: only requests that complete (list, get, create,
 * update, patch, delete).
 *
 * @module
 */
import {
  type Clock,
  formatGoDuration,
  InvalidOptionsError,
  type Logger,
  noopLogger,
  type RequestRateLimiter,
  realClock,
  TokenBucketRateLimiter,
} from '@nodeagent/core';
import type { RestClientMetrics } from './rest-client-metrics.js';

/** client-go's `rest.DefaultQPS`: what a config with `QPS: 0` gets. */
export const DEFAULT_REST_CLIENT_QPS = 5;
/** client-go's `rest.DefaultBurst`: what a config with `Burst: 0` gets. */
export const DEFAULT_REST_CLIENT_BURST = 10;
/** client-go's `longThrottleLatency`: longer waits are logged at debug. */
export const LONG_THROTTLE_LATENCY_MS = 50;
/** client-go's `extraLongThrottleLatency`: longer waits are also logged at info, throttled. */
export const EXTRA_LONG_THROTTLE_LATENCY_MS = 1000;
/** client-go's throttled logger writes its level-0 line at most this often. */
const EXTRA_LONG_LOG_INTERVAL_MS = 10_000;

/** A REST client config's rate limit, as client-go's `rest.Config` `QPS` / `Burst`. */
export interface RestClientRateLimitOptions {
  /**
   * Requests per second. `0` means client-go's default ({@link DEFAULT_REST_CLIENT_QPS});
   * a negative value means no client-side limit.
   * @default 0
   */
  readonly qps?: number;
  /**
   * Requests allowed at once above `qps`; the bucket starts full. `0` means client-go's
   * default ({@link DEFAULT_REST_CLIENT_BURST}). Minimum: 0.
   * @default 0
   */
  readonly burst?: number;
  /** The time source of the bucket. Default: `realClock`. */
  readonly clock?: Clock;
}

/**
 * The limiter client-go's `RESTClientFor` builds from a config's `QPS` / `Burst`: a token
 * bucket with the defaults filled in, or `undefined` (no limit) for a negative `qps`. Share
 * the result between every client made from one config.
 *
 * @example
 * ```ts
 * const limiter = restClientRateLimiter({ qps: 50, burst: 100 }); // the kubelet's defaults
 * new RestListerWatcher({ kubeConfig, path, rateLimiter: limiter });
 * ```
 */
export function restClientRateLimiter(
  options: RestClientRateLimitOptions = {},
): TokenBucketRateLimiter | undefined {
  const qps = options.qps ?? 0;
  const burst = options.burst ?? 0;
  if (Number.isNaN(qps))
    throw new InvalidOptionsError('restClientRateLimiter', `qps must be a number, got ${qps}`);
  if (!Number.isInteger(burst) || burst < 0) {
    throw new InvalidOptionsError('restClientRateLimiter', `burst must be an integer >= 0, got ${burst}`);
  }
  if (qps < 0) return undefined;
  return new TokenBucketRateLimiter(
    qps === 0 ? DEFAULT_REST_CLIENT_QPS : qps,
    burst === 0 ? DEFAULT_REST_CLIENT_BURST : burst,
    options.clock ?? realClock,
  );
}

/** When each limiter last wrote its info line: one throttled logger per client config, as client-go's is global. */
const lastInfoLogMs = new WeakMap<RequestRateLimiter, number>();

/** What {@link throttleRequest} needs besides the request. */
export interface RequestThrottle {
  /** The client config's shared limiter; no wait (and no metric) when unset. */
  readonly limiter: RequestRateLimiter | undefined;
  /** Where "Waited before sending request" goes. */
  readonly logger?: Logger;
  /** Where `rest_client_rate_limiter_duration_seconds` goes. */
  readonly metrics: RestClientMetrics;
  /** Measures the wait. Default: `realClock` (pass the limiter's clock). */
  readonly clock?: Clock;
}

/**
 * Waits for a token of `throttle.limiter` before a `verb` request to `url` (client-go's
 * `tryThrottle`): observes the wait, logs a long one. Rejects when `signal` aborts.
 */
export async function throttleRequest(
  throttle: RequestThrottle,
  verb: string,
  url: URL,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { limiter } = throttle;
  if (limiter === undefined) return;
  const clock = throttle.clock ?? realClock;
  const started = clock.now();
  try {
    await limiter.wait(signal);
  } finally {
    const waitedMs = clock.now() - started;
    throttle.metrics.rateLimiterLatency(verb, url.host, waitedMs / 1000);
    if (waitedMs > LONG_THROTTLE_LATENCY_MS) logWait(throttle, limiter, clock, waitedMs, verb, url);
  }
}

function logWait(
  throttle: RequestThrottle,
  limiter: RequestRateLimiter,
  clock: Clock,
  waitedMs: number,
  verb: string,
  url: URL,
): void {
  const logger = throttle.logger ?? noopLogger;
  const fields = {
    delay: formatGoDuration(waitedMs),
    reason: 'client-side throttling, not priority and fairness',
    verb,
    URL: url.toString(),
  };
  logger.debug(fields, 'Waited before sending request');
  if (waitedMs <= EXTRA_LONG_THROTTLE_LATENCY_MS) return;
  const now = clock.now();
  const last = lastInfoLogMs.get(limiter);
  if (last !== undefined && now - last < EXTRA_LONG_LOG_INTERVAL_MS) return;
  lastInfoLogMs.set(limiter, now);
  logger.info(fields, 'Waited before sending request');
}

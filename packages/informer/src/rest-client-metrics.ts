/**
 * client-go's REST client metrics (`k8s.io/client-go/tools/metrics`, registered by
 * `k8s.io/component-base/metrics/prometheus/restclient`) for the informer's own HTTP client,
 * with the same names, labels and buckets, so dashboards built for Go components work. Any
 * REST client can report here (the informer's lister-watcher, an agent's own API client).
 *
 * @module
 */
import { createMetricFactory, type MetricsOptions } from '@nodeagent/core';

/** The metric names {@link createRestClientMetrics} registers. */
export const REST_CLIENT_METRIC_NAMES = [
  'rest_client_requests_total',
  'rest_client_request_duration_seconds',
  'rest_client_rate_limiter_duration_seconds',
] as const;

/** client-go's `rest_client_request_duration_seconds` (and `_rate_limiter_`) buckets, in seconds. */
export const REST_CLIENT_DURATION_BUCKETS: readonly number[] = [
  0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60,
];

/** The `code` label of a request that got no HTTP response (client-go's spelling). */
export const REST_CLIENT_ERROR_CODE = '<error>';

/** What the REST client reports; {@link noopRestClientMetrics} when no registry is configured. */
export interface RestClientMetrics {
  /**
   * A request got its final answer: `code` is the HTTP status, or {@link REST_CLIENT_ERROR_CODE}
   * when no response arrived. `host` is the server URL's `host[:port]`.
   */
  requestResult(code: number | undefined, method: string, host: string): void;
  /** A request (a list, its body included) completed after `seconds`. */
  requestLatency(verb: string, host: string, seconds: number): void;
  /** A request waited `seconds` for the client-side rate limiter (0 when a token was available). */
  rateLimiterLatency(verb: string, host: string, seconds: number): void;
}

/** Records nothing. */
export const noopRestClientMetrics: RestClientMetrics = {
  requestResult() {},
  requestLatency() {},
  rateLimiterLatency() {},
};

/**
 * Creates (or reuses, when another client already registered them) the `rest_client_*`
 * metrics on `metrics.registry`.
 */
export function createRestClientMetrics(metrics: MetricsOptions): RestClientMetrics {
  const factory = createMetricFactory(metrics);
  const requests = factory.counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'],
  });
  const latency = factory.histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'],
    buckets: REST_CLIENT_DURATION_BUCKETS,
  });
  const rateLimiter = factory.histogram({
    name: 'rest_client_rate_limiter_duration_seconds',
    help: 'Client side rate limiter latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'],
    buckets: REST_CLIENT_DURATION_BUCKETS,
  });
  return {
    requestResult: (code, method, host) =>
      requests.inc({ code: code === undefined ? REST_CLIENT_ERROR_CODE : String(code), method, host }),
    requestLatency: (verb, host, seconds) => latency.observe({ verb, host }, seconds),
    rateLimiterLatency: (verb, host, seconds) => rateLimiter.observe({ verb, host }, seconds),
  };
}

/**
 * The status side's metrics: upstream's `kubelet_pod_status_sync_duration_seconds`, and a
 * count of API requests by resource, verb and result so the write rate can be watched.
 *
 * @module
 */
import {
  type CounterLike,
  createMetricFactory,
  type HistogramLike,
  type MetricsOptions,
} from '@nodeagent/core';

/** The metrics the status pieces record (no-ops without `MetricsOptions`). */
export interface StatusMetrics {
  /** Seconds from a status being set to it reaching the API. */
  readonly podStatusSyncDuration: HistogramLike;
  /** API requests: `resource` (pods, nodes, leases), `verb`, `code` (`200`, `404`, `error`). */
  readonly apiRequests: CounterLike;
}

const noop = { inc: () => {}, observe: () => {} } as unknown as CounterLike & HistogramLike;

/** Creates (or reuses) the metrics on `options.registry`. */
export function statusMetrics(options: MetricsOptions | undefined): StatusMetrics {
  if (options === undefined) return { podStatusSyncDuration: noop, apiRequests: noop };
  const factory = createMetricFactory(options);
  return {
    podStatusSyncDuration: factory.histogram({
      name: 'kubelet_pod_status_sync_duration_seconds',
      help: 'Duration in seconds to sync a pod status update. Measures time from detection of a change to pod status until the API is successfully updated for that pod, even if multiple intevening changes to pod status occur.',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 20, 30, 45, 60],
    }),
    apiRequests: factory.counter({
      name: 'nodeagent_status_api_requests_total',
      help: 'API requests of the status side by resource, verb and HTTP code (or "error").',
      labelNames: ['resource', 'verb', 'code'],
    }),
  };
}

/** Runs one API call, counting it in `apiRequests` by its outcome. */
export async function countedCall<T>(
  metrics: StatusMetrics,
  resource: string,
  verb: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    const result = await call();
    metrics.apiRequests.inc({ resource, verb, code: '200' });
    return result;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    metrics.apiRequests.inc({ resource, verb, code: typeof code === 'number' ? String(code) : 'error' });
    throw err;
  }
}

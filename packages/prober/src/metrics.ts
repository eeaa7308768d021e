/**
 * The prober's metrics under upstream's names and labels: `prober_probe_total` (BETA) and
 * `prober_probe_duration_seconds` (ALPHA), on a registry the caller owns.
 *
 * @module
 */
import { createMetricFactory, type MetricLabels, type MetricsOptions } from '@nodeagent/core';

/** Prometheus' default buckets (what component-base uses when none are given), seconds. */
const DEFAULT_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What workers record. @internal */
export interface ProberMetrics {
  /** False without a registry: workers then build no label sets. */
  readonly enabled: boolean;
  /** Counts one probe by result (`successful`, `failed`, `unknown`). */
  probe(labels: MetricLabels): void;
  /** Observes a probe's duration. */
  duration(labels: MetricLabels, seconds: number): void;
  /** Deletes a worker's series when it stops (as upstream does). */
  remove(total: readonly MetricLabels[], durations: readonly MetricLabels[]): void;
}

const noop: ProberMetrics = { enabled: false, probe() {}, duration() {}, remove() {} };

/** Builds the metrics for `options` (no-op without). @internal */
export function createProberMetrics(options: MetricsOptions | undefined): ProberMetrics {
  if (options === undefined) return noop;
  const factory = createMetricFactory(options);
  const total = factory.counter({
    name: 'prober_probe_total',
    help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
    labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
  });
  const duration = factory.histogram({
    name: 'prober_probe_duration_seconds',
    help: 'Duration in seconds for a probe response.',
    labelNames: ['probe_type', 'container', 'pod', 'namespace'],
    buckets: DEFAULT_BUCKETS_SECONDS,
  });
  // prom-client metrics have remove(labels); the structural types in core do not name it.
  const removeFrom = (metric: unknown, labels: MetricLabels): void => {
    (metric as { remove?: (l: MetricLabels) => void }).remove?.(labels);
  };
  return {
    enabled: true,
    probe: (labels) => total.inc(labels),
    duration: (labels, seconds) => duration.observe(labels, seconds),
    remove(totals, durations) {
      for (const l of totals) removeFrom(total, l);
      for (const l of durations) removeFrom(duration, l);
    },
  };
}

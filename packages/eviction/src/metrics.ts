/**
 * The eviction manager's metrics under the kubelet's names: `kubelet_evictions{eviction_signal}`
 * and `kubelet_eviction_stats_age_seconds{eviction_signal}`, on a registry the caller owns.
 *
 * @module
 */
import { createMetricFactory, type MetricsOptions } from '@nodeagent/core';

/** Prometheus' default buckets (what component-base uses when none are given), seconds. */
const DEFAULT_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Names of the metrics this package registers. */
export const EVICTION_METRIC_NAMES = ['kubelet_evictions', 'kubelet_eviction_stats_age_seconds'] as const;

/** What the manager records. @internal */
export interface EvictionMetrics {
  /** One pod evicted for `signal`. */
  eviction(signal: string): void;
  /** Age of the stats a decision on `signal` was based on, seconds. */
  statsAge(signal: string, seconds: number): void;
}

const noop: EvictionMetrics = { eviction() {}, statsAge() {} };

/** Builds the metrics for `options` (no-op without). @internal */
export function createEvictionMetrics(options: MetricsOptions | undefined): EvictionMetrics {
  if (options === undefined) return noop;
  const factory = createMetricFactory(options);
  const evictions = factory.counter({
    name: 'kubelet_evictions',
    help: 'Cumulative number of pod evictions by eviction signal',
    labelNames: ['eviction_signal'],
  });
  const age = factory.histogram({
    name: 'kubelet_eviction_stats_age_seconds',
    help: 'Time between when stats are collected, and when pod is evicted based on those stats by eviction signal',
    labelNames: ['eviction_signal'],
    buckets: DEFAULT_BUCKETS_SECONDS,
  });
  return {
    eviction: (signal) => evictions.inc({ eviction_signal: signal }),
    statsAge: (signal, seconds) => age.observe({ eviction_signal: signal }, seconds),
  };
}

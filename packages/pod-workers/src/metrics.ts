/**
 * The kubelet's pod-worker metrics on a registry the caller owns:
 * `kubelet_pod_worker_duration_seconds{operation_type}`,
 * `kubelet_pod_worker_start_duration_seconds` and
 * `kubelet_working_pods{lifecycle,config,static}`.
 *
 * Nothing here imports prom-client: the caller passes the module
 * (`import * as promClient from 'prom-client'`) in `MetricsOptions`.
 *
 * @module
 */
import { createMetricFactory, type MetricsOptions } from '@nodeagent/core';
import type { PodWorkerState, PodWorkerSync } from './types.js';

/** Where {@link PodWorkers} reports metrics: core's {@link MetricsOptions}. */
export type PodWorkersMetricsOptions = MetricsOptions;

/** The metric names this package registers. */
export const POD_WORKER_METRIC_NAMES = [
  'kubelet_pod_worker_duration_seconds',
  'kubelet_pod_worker_start_duration_seconds',
  'kubelet_working_pods',
] as const;

/** prometheus/client_golang `DefBuckets`, which the kubelet uses for both histograms (seconds). */
const DEF_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const LIFECYCLES: readonly PodWorkerState[] = ['sync', 'terminating', 'terminated'];
const CONFIGS = ['desired', 'orphan', 'runtime_only'] as const;

/**
 * What the workers record.
 * @internal
 */
export interface PodWorkerMetrics {
  /** One update processed, `seconds` after its start time; `operation` is the update type or `terminated`. */
  observeWorkerDuration(operation: string, seconds: number): void;
  /** A worker started, `seconds` after the start time of its first update. */
  observeWorkerStart(seconds: number): void;
  /** The worker counts from a `syncKnownPods` pass. */
  setWorkingPods(workers: ReadonlyMap<string, PodWorkerSync>): void;
}

/** @internal */
export const noopPodWorkerMetrics: PodWorkerMetrics = {
  observeWorkerDuration() {},
  observeWorkerStart() {},
  setWorkingPods() {},
};

/**
 * Creates (or reuses, when another instance registered them on the same registry) the
 * pod-worker metrics.
 * @internal
 */
export function createPodWorkerMetrics(options: PodWorkersMetricsOptions): PodWorkerMetrics {
  const factory = createMetricFactory(options);
  const duration = factory.histogram({
    name: 'kubelet_pod_worker_duration_seconds',
    help: 'Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync',
    labelNames: ['operation_type'],
    buckets: DEF_BUCKETS,
  });
  const start = factory.histogram({
    name: 'kubelet_pod_worker_start_duration_seconds',
    help: 'Duration in seconds from kubelet seeing a pod to starting a worker.',
    buckets: DEF_BUCKETS,
  });
  const working = factory.gauge({
    name: 'kubelet_working_pods',
    help:
      'Number of pods the kubelet is actually running, broken down by lifecycle phase, whether the pod is ' +
      'desired, orphaned, or runtime only (also orphaned), and whether the pod is static. An orphaned pod ' +
      'has been removed from local configuration or force deleted in the API and consumed by the Kubelet.',
    labelNames: ['lifecycle', 'config', 'static'],
  });
  return {
    observeWorkerDuration(operation, seconds) {
      duration.observe({ operation_type: operation }, Math.max(0, seconds));
    },
    observeWorkerStart(seconds) {
      start.observe(Math.max(0, seconds));
    },
    setWorkingPods(workers) {
      const counts = new Map<string, number>();
      for (const lifecycle of LIFECYCLES)
        for (const config of CONFIGS)
          for (const isStatic of ['true', 'false']) counts.set(`${lifecycle}|${config}|${isStatic}`, 0);
      for (const sync of workers.values()) {
        const config = sync.orphan ? (sync.hasConfig ? 'orphan' : 'runtime_only') : 'desired';
        const key = `${sync.state}|${config}|${String(sync.static)}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      for (const [key, value] of counts) {
        const [lifecycle, config, isStatic] = key.split('|') as [string, string, string];
        working.set({ lifecycle, config, static: isStatic }, value);
      }
    },
  };
}

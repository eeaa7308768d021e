/**
 * The kubelet's runtime-operation metrics for CRI calls (`runtime_operations_total`,
 * `runtime_operations_duration_seconds`, `runtime_operations_errors_total`, labelled by
 * `operation_type`), registered on a prom-client registry the caller owns.
 *
 * @module
 */
import { createMetricFactory, type MetricsOptions } from '@nodeagent/core';

/** Where and how {@link createCriClient} reports call metrics. */
export interface CriClientMetricsOptions extends MetricsOptions {
  /**
   * Prefix of the metric names; the default gives the kubelet's exact names
   * (`kubelet_runtime_operations_total`, …) so existing dashboards work.
   * @default 'kubelet_'
   */
  readonly prefix?: string;
}

/** Records one finished call. */
export interface CallRecorder {
  /** Records a call of `operationType` that took `seconds`; `failed` counts it as an error too. */
  record(operationType: string, seconds: number, failed: boolean): void;
}

/** The kubelet's buckets for runtime_operations_duration_seconds: 5 ms × 2.5^n, 14 buckets. */
const DURATION_BUCKETS_SECONDS: readonly number[] = Array.from({ length: 14 }, (_, i) => 0.005 * 2.5 ** i);

/** Creates (or reuses, when already registered on the registry) the three metrics. */
export function createCallRecorder(options: CriClientMetricsOptions): CallRecorder {
  const factory = createMetricFactory(options);
  const prefix = options.prefix ?? 'kubelet_';
  const labelNames = ['operation_type'];
  const total = factory.counter({
    name: `${prefix}runtime_operations_total`,
    help: 'Cumulative number of runtime operations by operation type.',
    labelNames,
  });
  const errors = factory.counter({
    name: `${prefix}runtime_operations_errors_total`,
    help: 'Cumulative number of runtime operation errors by operation type.',
    labelNames,
  });
  const duration = factory.histogram({
    name: `${prefix}runtime_operations_duration_seconds`,
    help: 'Duration in seconds of runtime operations. Broken down by operation type.',
    labelNames,
    buckets: DURATION_BUCKETS_SECONDS,
  });
  return {
    record(operationType, seconds, failed) {
      const labels = { operation_type: operationType };
      total.inc(labels);
      duration.observe(labels, seconds);
      if (failed) errors.inc(labels);
    },
  };
}

/** `ListPodSandbox` → `list_pod_sandbox`: the operation_type label of an RPC. */
export function operationType(rpcName: string): string {
  return rpcName.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

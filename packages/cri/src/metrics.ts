/**
 * The kubelet's runtime-operation metrics for CRI calls (`runtime_operations_total`,
 * `runtime_operations_duration_seconds`, `runtime_operations_errors_total`, labelled by
 * `operation_type`), registered on a prom-client registry the caller owns.
 *
 * @module
 */
import type { PromClientModule, PromRegistry } from '@nodeagent/core';
import type * as PromClient from 'prom-client';

/** Where and how {@link createCriClient} reports call metrics. */
export interface CriClientMetricsOptions {
  /** The registry the metrics are registered on (never prom-client's global one unless you pass it). */
  readonly registry: PromRegistry;
  /** The prom-client module: `import * as promClient from 'prom-client'`. */
  readonly promClient: PromClientModule;
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

type Label = 'operation_type';

/** Creates (or reuses, when already registered on the registry) the three metrics. */
export function createCallRecorder(options: CriClientMetricsOptions): CallRecorder {
  const { registry, promClient } = options;
  const prefix = options.prefix ?? 'kubelet_';
  const labelNames: Label[] = ['operation_type'];
  const counter = (name: string, help: string): PromClient.Counter<Label> =>
    (registry.getSingleMetric(name) as PromClient.Counter<Label> | undefined) ??
    new promClient.Counter({ name, help, labelNames, registers: [registry] });
  const total = counter(
    `${prefix}runtime_operations_total`,
    'Cumulative number of runtime operations by operation type.',
  );
  const errors = counter(
    `${prefix}runtime_operations_errors_total`,
    'Cumulative number of runtime operation errors by operation type.',
  );
  const durationName = `${prefix}runtime_operations_duration_seconds`;
  const duration =
    (registry.getSingleMetric(durationName) as PromClient.Histogram<Label> | undefined) ??
    new promClient.Histogram({
      name: durationName,
      help: 'Duration in seconds of runtime operations. Broken down by operation type.',
      labelNames,
      buckets: [...DURATION_BUCKETS_SECONDS],
      registers: [registry],
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

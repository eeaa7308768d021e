/**
 * PLEG metrics under the kubelet's names, on a prom-client registry the caller owns.
 * The caller passes the prom-client module (`MetricsOptions`); nothing here imports it.
 * Metrics are created on first use, and a metric already on the registry under the same name
 * (e.g. shared by a generic and an evented PLEG) is reused.
 *
 * @module
 */
import { createMetricFactory, type MetricsOptions } from '@nodeagent/core';
import type { RuntimePod } from '@nodeagent/kubecontainer';

/** Options for PLEG metrics. */
export interface PlegMetricsOptions extends MetricsOptions {
  /** Prefix of every metric name (the kubelet's subsystem). @default 'kubelet_' */
  readonly prefix?: string;
}

/** Prometheus' default histogram buckets (the kubelet's `metrics.DefBuckets`), seconds. */
const DEFAULT_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What the PLEGs record; every method is a no-op without a registry. @internal */
export interface PlegMetricsRecorder {
  relistDuration(seconds: number): void;
  relistInterval(seconds: number): void;
  lastSeen(epochSeconds: number): void;
  discardEvent(): void;
  eventedConnectionError(): void;
  eventedConnectionSuccess(): void;
  eventedLatency(seconds: number): void;
  /** `kubelet_running_pods` and `kubelet_running_containers` from one listing. */
  runningPodsAndContainers(pods: readonly RuntimePod[]): void;
}

/** A recorder that records nothing. @internal */
export const noopPlegMetrics: PlegMetricsRecorder = {
  relistDuration() {},
  relistInterval() {},
  lastSeen() {},
  discardEvent() {},
  eventedConnectionError() {},
  eventedConnectionSuccess() {},
  eventedLatency() {},
  runningPodsAndContainers() {},
};

/** Builds the recorder for `options` (no-op when `undefined`). @internal */
export function createPlegMetricsRecorder(options: PlegMetricsOptions | undefined): PlegMetricsRecorder {
  if (options === undefined) return noopPlegMetrics;
  const factory = createMetricFactory(options);
  const prefix = options.prefix ?? 'kubelet_';
  const lazy = <M>(make: () => M): (() => M) => {
    let metric: M | undefined;
    return () => {
      metric ??= make();
      return metric;
    };
  };
  const histogram = (name: string, help: string) =>
    lazy(() => factory.histogram({ name: prefix + name, help, buckets: DEFAULT_BUCKETS_SECONDS }));
  const counter = (name: string, help: string) => lazy(() => factory.counter({ name: prefix + name, help }));
  const gauge = (name: string, help: string) => lazy(() => factory.gauge({ name: prefix + name, help }));
  const duration = histogram(
    'pleg_relist_duration_seconds',
    'Duration in seconds for relisting pods in PLEG.',
  );
  const interval = histogram(
    'pleg_relist_interval_seconds',
    'Interval in seconds between relisting in PLEG.',
  );
  const lastSeen = gauge('pleg_last_seen_seconds', 'Timestamp in seconds when PLEG was last seen active.');
  const discard = counter('pleg_discard_events', 'The number of discard events in PLEG.');
  const connError = counter(
    'evented_pleg_connection_error_count',
    'The number of errors encountered during the establishment of streaming connection with the CRI runtime.',
  );
  const connSuccess = counter(
    'evented_pleg_connection_success_count',
    'The number of times a streaming client was obtained to receive CRI Events.',
  );
  const latency = histogram(
    'evented_pleg_connection_latency_seconds',
    'The latency of streaming connection with the CRI runtime, measured in seconds.',
  );
  const runningPods = gauge('running_pods', 'Number of pods that have a running pod sandbox');
  const runningContainers = lazy(() =>
    factory.gauge({
      name: `${prefix}running_containers`,
      help: 'Number of containers currently running',
      labelNames: ['container_state'],
    }),
  );
  const seenStates = new Set<string>();
  return {
    relistDuration: (s) => duration().observe(s),
    relistInterval: (s) => interval().observe(s),
    lastSeen: (s) => lastSeen().set(s),
    discardEvent: () => discard().inc(),
    eventedConnectionError: () => connError().inc(),
    eventedConnectionSuccess: () => connSuccess().inc(),
    eventedLatency: (s) => latency().observe(s),
    runningPodsAndContainers(pods) {
      // As upstream's updateRunningPodAndContainerMetrics: containers counted by state, a pod
      // counted when one of its sandboxes runs. A state that no container is in any more is
      // set to 0 (upstream leaves its last value).
      const byState = new Map<string, number>();
      let running = 0;
      for (const pod of pods) {
        for (const c of pod.containers) byState.set(c.state, (byState.get(c.state) ?? 0) + 1);
        if (pod.sandboxes.some((s) => s.state === 'running')) running++;
      }
      for (const state of seenStates)
        if (!byState.has(state)) runningContainers().set({ container_state: state }, 0);
      for (const [state, n] of byState) {
        seenStates.add(state);
        runningContainers().set({ container_state: state }, n);
      }
      runningPods().set(running);
    },
  };
}

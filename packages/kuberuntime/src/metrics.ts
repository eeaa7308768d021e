/**
 * The kubelet runtime metrics this package records, on a registry you own (never the global
 * one), through core's {@link MetricsOptions}.
 *
 * @module
 */
import { createMetricFactory, type MetricsOptions } from '@nodeagent/core';

/** Recorder of the runtime manager's metrics. */
export interface RuntimeMetrics {
  /** `kubelet_started_pods_total` (+ `_errors_total` when `failed`). */
  startedPod(failed: boolean): void;
  /** `kubelet_started_containers_total{container_type}` (+ errors with `code`). */
  startedContainer(containerType: 'container' | 'init_container', errorCode?: string): void;
  /** `kubelet_run_podsandbox_duration_seconds{runtime_handler}` (+ errors). */
  observeRunPodSandbox(seconds: number, failed: boolean): void;
  /** `kubelet_image_pull_duration_seconds{image_size_in_bytes}`. */
  observeImagePull(seconds: number, sizeBytes: number): void;
}

const SIZE_BUCKETS: readonly [number, string][] = [
  [10 * 2 ** 20, '0-10MB'],
  [100 * 2 ** 20, '10MB-100MB'],
  [500 * 2 ** 20, '100MB-500MB'],
  [2 ** 30, '500MB-1GB'],
  [5 * 2 ** 30, '1GB-5GB'],
  [10 * 2 ** 30, '5GB-10GB'],
  [20 * 2 ** 30, '10GB-20GB'],
  [50 * 2 ** 30, '20GB-50GB'],
  [100 * 2 ** 30, '50GB-100GB'],
];

/** The `image_size_in_bytes` label value of an image size. */
export function imageSizeBucket(sizeBytes: number): string {
  for (const [limit, label] of SIZE_BUCKETS) if (sizeBytes < limit) return label;
  return '100GB+';
}

/** Registers (or reuses) the metrics on `options.registry`. */
export function createRuntimeMetrics(options: MetricsOptions): RuntimeMetrics {
  const factory = createMetricFactory(options);
  const startedPods = factory.counter({
    name: 'kubelet_started_pods_total',
    help: 'Cumulative number of pods started',
  });
  const startedPodsErrors = factory.counter({
    name: 'kubelet_started_pods_errors_total',
    help: 'Cumulative number of errors when starting pods',
  });
  const startedContainers = factory.counter({
    name: 'kubelet_started_containers_total',
    help: 'Cumulative number of containers started',
    labelNames: ['container_type'],
  });
  const startedContainersErrors = factory.counter({
    name: 'kubelet_started_containers_errors_total',
    help: 'Cumulative number of errors when starting containers',
    labelNames: ['container_type', 'code'],
  });
  const sandboxDuration = factory.histogram({
    name: 'kubelet_run_podsandbox_duration_seconds',
    help: 'Duration in seconds of the run_podsandbox operations. Broken down by RuntimeClass.Handler.',
    labelNames: ['runtime_handler'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  const sandboxErrors = factory.counter({
    name: 'kubelet_run_podsandbox_errors_total',
    help: 'Cumulative number of the run_podsandbox operation errors by RuntimeClass.Handler.',
    labelNames: ['runtime_handler'],
  });
  const imagePull = factory.histogram({
    name: 'kubelet_image_pull_duration_seconds',
    help: 'Duration in seconds to pull an image.',
    labelNames: ['image_size_in_bytes'],
    buckets: [0.5, 1, 5, 10, 20, 30, 60, 120, 180, 240, 300, 600, 900, 1200, 1800, 2700, 3600],
  });
  return {
    startedPod(failed) {
      startedPods.inc();
      if (failed) startedPodsErrors.inc();
    },
    startedContainer(containerType, errorCode) {
      startedContainers.inc({ container_type: containerType });
      if (errorCode !== undefined)
        startedContainersErrors.inc({ container_type: containerType, code: errorCode });
    },
    observeRunPodSandbox(seconds, failed) {
      sandboxDuration.observe({ runtime_handler: '' }, seconds);
      if (failed) sandboxErrors.inc({ runtime_handler: '' });
    },
    observeImagePull(seconds, sizeBytes) {
      imagePull.observe({ image_size_in_bytes: imageSizeBucket(sizeBytes) }, seconds);
    },
  };
}

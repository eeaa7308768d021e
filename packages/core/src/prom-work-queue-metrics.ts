/**
 * The prom-client adapter for {@link WorkQueueMetricsProvider}: client-go's metric names,
 * help texts, buckets and `name` label, registered on a registry the caller owns.
 *
 * @module
 */
import {
  createMetricFactory,
  type GaugeLike,
  MetricRegistrationError,
  type MetricsOptions,
} from './metrics.js';
import type {
  CounterMetric,
  GaugeMetric,
  HistogramMetric,
  WorkQueueMetricsProvider,
} from './work-queue-metrics.js';

/** client-go's buckets for both duration histograms: 10 ns to 10 s, ×10 each. */
const DURATION_BUCKETS_SECONDS: readonly number[] = Array.from({ length: 10 }, (_, i) => 1e-8 * 10 ** i);

type Readers = Map<string, () => number>;

/**
 * Readers of the pulled gauges, keyed by the gauge itself, so two providers for one registry
 * share the gauge and its readers instead of registering twice.
 */
const pulledGaugeReaders = new WeakMap<object, Readers>();

/**
 * A {@link WorkQueueMetricsProvider} that writes client-go's workqueue metrics to a
 * prom-client registry. Metrics are created on first use and shared by every queue on the
 * registry (each queue is a `name` label value); a metric already registered on the registry
 * by another provider is reused. Give queues on one registry distinct names.
 *
 * @throws {@link MetricRegistrationError} when the registry holds a metric of the same name
 * that this adapter did not create with the same kind.
 *
 * @example
 * ```ts
 * import * as promClient from 'prom-client';
 * const registry = new promClient.Registry();
 * const queue = new WorkQueue<string>({
 *   name: 'pods',
 *   metrics: createPromMetricsProvider({ registry, promClient }),
 * });
 * ```
 */
export function createPromMetricsProvider(options: MetricsOptions): WorkQueueMetricsProvider {
  const factory = createMetricFactory(options);
  const labelNames = ['name'];
  const histogram = (name: string, help: string) =>
    factory.histogram({ name, help, labelNames, buckets: DURATION_BUCKETS_SECONDS });
  /** A gauge whose per-queue values are read when the registry is collected. */
  const pulledGauge = (metricName: string, help: string, queueName: string, read: () => number): void => {
    const existing = options.registry.getSingleMetric(metricName);
    if (existing !== undefined) {
      const readers =
        typeof existing === 'object' && existing !== null ? pulledGaugeReaders.get(existing) : undefined;
      if (readers === undefined) {
        factory.gauge({ name: metricName, help, labelNames }); // throws when it is not a gauge
        throw new MetricRegistrationError(metricName, 'registered by something other than this adapter');
      }
      readers.set(queueName, read);
      return;
    }
    const own: Readers = new Map([[queueName, read]]);
    const gauge = factory.gauge({
      name: metricName,
      help,
      labelNames,
      collect(this: GaugeLike) {
        for (const [name, readOne] of own) this.set({ name }, readOne());
      },
    });
    pulledGaugeReaders.set(gauge, own);
  };

  return {
    newDepthMetric(name): GaugeMetric {
      const gauge = factory.gauge({
        name: 'workqueue_depth',
        help: 'Current depth of workqueue',
        labelNames,
      });
      gauge.set({ name }, 0);
      return { inc: () => gauge.inc({ name }), dec: () => gauge.dec({ name }) };
    },
    newAddsMetric(name): CounterMetric {
      const counter = factory.counter({
        name: 'workqueue_adds_total',
        help: 'Total number of adds handled by workqueue',
        labelNames,
      });
      return { inc: () => counter.inc({ name }) };
    },
    newLatencyMetric(name): HistogramMetric {
      const h = histogram(
        'workqueue_queue_duration_seconds',
        'How long in seconds an item stays in workqueue before being requested.',
      );
      return { observe: (s) => h.observe({ name }, s) };
    },
    newWorkDurationMetric(name): HistogramMetric {
      const h = histogram(
        'workqueue_work_duration_seconds',
        'How long in seconds processing an item from workqueue takes.',
      );
      return { observe: (s) => h.observe({ name }, s) };
    },
    newUnfinishedWorkSecondsMetric(name, read): void {
      pulledGauge(
        'workqueue_unfinished_work_seconds',
        "How many seconds of work has done that is in progress and hasn't been observed by work_duration. " +
          'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the ' +
          'rate at which this increases.',
        name,
        read,
      );
    },
    newLongestRunningProcessorSecondsMetric(name, read): void {
      pulledGauge(
        'workqueue_longest_running_processor_seconds',
        'How many seconds has the longest running processor for workqueue been running.',
        name,
        read,
      );
    },
    newRetriesMetric(name): CounterMetric {
      const counter = factory.counter({
        name: 'workqueue_retries_total',
        help: 'Total number of retries handled by workqueue',
        labelNames,
      });
      return { inc: () => counter.inc({ name }) };
    },
  };
}

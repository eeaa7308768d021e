/**
 * The prom-client adapter for {@link WorkQueueMetricsProvider}: client-go's metric names,
 * help texts, buckets and `name` label, registered on a registry the caller owns.
 *
 * prom-client is an optional peer dependency. This module only imports its types; the
 * caller passes the module (`import * as promClient from 'prom-client'`), so
 * `@nodeagent/core` loads without prom-client installed.
 *
 * @module
 */
import type * as PromClient from 'prom-client';
import type {
  CounterMetric,
  GaugeMetric,
  HistogramMetric,
  WorkQueueMetricsProvider,
} from './work-queue-metrics.js';

/** A prom-client registry of either exposition format. */
export type PromRegistry =
  | PromClient.Registry<PromClient.PrometheusContentType>
  | PromClient.Registry<PromClient.OpenMetricsContentType>;

/** The prom-client constructors the adapter uses (pass the `prom-client` module itself). */
export type PromClientModule = Pick<typeof PromClient, 'Counter' | 'Gauge' | 'Histogram'>;

/** Options for {@link createPromMetricsProvider}. */
export interface PromMetricsProviderOptions {
  /** The registry the metrics are registered on (never prom-client's global one unless you pass it). */
  readonly registry: PromRegistry;
  /** The prom-client module: `import * as promClient from 'prom-client'`. */
  readonly promClient: PromClientModule;
}

/** client-go's buckets for both duration histograms: 10 ns to 10 s, ×10 each. */
const DURATION_BUCKETS_SECONDS: readonly number[] = Array.from({ length: 10 }, (_, i) => 1e-8 * 10 ** i);

/** Thrown when a registry already holds a metric with a work-queue name but of another kind. */
export class MetricRegistrationError extends Error {
  /** @param metricName the conflicting metric name. @param reason what is wrong with it. */
  constructor(
    readonly metricName: string,
    reason: string,
  ) {
    super(`cannot use metric ${metricName}: ${reason}`);
    this.name = 'MetricRegistrationError';
  }
}

type Label = 'name';
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
export function createPromMetricsProvider(options: PromMetricsProviderOptions): WorkQueueMetricsProvider {
  const { registry, promClient } = options;
  const labelNames: Label[] = ['name'];

  function reuse<M>(metricName: string, kind: abstract new (...args: never[]) => M): M | undefined {
    const found: unknown = registry.getSingleMetric(metricName);
    if (found === undefined) return undefined;
    if (!(found instanceof kind)) throw new MetricRegistrationError(metricName, `registered as another kind`);
    return found;
  }
  const gauge = (name: string, help: string) =>
    reuse(name, promClient.Gauge<Label>) ??
    new promClient.Gauge<Label>({ name, help, labelNames, registers: [registry] });
  const counter = (name: string, help: string) =>
    reuse(name, promClient.Counter<Label>) ??
    new promClient.Counter<Label>({ name, help, labelNames, registers: [registry] });
  const histogram = (name: string, help: string) =>
    reuse(name, promClient.Histogram<Label>) ??
    new promClient.Histogram<Label>({
      name,
      help,
      labelNames,
      buckets: [...DURATION_BUCKETS_SECONDS],
      registers: [registry],
    });
  /** A gauge whose per-queue values are read when the registry is collected. */
  const pulledGauge = (metricName: string, help: string, queueName: string, read: () => number): void => {
    let readers: Readers | undefined;
    const found = reuse(metricName, promClient.Gauge<Label>);
    if (found) {
      readers = pulledGaugeReaders.get(found);
      if (!readers)
        throw new MetricRegistrationError(metricName, 'registered by something other than this adapter');
    } else {
      const own: Readers = new Map();
      readers = own;
      const created = new promClient.Gauge<Label>({
        name: metricName,
        help,
        labelNames,
        registers: [registry],
        collect() {
          for (const [name, readOne] of own) this.set({ name }, readOne());
        },
      });
      pulledGaugeReaders.set(created, own);
    }
    readers.set(queueName, read);
  };

  return {
    newDepthMetric(name): GaugeMetric {
      const child = gauge('workqueue_depth', 'Current depth of workqueue').labels({ name });
      child.set(0);
      return { inc: () => child.inc(), dec: () => child.dec() };
    },
    newAddsMetric(name): CounterMetric {
      const child = counter('workqueue_adds_total', 'Total number of adds handled by workqueue').labels({
        name,
      });
      return { inc: () => child.inc() };
    },
    newLatencyMetric(name): HistogramMetric {
      const child = histogram(
        'workqueue_queue_duration_seconds',
        'How long in seconds an item stays in workqueue before being requested.',
      ).labels({ name });
      return { observe: (s) => child.observe(s) };
    },
    newWorkDurationMetric(name): HistogramMetric {
      const child = histogram(
        'workqueue_work_duration_seconds',
        'How long in seconds processing an item from workqueue takes.',
      ).labels({ name });
      return { observe: (s) => child.observe(s) };
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
      const child = counter('workqueue_retries_total', 'Total number of retries handled by workqueue').labels(
        {
          name,
        },
      );
      return { inc: () => child.inc() };
    },
  };
}

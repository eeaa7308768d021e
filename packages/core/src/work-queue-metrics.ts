/**
 * The metrics a {@link WorkQueue} reports, as a small provider interface in the shape of
 * client-go's `workqueue.MetricsProvider`, so any metrics library can back it. The
 * prom-client adapter is {@link createPromMetricsProvider}.
 *
 * @module
 */
import type { Clock } from './clock.js';

/** A gauge that moves up and down by one. */
export interface GaugeMetric {
  /** Adds one. */
  inc(): void;
  /** Subtracts one. */
  dec(): void;
}

/** A monotonically increasing counter. */
export interface CounterMetric {
  /** Adds one. */
  inc(): void;
}

/** A distribution of observations. */
export interface HistogramMetric {
  /** Records one observation, in seconds. */
  observe(seconds: number): void;
}

/**
 * Creates the metrics of one queue. Each method is called once per queue, with the queue's
 * `name` (the `name` label in client-go's metrics).
 */
export interface WorkQueueMetricsProvider {
  /** `workqueue_depth`: keys waiting to be processed. */
  newDepthMetric(name: string): GaugeMetric;
  /** `workqueue_adds_total`: adds that were not collapsed into a pending key. */
  newAddsMetric(name: string): CounterMetric;
  /** `workqueue_queue_duration_seconds`: how long a key waited before a worker got it. */
  newLatencyMetric(name: string): HistogramMetric;
  /** `workqueue_work_duration_seconds`: how long processing a key took (get to done). */
  newWorkDurationMetric(name: string): HistogramMetric;
  /**
   * `workqueue_unfinished_work_seconds`: the summed age of the work in progress. The
   * provider calls `read` when the value is collected (client-go polls every 500 ms; pulling
   * at scrape time needs no timer).
   */
  newUnfinishedWorkSecondsMetric(name: string, read: () => number): void;
  /** `workqueue_longest_running_processor_seconds`: the age of the oldest work in progress, pulled like the above. */
  newLongestRunningProcessorSecondsMetric(name: string, read: () => number): void;
  /** `workqueue_retries_total`: delayed and rate-limited adds. */
  newRetriesMetric(name: string): CounterMetric;
}

const noopGauge: GaugeMetric = { inc() {}, dec() {} };
const noopCounter: CounterMetric = { inc() {} };
const noopHistogram: HistogramMetric = { observe() {} };

/** A provider whose metrics record nothing: the default when no provider is given. */
export const noopWorkQueueMetricsProvider: WorkQueueMetricsProvider = {
  newDepthMetric: () => noopGauge,
  newAddsMetric: () => noopCounter,
  newLatencyMetric: () => noopHistogram,
  newWorkDurationMetric: () => noopHistogram,
  newUnfinishedWorkSecondsMetric: () => {},
  newLongestRunningProcessorSecondsMetric: () => {},
  newRetriesMetric: () => noopCounter,
};

/**
 * The bookkeeping behind one queue's metrics (add, get and done times per key).
 * @internal
 */
export class QueueMetricsRecorder<K> {
  private readonly depth: GaugeMetric;
  private readonly adds: CounterMetric;
  private readonly latency: HistogramMetric;
  private readonly workDuration: HistogramMetric;
  private readonly retries: CounterMetric;
  private readonly addTimes = new Map<K, number>();
  /** Insertion order is start order, so the first entry is the longest running. */
  private readonly processingStartTimes = new Map<K, number>();

  constructor(
    name: string,
    provider: WorkQueueMetricsProvider,
    private readonly clock: Clock,
  ) {
    this.depth = provider.newDepthMetric(name);
    this.adds = provider.newAddsMetric(name);
    this.latency = provider.newLatencyMetric(name);
    this.workDuration = provider.newWorkDurationMetric(name);
    this.retries = provider.newRetriesMetric(name);
    provider.newUnfinishedWorkSecondsMetric(name, () => this.unfinishedWorkSeconds());
    provider.newLongestRunningProcessorSecondsMetric(name, () => this.longestRunningProcessorSeconds());
  }

  add(key: K): void {
    this.adds.inc();
    this.depth.inc();
    if (!this.addTimes.has(key)) this.addTimes.set(key, this.clock.now());
  }

  get(key: K): void {
    this.depth.dec();
    const now = this.clock.now();
    const addedAt = this.addTimes.get(key);
    if (addedAt !== undefined) {
      this.latency.observe(Math.max(0, now - addedAt) / 1000);
      this.addTimes.delete(key);
    }
    this.processingStartTimes.set(key, now);
  }

  done(key: K): void {
    const startedAt = this.processingStartTimes.get(key);
    if (startedAt === undefined) return;
    this.workDuration.observe(Math.max(0, this.clock.now() - startedAt) / 1000);
    this.processingStartTimes.delete(key);
  }

  retry(): void {
    this.retries.inc();
  }

  unfinishedWorkSeconds(): number {
    const now = this.clock.now();
    let totalMs = 0;
    for (const startedAt of this.processingStartTimes.values()) totalMs += Math.max(0, now - startedAt);
    return totalMs / 1000;
  }

  longestRunningProcessorSeconds(): number {
    for (const startedAt of this.processingStartTimes.values()) {
      return Math.max(0, this.clock.now() - startedAt) / 1000;
    }
    return 0;
  }
}

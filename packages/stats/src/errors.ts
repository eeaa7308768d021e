/**
 * Errors of the stats package. Read failures are not thrown: each is counted per source
 * (`nodeagent_stats_errors_total{source}`, our own name — upstream has no per-object counter;
 * cAdvisor only sets `container_scrape_error`) and the object it concerns gets a partial result.
 *
 * @module
 */
import { type CounterLike, createMetricFactory, type Logger, type MetricsOptions } from '@nodeagent/core';

/** Where a failed read came from. */
export type StatsErrorSource = 'cgroup' | 'cri' | 'statfs' | 'du' | 'proc';

/** Thrown for invalid options of {@link createStatsProvider}. */
export class StatsOptionsError extends Error {
  override readonly name = 'StatsOptionsError';
  /** @param option the bad option. @param reason what would be valid. */
  constructor(
    readonly option: string,
    reason: string,
  ) {
    super(`invalid stats option ${option}: ${reason}`);
  }
}

/**
 * The runtime could not list its sandboxes or containers, so no Summary can be built (upstream:
 * `failed to list pod stats`); the kubelet server answers 500 and `/metrics/resource` writes
 * `resource_scrape_error 1`.
 */
export class StatsUnavailableError extends Error {
  override readonly name = 'StatsUnavailableError';
  /** @param rpc the CRI call that failed. @param cause its error. */
  constructor(
    readonly rpc: string,
    cause: unknown,
  ) {
    super(`failed to list pod stats: ${rpc}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}

/** Counts read failures and logs each at debug level. */
export class StatsErrorRecorder {
  private readonly counts = new Map<StatsErrorSource, number>();
  private readonly counter: CounterLike | undefined;

  /** @param logger where failures are logged. @param metrics where the counter is registered. */
  constructor(
    private readonly logger: Logger,
    metrics?: MetricsOptions,
  ) {
    this.counter =
      metrics === undefined
        ? undefined
        : createMetricFactory(metrics).counter({
            name: 'nodeagent_stats_errors_total',
            help: 'Reads of cgroup, /proc, statfs, du or CRI stats that failed; the object got a partial result.',
            labelNames: ['source'],
          });
  }

  /** Records one failure of `source` about `object`. */
  record(source: StatsErrorSource, object: string, reason: string): void {
    this.counts.set(source, (this.counts.get(source) ?? 0) + 1);
    this.counter?.inc({ source });
    this.logger.debug({ source, object, reason }, 'stats read failed');
  }

  /** Failures so far, by source. */
  snapshot(): Readonly<Record<StatsErrorSource, number>> {
    return {
      cgroup: this.counts.get('cgroup') ?? 0,
      cri: this.counts.get('cri') ?? 0,
      statfs: this.counts.get('statfs') ?? 0,
      du: this.counts.get('du') ?? 0,
      proc: this.counts.get('proc') ?? 0,
    };
  }
}

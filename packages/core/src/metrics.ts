/**
 * The one metrics-options shape of every `@nodeagent` package, and the factory packages use
 * to register their metrics.
 *
 * prom-client is an optional peer dependency. Packages never import it: the caller passes its
 * registry and the module itself (`import * as promClient from 'prom-client'`), so a package
 * loads, and its declarations type-check, without prom-client installed. The types below
 * are the small structural subset of prom-client that the packages use; prom-client 15's
 * `Registry` and module satisfy them.
 *
 * @module
 */
import { definedFields } from './optional.js';

/** Label values of one series. */
export type MetricLabels = Readonly<Record<string, string | number>>;

/** What the packages need of a prom-client `Registry`. */
export interface MetricsRegistry {
  /** The metric registered under `name`, if any. */
  getSingleMetric(name: string): unknown;
  /** Registers a metric created with `registers: []`. */
  registerMetric(metric: unknown): void;
}

/** The configuration shared by the three metric kinds. */
export interface MetricConfig {
  /** Full metric name, e.g. `kubelet_started_pods_total`. */
  readonly name: string;
  /** Help text. */
  readonly help: string;
  /** Label names, in order. @default [] */
  readonly labelNames?: readonly string[];
  /** Always empty: the factory registers the metric itself, never on prom-client's global registry. */
  readonly registers?: never[];
}

/** A counter (prom-client `Counter`). */
export interface CounterLike {
  /** Adds `value` (default 1) to the series of `labels`. */
  inc(labels: MetricLabels, value?: number): void;
  /** Adds `value` (default 1) to the unlabelled series. */
  inc(value?: number): void;
}

/** A gauge (prom-client `Gauge`). */
export interface GaugeLike {
  /** Sets the series of `labels`. */
  set(labels: MetricLabels, value: number): void;
  /** Sets the unlabelled series. */
  set(value: number): void;
  /** Adds `value` (default 1). */
  inc(labels: MetricLabels, value?: number): void;
  /** Adds `value` (default 1) to the unlabelled series. */
  inc(value?: number): void;
  /** Subtracts `value` (default 1). */
  dec(labels: MetricLabels, value?: number): void;
  /** Subtracts `value` (default 1) from the unlabelled series. */
  dec(value?: number): void;
}

/** A histogram (prom-client `Histogram`). */
export interface HistogramLike {
  /** Observes `value` in the series of `labels`. */
  observe(labels: MetricLabels, value: number): void;
  /** Observes `value` in the unlabelled series. */
  observe(value: number): void;
}

/** The prom-client constructors the packages use (pass the `prom-client` module itself). */
export interface PromClientModule {
  /** prom-client's `Counter`. */
  readonly Counter: new (
    config: MetricConfig,
  ) => CounterLike;
  /** prom-client's `Gauge`; `collect` runs when the registry is read. */
  readonly Gauge: new (
    config: MetricConfig & { readonly collect?: (this: GaugeLike) => void },
  ) => GaugeLike;
  /** prom-client's `Histogram`. */
  readonly Histogram: new (
    config: MetricConfig & { readonly buckets?: number[] },
  ) => HistogramLike;
}

/**
 * Where a package registers its metrics: every package that records metrics takes
 * `metrics?: MetricsOptions` (or a type extending it); without it nothing is recorded.
 *
 * @example
 * ```ts
 * import * as promClient from 'prom-client';
 * const metrics: MetricsOptions = { registry: new promClient.Registry(), promClient };
 * ```
 */
export interface MetricsOptions {
  /** The registry the metrics are registered on (never prom-client's global one unless you pass it). */
  readonly registry: MetricsRegistry;
  /** The prom-client module: `import * as promClient from 'prom-client'`. */
  readonly promClient: PromClientModule;
}

/** Thrown when a registry already holds a metric of the wanted name but of another kind. */
export class MetricRegistrationError extends Error {
  override readonly name = 'MetricRegistrationError';
  /** @param metricName the conflicting metric name. @param reason what is wrong with it. */
  constructor(
    readonly metricName: string,
    reason: string,
  ) {
    super(`cannot use metric ${metricName}: ${reason}`);
  }
}

/** Creates metrics on one registry, reusing one already registered under the same name. */
export interface MetricFactory {
  /** A counter named `config.name`. */
  counter(config: Omit<MetricConfig, 'registers'>): CounterLike;
  /** A gauge named `config.name`. */
  gauge(
    config: Omit<MetricConfig, 'registers'> & { readonly collect?: (this: GaugeLike) => void },
  ): GaugeLike;
  /** A histogram named `config.name`. */
  histogram(
    config: Omit<MetricConfig, 'registers'> & { readonly buckets?: readonly number[] },
  ): HistogramLike;
}

/**
 * A {@link MetricFactory} on `options.registry`. A metric already registered under the same
 * name (by another component sharing the registry) is reused, so two informers on one
 * registry share `informer_events_total` and differ by label.
 *
 * @throws {@link MetricRegistrationError} (when a metric is created) if the registered metric
 * of that name is of another kind.
 */
export function createMetricFactory(options: MetricsOptions): MetricFactory {
  const { registry, promClient } = options;
  function reuse<M>(name: string, kind: abstract new (...args: never[]) => M): M | undefined {
    const found = registry.getSingleMetric(name);
    if (found === undefined) return undefined;
    if (!(found instanceof kind)) throw new MetricRegistrationError(name, 'registered as another kind');
    return found;
  }
  const unregistered = <C extends { readonly labelNames?: readonly string[] }>(config: C) => ({
    ...config,
    labelNames: [...(config.labelNames ?? [])],
    registers: [],
  });
  const registered = <M>(metric: M): M => {
    registry.registerMetric(metric);
    return metric;
  };
  return {
    counter: (config) =>
      reuse(config.name, promClient.Counter) ?? registered(new promClient.Counter(unregistered(config))),
    gauge: (config) =>
      reuse(config.name, promClient.Gauge) ?? registered(new promClient.Gauge(unregistered(config))),
    histogram: ({ buckets, ...config }) =>
      reuse(config.name, promClient.Histogram) ??
      registered(
        new promClient.Histogram({
          ...unregistered(config),
          ...definedFields({ buckets: buckets && [...buckets] }),
        }),
      ),
  };
}

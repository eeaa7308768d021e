/**
 * Options of the {@link EventRecorder}, in their own module so adapters import the type
 * without the class.
 *
 * @module
 */
import { type Clock, InvalidOptionsError, type Logger, type MetricsOptions } from '@nodeagent/core';
import type { CorrelatorOptions } from './correlator.js';
import type { EventSink } from './sink.js';

/** Upstream `maxQueuedEvents`: events waiting to be written before new ones are dropped. */
export const DEFAULT_MAX_QUEUED_EVENTS = 1000;
/** Upstream `maxTriesPerEvent`. */
export const DEFAULT_MAX_TRIES = 12;
/** Upstream `defaultSleepDuration` between tries (the first sleep is a random part of it), ms. */
export const DEFAULT_RETRY_SLEEP_MS = 10_000;
/** The kubelet's `eventRecordQPS`: writes per second to the API server. */
export const DEFAULT_WRITE_QPS = 50;
/** The kubelet's `eventBurst`: writes allowed at once before `writeQps` applies. */
export const DEFAULT_WRITE_BURST = 100;

/** Options of {@link EventRecorder}. */
export interface EventRecorderOptions {
  /**
   * Where events are written, e.g. `apiClientEventSink(new HttpJsonClient({ server }))`.
   * @example apiClientEventSink(apiClient)
   */
  readonly sink: EventSink;
  /** `source.component` and, unless `reportingController` is set, `reportingComponent`. @default 'kubelet' */
  readonly component?: string;
  /** `source.host` (the kubelet uses its node name) and, unless `reportingInstance` is set, `reportingInstance`. @default '' */
  readonly host?: string;
  /** `reportingComponent` of every event. @default the component */
  readonly reportingController?: string;
  /** `reportingInstance` of every event. @default the host */
  readonly reportingInstance?: string;
  /**
   * Events waiting to be written (queued, not counting the one being written). When it is
   * full a new event is dropped (counted as `queue_full`), as client-go's broadcaster does;
   * recording never waits. Minimum: 1.
   * @default 1000
   */
  readonly maxQueuedEvents?: number;
  /** Tries per event for transport errors, 429, 409 Conflict and 5xx before it is dropped. Minimum: 1. @default 12 */
  readonly maxTries?: number;
  /** Sleep between tries, ms; the first sleep is a random fraction of it. Minimum: 0. @default 10_000 */
  readonly retrySleepMs?: number;
  /**
   * Writes (creates and patches, retries included) per second to the API server, as the
   * kubelet's `--event-qps`; queued events wait their turn. `Infinity` turns the limit off.
   * Must be > 0.
   * @default 50
   */
  readonly writeQps?: number;
  /** Writes allowed at once before `writeQps` applies, as the kubelet's `--event-burst`. Minimum: 1. @default 100 */
  readonly writeBurst?: number;
  /** Aggregation, de-duplication and spam filter settings (upstream's defaults). @default {} */
  readonly correlator?: CorrelatorOptions;
  /** Time of events, aggregation windows, spam refills and retry sleeps. @default realClock */
  readonly clock?: Clock;
  /** Dropped events and write failures. @default noopLogger */
  readonly logger?: Logger;
  /** `event_recorder_dropped_total`, `event_recorder_writes_total`, `event_recorder_pending_events`. @default none */
  readonly metrics?: MetricsOptions;
  /** Random numbers in [0, 1) for the first retry's jitter. @default Math.random */
  readonly random?: () => number;
}

function refuse(message: string): never {
  throw new InvalidOptionsError('EventRecorder', message);
}

function integerAtLeast(name: string, value: number | undefined, min: number): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= min)) {
    refuse(`${name} must be an integer >= ${min}, got ${value}`);
  }
}

/**
 * Checks the options' ranges.
 * @throws InvalidOptionsError naming the option, the bad value and what is valid
 * @internal
 */
export function checkRecorderOptions(options: EventRecorderOptions): void {
  integerAtLeast('maxQueuedEvents', options.maxQueuedEvents, 1);
  integerAtLeast('maxTries', options.maxTries, 1);
  integerAtLeast('writeBurst', options.writeBurst, 1);
  if (options.retrySleepMs !== undefined && !(options.retrySleepMs >= 0)) {
    refuse(`retrySleepMs must be >= 0, got ${options.retrySleepMs}`);
  }
  if (options.writeQps !== undefined && !(options.writeQps > 0)) {
    refuse(`writeQps must be > 0, got ${options.writeQps}`);
  }
  const c = options.correlator ?? {};
  integerAtLeast('correlator.lruCacheSize', c.lruCacheSize, 1);
  integerAtLeast('correlator.burst', c.burst, 1);
  integerAtLeast('correlator.maxEvents', c.maxEvents, 1);
  if (c.qps !== undefined && !(c.qps > 0)) refuse(`correlator.qps must be > 0, got ${c.qps}`);
  if (c.maxIntervalMs !== undefined && !(c.maxIntervalMs >= 0)) {
    refuse(`correlator.maxIntervalMs must be >= 0, got ${c.maxIntervalMs}`);
  }
}

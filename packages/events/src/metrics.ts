/**
 * The recorder's metrics: events dropped (by reason), events written (by verb and result)
 * and the events waiting to be sent.
 *
 * @module
 */
import { createMetricFactory, type MetricsOptions } from '@nodeagent/core';

/** Why an event was not written. */
export type DropReason =
  /** The queue held `maxQueuedEvents` already (the newest event is dropped, as client-go's `DropIfChannelFull`). */
  | 'queue_full'
  /** The spam filter's bucket for the source + object was empty. */
  | 'spam_filter'
  /** Every try failed with a transport error, 429 or 5xx. */
  | 'retries_exhausted'
  /** The server refused it for good (e.g. 400, 403, 422); retrying would not help. */
  | 'rejected'
  /** The call had a bad type or no usable object reference. */
  | 'invalid'
  /** The recorder was stopped before the event was written. */
  | 'shutdown';

/** Metric names. */
export const EVENT_METRIC_NAMES = {
  dropped: 'event_recorder_dropped_total',
  writes: 'event_recorder_writes_total',
  pending: 'event_recorder_pending_events',
} as const;

/** @internal */
export interface RecorderMetrics {
  dropped(reason: DropReason): void;
  write(verb: 'create' | 'patch', result: 'success' | 'error'): void;
}

/** @internal */
export function createRecorderMetrics(
  options: MetricsOptions | undefined,
  pending: () => number,
): RecorderMetrics {
  if (options === undefined) return { dropped: () => {}, write: () => {} };
  const f = createMetricFactory(options);
  const dropped = f.counter({
    name: EVENT_METRIC_NAMES.dropped,
    help: 'Events the recorder did not write, by reason.',
    labelNames: ['reason'],
  });
  const writes = f.counter({
    name: EVENT_METRIC_NAMES.writes,
    help: 'Event writes to the API server, by verb (create, patch) and result (success, error).',
    labelNames: ['verb', 'result'],
  });
  f.gauge({
    name: EVENT_METRIC_NAMES.pending,
    help: 'Events queued or being written.',
    collect() {
      this.set(pending());
    },
  });
  return {
    dropped: (reason) => dropped.inc({ reason }),
    write: (verb, result) => writes.inc({ verb, result }),
  };
}

/**
 * Writing one event to the sink (upstream `recordToSink` + `recordEvent`): correlate it, wait
 * for the write rate, create it or patch the existing Event (create again on 404), and retry
 * transient failures with upstream's sleeps.
 *
 * @module
 * @internal
 */
import type { BucketRateLimiter, Clock, Logger } from '@nodeagent/core';
import type { EventCorrelator } from './correlator.js';
import type { CoreEvent } from './event.js';
import type { DropReason, RecorderMetrics } from './metrics.js';
import { type EventSink, statusOf } from './sink.js';

type Outcome = 'done' | 'retry' | 'rejected';

/** @internal */
export interface SinkWriterDeps {
  readonly sink: EventSink;
  readonly correlator: EventCorrelator;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: RecorderMetrics;
  readonly limiter: BucketRateLimiter<void>;
  readonly maxTries: number;
  readonly sleepMs: number;
  readonly random: () => number;
  /** Aborted when the recorder stops: sleeps end and the request in flight is aborted. */
  readonly signal: AbortSignal;
  readonly drop: (reason: DropReason, fields: Record<string, unknown>, msg: string) => void;
}

/** @internal */
export class SinkWriter {
  constructor(private readonly deps: SinkWriterDeps) {}

  /** Correlates and writes `event`; never throws (what is not written is dropped with a reason). */
  async write(event: CoreEvent): Promise<void> {
    const d = this.deps;
    const result = d.correlator.correlate(event);
    if (result.skip) {
      d.drop(
        'spam_filter',
        { reason: event.reason, object: event.involvedObject.name },
        'Event skipped by the spam filter',
      );
      return;
    }
    const e = result.event;
    const fields = { reason: e.reason, name: e.metadata.name };
    for (let tries = 0; ; ) {
      if (!(await this.#sleep(d.limiter.when(undefined)))) {
        d.drop('shutdown', fields, 'Unable to write event (recorder is stopped)');
        return;
      }
      const outcome = await this.#writeOnce(e, result.patch);
      if (outcome === 'done') return;
      if (outcome === 'rejected') {
        d.drop('rejected', fields, 'Server rejected event (will not retry!)');
        return;
      }
      tries++;
      if (tries >= d.maxTries) {
        d.drop('retries_exhausted', fields, 'Unable to write event (retry limit exceeded!)');
        return;
      }
      // The first sleep is random so that many agents don't retry in step after an outage.
      if (!(await this.#sleep(tries === 1 ? d.sleepMs * d.random() : d.sleepMs))) {
        d.drop('shutdown', fields, 'Unable to write event (recorder is stopped)');
        return;
      }
    }
  }

  /** Sleeps `ms`; false when the recorder stopped (before or during the sleep). */
  async #sleep(ms: number): Promise<boolean> {
    if (this.deps.signal.aborted) return false;
    if (ms <= 0) return true;
    try {
      await this.deps.clock.sleep(ms, this.deps.signal);
      return true;
    } catch {
      return false;
    }
  }

  async #writeOnce(event: CoreEvent, patch: Readonly<Record<string, unknown>> | undefined): Promise<Outcome> {
    const { sink, signal, metrics, log, correlator } = this.deps;
    let error: unknown;
    let stored: CoreEvent | undefined;
    let verb: 'create' | 'patch' = 'create';
    const update = (event.count ?? 1) > 1 && patch !== undefined;
    if (update) {
      verb = 'patch';
      try {
        stored = (await sink.patch(event, patch, signal)) ?? event;
      } catch (err) {
        error = err;
      }
    }
    // A patch finds nothing when the Event expired (or was deleted): create it again.
    if (!update || (error !== undefined && statusOf(error)?.code === 404)) {
      verb = 'create';
      error = undefined;
      const { resourceVersion: _rv, ...metadata } = event.metadata;
      try {
        stored = (await sink.create({ ...event, metadata }, signal)) ?? event;
      } catch (err) {
        error = err;
      }
    }
    if (error === undefined) {
      metrics.write(verb, 'success');
      correlator.updateState(stored ?? event);
      return 'done';
    }
    metrics.write(verb, 'error');
    const status = statusOf(error);
    const fields = { err: error, verb, reason: event.reason, name: event.metadata.name };
    if (status === undefined) {
      log.warn(fields, 'Unable to write event (may retry after sleeping)');
      return 'retry';
    }
    // An earlier try that the server stored but whose answer was lost.
    if (status.code === 409 && status.reason === 'AlreadyExists') return 'done';
    // Transient server answers are retried like transport errors; upstream leaves these to
    // the REST client's own Retry-After handling, which a plain sink does not have.
    if (status.code === 409 || status.code === 429 || status.code >= 500) {
      log.warn(fields, 'Unable to write event (may retry after sleeping)');
      return 'retry';
    }
    return 'rejected';
  }
}

/**
 * The event recorder (upstream `record.EventBroadcaster` + `EventRecorder` +
 * `StartRecordingToSink`): `event()` builds a core/v1 Event and queues it without ever
 * waiting; one writer correlates each queued event (aggregation, counting, spam filter) and
 * writes it to the sink, retrying failures with upstream's sleeps.
 *
 * @module
 */
import {
  BucketRateLimiter,
  type Clock,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
} from '@nodeagent/core';
import { EventCorrelator } from './correlator.js';
import { type CoreEvent, EVENT_TYPES, type EventType, formatTime, type ObjectReference } from './event.js';
import { sprintf } from './format.js';
import { createRecorderMetrics, type DropReason, type RecorderMetrics } from './metrics.js';
import { InvalidReferenceError, objectReference, type ReferencedObject } from './object-reference.js';
import {
  checkRecorderOptions,
  DEFAULT_MAX_QUEUED_EVENTS,
  DEFAULT_MAX_TRIES,
  DEFAULT_RETRY_SLEEP_MS,
  DEFAULT_WRITE_BURST,
  DEFAULT_WRITE_QPS,
  type EventRecorderOptions,
} from './recorder-options.js';
import { SinkWriter } from './sink-writer.js';

/**
 * What an event is about: an object reference, an API object with a kind and a name, or a
 * function returning either (whose errors, such as an {@link InvalidReferenceError}, are
 * caught and counted like any invalid target).
 */
export type EventTarget = ObjectReference | ReferencedObject | (() => ObjectReference | ReferencedObject);

/** Thrown (to the logger, never to the caller) for an event with a type other than Normal or Warning. */
export class InvalidEventTypeError extends Error {
  override readonly name = 'InvalidEventTypeError';
  /** @param type the refused type. @param reason the event's reason. */
  constructor(
    readonly type: string,
    readonly reason: string,
  ) {
    super(
      `unsupported event type ${JSON.stringify(type)} for reason ${JSON.stringify(reason)}: want Normal or Warning`,
    );
  }
}

/**
 * Records core/v1 Events for one source (e.g. the kubelet on one node). Recording never
 * blocks and never throws; events wait in a bounded queue (recorded before `start()` too)
 * and one writer sends them in order.
 */
export class EventRecorder {
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #metrics: RecorderMetrics;
  readonly #source: { component: string; host: string };
  readonly #reportingController: string;
  readonly #reportingInstance: string;
  readonly #maxQueued: number;
  readonly #writerOfOne: SinkWriter;
  readonly #once = new StartOnce('EventRecorder');
  readonly #abort = new AbortController();
  readonly #queue: CoreEvent[] = [];
  readonly #dropped = new Map<DropReason, number>();
  readonly #idleWaiters: (() => void)[] = [];
  #inFlight = 0;
  #writer: Promise<void> | undefined;
  #running = false;
  #stopped = false;
  #lastNanos = 0n;

  /** @throws InvalidOptionsError for an option out of range */
  constructor(options: EventRecorderOptions) {
    checkRecorderOptions(options);
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'events' });
    this.#source = { component: options.component ?? 'kubelet', host: options.host ?? '' };
    this.#reportingController = options.reportingController ?? this.#source.component;
    this.#reportingInstance = options.reportingInstance ?? this.#source.host;
    this.#maxQueued = options.maxQueuedEvents ?? DEFAULT_MAX_QUEUED_EVENTS;
    this.#metrics = createRecorderMetrics(options.metrics, () => this.pending);
    this.#writerOfOne = new SinkWriter({
      sink: options.sink,
      correlator: new EventCorrelator(options.correlator ?? {}, this.#clock, (name) => this.#eventName(name)),
      clock: this.#clock,
      log: this.#log,
      metrics: this.#metrics,
      limiter: new BucketRateLimiter(
        options.writeQps ?? DEFAULT_WRITE_QPS,
        options.writeBurst ?? DEFAULT_WRITE_BURST,
        this.#clock,
      ),
      maxTries: options.maxTries ?? DEFAULT_MAX_TRIES,
      sleepMs: options.retrySleepMs ?? DEFAULT_RETRY_SLEEP_MS,
      random: options.random ?? Math.random,
      signal: this.#abort.signal,
      drop: (reason, fields, msg) => this.#drop(reason, fields, msg),
    });
  }

  /**
   * Records an event about `target` (upstream `Event`). Never blocks and never throws: a bad
   * type or target is logged and counted as `invalid`; a full queue drops the event
   * (`queue_full`).
   * @param annotations annotations of the Event object. @default none
   */
  event(
    target: EventTarget,
    type: EventType,
    reason: string,
    message: string,
    annotations?: Readonly<Record<string, string>>,
  ): void {
    let ref: ObjectReference;
    try {
      const t = typeof target === 'function' ? target() : target;
      ref = 'metadata' in t ? objectReference(t) : { ...(t as ObjectReference) };
      if (!ref.name) throw new InvalidReferenceError(`${ref.kind ?? 'object'} <unnamed>`, 'no name');
      if (!EVENT_TYPES.includes(type)) throw new InvalidEventTypeError(String(type), reason);
    } catch (err) {
      this.#drop('invalid', { err, reason, message }, 'Could not record event (will not report it)');
      return;
    }
    if (this.#stopped) {
      this.#drop('shutdown', { reason, message }, 'Event recorded after stop (dropped)');
      return;
    }
    if (this.#queue.length >= this.#maxQueued) {
      this.#drop(
        'queue_full',
        { reason, message, object: ref.name },
        'Unable to record event: too many queued events, dropped event',
      );
      return;
    }
    const t = this.#clock.now();
    const time = formatTime(t);
    this.#queue.push({
      metadata: {
        name: this.#eventName(ref.name ?? '', t),
        namespace: ref.namespace || 'default',
        ...(annotations === undefined ? {} : { annotations: { ...annotations } }),
      },
      involvedObject: ref,
      reason,
      message,
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
      type,
      source: this.#source,
      reportingComponent: this.#reportingController,
      reportingInstance: this.#reportingInstance,
    });
    this.#kick();
  }

  /** {@link event} with a Go-style format (`%s`, `%v`, `%d`, `%q`), as upstream `Eventf`. */
  eventf(
    target: EventTarget,
    type: EventType,
    reason: string,
    format: string,
    ...args: readonly unknown[]
  ): void {
    this.event(target, type, reason, sprintf(format, ...args));
  }

  /** Starts writing queued events to the sink. Resolves at once. @throws AlreadyStartedError when called twice */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        if (this.#stopped) return;
        this.#running = true;
        signal?.addEventListener('abort', () => void this.stop(), { once: true });
        this.#kick();
      },
      () => this.stop(),
    );
  }

  /**
   * Stops writing: a retry sleep ends, the request in flight is aborted, and every event
   * still queued is dropped (`shutdown`). Call {@link flush} first to give them a chance.
   * Idempotent.
   */
  async stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#running = false;
      this.#abort.abort(new Error('event recorder stopped'));
    }
    await this.#writer;
    while (this.#queue.length > 0) {
      const e = this.#queue.shift() as CoreEvent;
      this.#drop(
        'shutdown',
        { reason: e.reason, message: e.message },
        'Event recorder stopped, event not written',
      );
    }
    this.#wakeIdle();
  }

  /**
   * Resolves once nothing is queued or in flight (or at once when stopped), or rejects when
   * `signal` aborts first.
   */
  flush(signal?: AbortSignal): Promise<void> {
    if (this.pending === 0 || this.#stopped) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(signal?.reason ?? new Error('flush aborted'));
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#idleWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** Events queued or being written. */
  get pending(): number {
    return this.#queue.length + this.#inFlight;
  }

  /** Events not written so far, by reason (the `event_recorder_dropped_total` counts). */
  dropped(): ReadonlyMap<DropReason, number> {
    return new Map(this.#dropped);
  }

  #eventName(objectName: string, nowMs = this.#clock.now()): string {
    // `<name>.<hex unix nanoseconds>` as upstream; the clock has ms, so later events in the
    // same ms take the next nanosecond and names stay unique.
    let nanos = BigInt(Math.floor(nowMs)) * 1_000_000n;
    if (nanos <= this.#lastNanos) nanos = this.#lastNanos + 1n;
    this.#lastNanos = nanos;
    return `${objectName}.${nanos.toString(16)}`;
  }

  #drop(reason: DropReason, fields: Record<string, unknown>, msg: string): void {
    this.#dropped.set(reason, (this.#dropped.get(reason) ?? 0) + 1);
    this.#metrics.dropped(reason);
    if (reason === 'spam_filter' || reason === 'shutdown')
      this.#log.debug({ ...fields, dropReason: reason }, msg);
    else this.#log.warn({ ...fields, dropReason: reason }, msg);
  }

  #kick(): void {
    if (!this.#running || this.#writer !== undefined || this.#queue.length === 0) return;
    // The writer starts in the event loop's check phase, not inside the caller's turn: events
    // are recorded in the middle of other work (a container just created or started), whose
    // next I/O would otherwise wait for the write's CPU — correlation, the request — as it does
    // not in upstream, where the broadcaster hands events to a goroutine of their own.
    this.#writer = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.#drain())
      .finally(() => {
        this.#writer = undefined;
        this.#wakeIdle();
        this.#kick();
      });
  }

  #wakeIdle(): void {
    if (this.pending !== 0 && !this.#stopped) return;
    for (const w of this.#idleWaiters.splice(0)) w();
  }

  async #drain(): Promise<void> {
    while (this.#running && this.#queue.length > 0) {
      const event = this.#queue.shift() as CoreEvent;
      this.#inFlight = 1;
      try {
        await this.#writerOfOne.write(event);
      } catch (err) {
        this.#log.error({ err }, 'Event writer failed');
      } finally {
        this.#inFlight = 0;
      }
    }
  }
}

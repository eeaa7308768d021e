/**
 * Aggregation of similar events (upstream `EventAggregator`): events that differ only in
 * their message are similar; once 10 distinct messages of one group were seen within 10
 * minutes of each other, further ones are replaced by a single event whose message is
 * `(combined from similar events): <latest message>`, counted like any repeated event.
 *
 * @module
 */
import type { Clock } from '@nodeagent/core';
import { type CoreEvent, formatTime } from './event.js';
import { LruCache } from './lru-cache.js';

/**
 * The full identity of an event (upstream `getEventKey`): source, involved object (with its
 * field path), type, reason and message. Two events with one key are the same event seen again.
 */
export function eventKey(event: CoreEvent): string {
  const o = event.involvedObject;
  return [
    event.source?.component,
    event.source?.host,
    o.kind,
    o.namespace,
    o.name,
    o.fieldPath,
    o.uid,
    o.apiVersion,
    event.type,
    event.reason,
    event.message,
  ]
    .map((s) => s ?? '')
    .join('');
}

/**
 * Groups events for aggregation (upstream `EventAggregatorByReasonFunc`): the group is the
 * source, involved object (without field path), type, reason and reporting controller and
 * instance; the local key, which tells the group's members apart, is the message.
 */
export function aggregateKeyByReason(event: CoreEvent): { aggregateKey: string; localKey: string } {
  const o = event.involvedObject;
  const aggregateKey = [
    event.source?.component,
    event.source?.host,
    o.kind,
    o.namespace,
    o.name,
    o.uid,
    o.apiVersion,
    event.type,
    event.reason,
    event.reportingComponent,
    event.reportingInstance,
  ]
    .map((s) => s ?? '')
    .join('');
  return { aggregateKey, localKey: event.message ?? '' };
}

/** The message of an aggregate event (upstream `EventAggregatorByReasonMessageFunc`). */
export function aggregateMessageByReason(event: CoreEvent): string {
  return `(combined from similar events): ${event.message ?? ''}`;
}

/** Settings of {@link EventAggregator}. */
export interface AggregatorSettings {
  /** Groups remembered. */
  readonly lruCacheSize: number;
  /** Distinct messages in a group before aggregation starts. */
  readonly maxEvents: number;
  /** A group not seen for longer than this starts over, ms. */
  readonly maxIntervalMs: number;
  /** The group and local key of an event. */
  readonly keyFunc: (event: CoreEvent) => { aggregateKey: string; localKey: string };
  /** The message of an aggregate event. */
  readonly messageFunc: (event: CoreEvent) => string;
}

interface AggregateRecord {
  readonly localKeys: Set<string>;
  lastMs: number;
}

/** Decides whether an event is recorded as is or folded into its group's aggregate event. */
export class EventAggregator {
  readonly #cache: LruCache<AggregateRecord>;

  constructor(
    readonly settings: AggregatorSettings,
    private readonly clock: Pick<Clock, 'now'>,
    private readonly eventName: (objectName: string) => string,
  ) {
    this.#cache = new LruCache(settings.lruCacheSize);
  }

  /**
   * The event to record and its correlation key: `event` itself and its {@link eventKey}
   * below the threshold, else a fresh aggregate event keyed by the group.
   */
  aggregate(event: CoreEvent): { event: CoreEvent; key: string } {
    const now = this.clock.now();
    const { aggregateKey, localKey } = this.settings.keyFunc(event);
    let record = this.#cache.get(aggregateKey);
    if (record === undefined || now - record.lastMs > this.settings.maxIntervalMs) {
      record = { localKeys: new Set(), lastMs: now };
    }
    record.localKeys.add(localKey);
    record.lastMs = now;
    this.#cache.set(aggregateKey, record);
    if (record.localKeys.size < this.settings.maxEvents) return { event, key: eventKey(event) };
    // Keep the set at its cap (upstream pops an arbitrary member).
    const first = record.localKeys.values().next();
    if (first.done !== true) record.localKeys.delete(first.value);
    const t = formatTime(now);
    const aggregate: CoreEvent = {
      metadata: {
        name: this.eventName(event.involvedObject.name ?? ''),
        ...(event.metadata.namespace === undefined ? {} : { namespace: event.metadata.namespace }),
      },
      involvedObject: event.involvedObject,
      count: 1,
      firstTimestamp: t,
      lastTimestamp: t,
      message: this.settings.messageFunc(event),
      ...(event.type === undefined ? {} : { type: event.type }),
      ...(event.reason === undefined ? {} : { reason: event.reason }),
      ...(event.source === undefined ? {} : { source: event.source }),
    };
    return { event: aggregate, key: aggregateKey };
  }
}

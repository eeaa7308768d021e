/**
 * The event correlator (upstream `EventCorrelator`): aggregation of similar events, then
 * de-duplication (an event seen again becomes a patch of the existing Event's `count`,
 * `lastTimestamp` and `message`), then the spam filter.
 *
 * @module
 */
import type { Clock } from '@nodeagent/core';
import {
  type AggregatorSettings,
  aggregateKeyByReason,
  aggregateMessageByReason,
  EventAggregator,
  eventKey,
} from './aggregator.js';
import type { CoreEvent } from './event.js';
import { LruCache } from './lru-cache.js';
import { EventSpamFilter, type SpamFilterSettings, spamKey } from './spam-filter.js';

/** Upstream `maxLruCacheEntries`: the size of each of the correlator's caches. */
export const MAX_LRU_CACHE_ENTRIES = 4096;
/** Upstream `defaultAggregateMaxEvents`: distinct similar events before aggregation. */
export const DEFAULT_AGGREGATE_MAX_EVENTS = 10;
/** Upstream `defaultAggregateIntervalInSeconds` (10 minutes), in ms. */
export const DEFAULT_AGGREGATE_INTERVAL_MS = 600_000;
/** Upstream `defaultSpamBurst`: events a source may send about one object at once. */
export const DEFAULT_SPAM_BURST = 25;
/** Upstream `defaultSpamQPS`: one more event every 5 minutes. */
export const DEFAULT_SPAM_QPS = 1 / 300;

/** Options of the correlation (upstream `CorrelatorOptions`); every field has upstream's default. */
export interface CorrelatorOptions {
  /** Entries of each LRU cache (spam buckets, aggregation groups, seen events). Minimum: 1. @default 4096 */
  readonly lruCacheSize?: number;
  /** Spam filter: events a source may send about one object at once. Minimum: 1. @default 25 */
  readonly burst?: number;
  /** Spam filter: refill rate in events per second. Must be > 0. @default 1/300 (one every 5 minutes) */
  readonly qps?: number;
  /** Distinct messages of one group (same object, type, reason) before aggregation. Minimum: 1. @default 10 */
  readonly maxEvents?: number;
  /** A group not seen for longer than this starts over, ms. Minimum: 0. @default 600_000 */
  readonly maxIntervalMs?: number;
  /** Groups events for aggregation. @default {@link aggregateKeyByReason} */
  readonly keyFunc?: (event: CoreEvent) => { aggregateKey: string; localKey: string };
  /** Message of an aggregate event. @default {@link aggregateMessageByReason} */
  readonly messageFunc?: (event: CoreEvent) => string;
  /** Groups events into spam-filter buckets. @default {@link spamKey} */
  readonly spamKeyFunc?: (event: CoreEvent) => string;
}

/** What the correlator decided about one event (upstream `EventCorrelateResult`). */
export type CorrelateResult =
  | {
      /** Send it: create `event`, or (with `patch`) update the existing Event. */
      readonly skip: false;
      /** The event after correlation (maybe an aggregate, maybe with count > 1 and the first event's name). */
      readonly event: CoreEvent;
      /** Strategic merge patch of `count`, `lastTimestamp` and `message` when the event was seen before. */
      readonly patch: Readonly<Record<string, unknown>> | undefined;
    }
  | {
      /** The spam filter dropped it. */
      readonly skip: true;
    };

interface EventLog {
  readonly count: number;
  readonly firstTimestamp: string | undefined;
  readonly name: string | undefined;
  readonly resourceVersion: string | undefined;
}

/** Filters, aggregates and counts events before they are sent. */
export class EventCorrelator {
  readonly #aggregator: EventAggregator;
  readonly #spam: EventSpamFilter;
  readonly #seen: LruCache<EventLog>;

  /**
   * @param options correlation settings.
   * @param clock time of aggregation windows and spam refills.
   * @param eventName names a new aggregate event after the involved object (`<name>.<hex nanos>`).
   */
  constructor(
    options: CorrelatorOptions,
    clock: Pick<Clock, 'now'>,
    eventName: (objectName: string) => string,
  ) {
    const size = options.lruCacheSize ?? MAX_LRU_CACHE_ENTRIES;
    const aggregator: AggregatorSettings = {
      lruCacheSize: size,
      maxEvents: options.maxEvents ?? DEFAULT_AGGREGATE_MAX_EVENTS,
      maxIntervalMs: options.maxIntervalMs ?? DEFAULT_AGGREGATE_INTERVAL_MS,
      keyFunc: options.keyFunc ?? aggregateKeyByReason,
      messageFunc: options.messageFunc ?? aggregateMessageByReason,
    };
    const spam: SpamFilterSettings = {
      lruCacheSize: size,
      burst: options.burst ?? DEFAULT_SPAM_BURST,
      qps: options.qps ?? DEFAULT_SPAM_QPS,
      spamKey: options.spamKeyFunc ?? spamKey,
    };
    this.#aggregator = new EventAggregator(aggregator, clock, eventName);
    this.#spam = new EventSpamFilter(spam, clock);
    this.#seen = new LruCache(size);
  }

  /** Correlates one event (upstream `EventCorrelate`): aggregate, observe (count), then filter. */
  correlate(event: CoreEvent): CorrelateResult {
    const aggregated = this.#aggregator.aggregate(event);
    const { event: observed, patch } = this.#observe(aggregated.event, aggregated.key);
    if (this.#spam.filter(observed)) return { skip: true };
    return { skip: false, event: observed, patch };
  }

  /** Records what the server returned (name, resourceVersion, count), as upstream `UpdateState`. */
  updateState(event: CoreEvent): void {
    this.#seen.set(eventKey(event), logOf(event));
  }

  #observe(
    event: CoreEvent,
    key: string,
  ): { event: CoreEvent; patch: Readonly<Record<string, unknown>> | undefined } {
    const last = this.#seen.get(key);
    let out = event;
    let patch: Record<string, unknown> | undefined;
    if (last !== undefined && last.count > 0) {
      out = {
        ...event,
        metadata: {
          ...event.metadata,
          ...(last.name === undefined ? {} : { name: last.name }),
          ...(last.resourceVersion === undefined ? {} : { resourceVersion: last.resourceVersion }),
        },
        ...(last.firstTimestamp === undefined ? {} : { firstTimestamp: last.firstTimestamp }),
        count: last.count + 1,
      };
      // Upstream diffs the event against a copy with count 0, lastTimestamp at the epoch and
      // no message: the patch always carries exactly these three fields.
      patch = { count: out.count };
      if (out.lastTimestamp !== undefined) patch.lastTimestamp = out.lastTimestamp;
      if (out.message !== undefined && out.message !== '') patch.message = out.message;
    }
    this.#seen.set(key, logOf(out));
    return { event: out, patch };
  }
}

function logOf(event: CoreEvent): EventLog {
  return {
    count: event.count ?? 0,
    firstTimestamp: event.firstTimestamp,
    name: event.metadata.name,
    resourceVersion: event.metadata.resourceVersion,
  };
}

/**
 * The spam filter (upstream `EventSourceObjectSpamFilter`): one token bucket per source +
 * involved object, `burst` tokens to start with and `qps` refill, so a component can burst
 * 25 events about one object and then gets one more every 5 minutes. An event that finds
 * the bucket empty is skipped. The buckets are core's `TokenBucketRateLimiter` (upstream's
 * `flowcontrol` token bucket).
 *
 * @module
 */
import { type Clock, realClock, TokenBucketRateLimiter } from '@nodeagent/core';
import type { CoreEvent } from './event.js';
import { LruCache } from './lru-cache.js';

/**
 * The spam key (upstream `getSpamKey`): source component and host, and the involved object's
 * kind, namespace, name, UID and apiVersion. Reason, message, type and field path are not
 * part of it, so all events about one pod share a bucket.
 */
export function spamKey(event: CoreEvent): string {
  const o = event.involvedObject;
  return [event.source?.component, event.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion]
    .map((s) => s ?? '')
    .join('');
}

/** Settings of {@link EventSpamFilter}. */
export interface SpamFilterSettings {
  /** Events a source may send about one object at once. */
  readonly burst: number;
  /** Refill rate, tokens per second. */
  readonly qps: number;
  /** Objects remembered (least recently used forgotten first). */
  readonly lruCacheSize: number;
  /** Groups events into buckets. */
  readonly spamKey: (event: CoreEvent) => string;
}

/** Throttles the events a source produces about one object. */
export class EventSpamFilter {
  readonly #cache: LruCache<TokenBucketRateLimiter>;

  constructor(
    readonly settings: SpamFilterSettings,
    private readonly clock: Pick<Clock, 'now'>,
  ) {
    this.#cache = new LruCache(settings.lruCacheSize);
    // A bad qps or burst is refused here (InvalidOptionsError), not at the first event.
    new TokenBucketRateLimiter(settings.qps, settings.burst, realClock);
  }

  /** Whether `event` must be skipped (its source + object bucket is empty). Takes a token otherwise. */
  filter(event: CoreEvent): boolean {
    const key = this.settings.spamKey(event);
    const now = this.clock.now();
    let bucket = this.#cache.get(key);
    // Upstream's NewTokenBucketPassiveRateLimiterWithClock: time is passed in, never waited on.
    if (bucket === undefined)
      bucket = new TokenBucketRateLimiter(this.settings.qps, this.settings.burst, realClock);
    const skip = !bucket.tryAcceptAt(now);
    this.#cache.set(key, bucket);
    return skip;
  }
}

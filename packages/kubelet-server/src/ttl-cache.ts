/**
 * A small map whose entries expire after a TTL on an injected clock, bounded in size (the
 * oldest entry goes first): the cache in front of the TokenReview and SubjectAccessReview
 * webhooks.
 *
 * @module
 * @internal
 */
import type { Clock } from '@nodeagent/core';

/** @internal */
export class TtlCache<V> {
  readonly #entries = new Map<string, { readonly value: V; readonly expiresAtMs: number }>();

  constructor(
    readonly clock: Clock,
    readonly maxEntries: number,
  ) {}

  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (e === undefined) return undefined;
    if (this.clock.now() >= e.expiresAtMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAtMs: this.clock.now() + ttlMs });
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}

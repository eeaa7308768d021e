/**
 * kube-proxy's change-tracking rule, generic over the tracked value: per key, remember the
 * *first* "before" and the *latest* "after"; when they become equal again the pending change
 * is dropped (an A→B→A sequence leaves nothing to sync).
 *
 * @module
 */

/** One key's pending change. */
export interface Change<V> {
  /** The value when the first pending update arrived (what is currently applied). */
  readonly previous: V;
  /** The value after the latest update. */
  readonly current: V;
}

/**
 * Tracks pending changes per key. Used for Services (values: per-family service port maps),
 * usable for anything with an equality.
 *
 * @example
 * ```ts
 * const t = new ChangeTracker<number>((a, b) => a === b);
 * t.update('k', 1, 2); // true: pending 1 → 2
 * t.update('k', 2, 1); // false: back to 1, the change cancels
 * ```
 */
export class ChangeTracker<V> {
  readonly #items = new Map<string, { previous: V; current: V }>();
  readonly #equal: (a: V, b: V) => boolean;

  /** @param equal - Deep equality of two values. */
  constructor(equal: (a: V, b: V) => boolean) {
    this.#equal = equal;
  }

  /**
   * Records that `key` went from `previous` to `current`. `previous` is only used when the key
   * has no pending change. Returns whether any change is pending afterwards (for any key).
   */
  update(key: string, previous: V, current: V): boolean {
    const item = this.#items.get(key);
    const first = item === undefined ? previous : item.previous;
    if (this.#equal(first, current)) this.#items.delete(key);
    else this.#items.set(key, { previous: first, current });
    return this.#items.size > 0;
  }

  /** Number of keys with a pending change (kube-proxy's `service_changes_pending`). */
  get pendingCount(): number {
    return this.#items.size;
  }

  /** Whether `key` has a pending change. */
  has(key: string): boolean {
    return this.#items.has(key);
  }

  /** The keys with a pending change. */
  keys(): IterableIterator<string> {
    return this.#items.keys();
  }

  /** Returns every pending change and forgets them. */
  checkout(): Map<string, Change<V>> {
    const out = new Map<string, Change<V>>(this.#items);
    this.#items.clear();
    return out;
  }
}

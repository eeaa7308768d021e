/**
 * A size-bounded least-recently-used map (groupcache's `lru.Cache`, which client-go's event
 * caches use): `get` and `set` make a key the most recent; the least recent is evicted once
 * the cache holds more than `maxEntries`.
 *
 * @module
 * @internal
 */

/** @internal */
export class LruCache<V> {
  readonly #map = new Map<string, V>();

  constructor(readonly maxEntries: number) {}

  get(key: string): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.maxEntries) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
  }

  get size(): number {
    return this.#map.size;
  }
}

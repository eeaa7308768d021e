/**
 * Copy-on-write sorted maps for snapshots: each snapshot sees an immutable, key-sorted
 * `ReadonlyMap` made of a shared base plus a small overlay of changes, so a checkout after a
 * few changes costs O(changes) instead of rebuilding 20,000-entry maps. The overlay is folded
 * into a fresh base once it grows past a fraction of the base.
 *
 * @module
 */

function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** An immutable key-sorted map view: `base` overridden by `overlay` (undefined = deleted), plus `added` keys. */
class LayeredMap<V> implements ReadonlyMap<string, V> {
  readonly #base: ReadonlyMap<string, V>;
  readonly #overlay: ReadonlyMap<string, V | undefined>;
  readonly #added: readonly string[];
  readonly size: number;

  constructor(
    base: ReadonlyMap<string, V>,
    overlay: ReadonlyMap<string, V | undefined>,
    added: readonly string[],
    size: number,
  ) {
    this.#base = base;
    this.#overlay = overlay;
    this.#added = added;
    this.size = size;
  }

  get(key: string): V | undefined {
    return this.#overlay.has(key) ? this.#overlay.get(key) : this.#base.get(key);
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  entries(): MapIterator<[string, V]> {
    return this.#overlay.size === 0 ? this.#base.entries() : this.#merged();
  }

  *#merged(): MapIterator<[string, V]> {
    const added = this.#added;
    let a = 0;
    for (const [key, baseValue] of this.#base) {
      while (a < added.length && added[a]! < key) {
        const k = added[a++]!;
        yield [k, this.#overlay.get(k)!];
      }
      if (this.#overlay.has(key)) {
        const v = this.#overlay.get(key);
        if (v !== undefined) yield [key, v];
      } else yield [key, baseValue];
    }
    while (a < added.length) {
      const k = added[a++]!;
      yield [k, this.#overlay.get(k)!];
    }
  }

  keys(): MapIterator<string> {
    if (this.#overlay.size === 0) return this.#base.keys();
    return this.#mapped((k) => k);
  }

  values(): MapIterator<V> {
    if (this.#overlay.size === 0) return this.#base.values();
    return this.#mapped((_k, v) => v);
  }

  *#mapped<T>(fn: (k: string, v: V) => T): MapIterator<T> {
    for (const [k, v] of this.entries()) yield fn(k, v);
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  forEach(fn: (value: V, key: string, map: ReadonlyMap<string, V>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  }
}

/** The mutable side: records sets and deletes, hands out immutable sorted views. */
export class LayeredMapBuilder<V> {
  #base: Map<string, V> = new Map();
  #overlay = new Map<string, V | undefined>();
  #added: string[] = [];
  /** New keys are appended and sorted once per view, so bulk loads are not quadratic. */
  #addedSorted = true;
  #size = 0;

  /** Sets `key` (new keys are placed in sorted order). */
  set(key: string, value: V): void {
    if (!this.#has(key)) {
      this.#size++;
      if (!this.#base.has(key)) {
        this.#added.push(key);
        this.#addedSorted = false;
      }
    }
    this.#overlay.set(key, value);
  }

  /** Deletes `key` if present. */
  delete(key: string): void {
    if (!this.#has(key)) return;
    this.#size--;
    if (this.#base.has(key)) this.#overlay.set(key, undefined);
    else {
      this.#overlay.delete(key);
      this.#sortAdded();
      this.#added.splice(lowerBound(this.#added, key), 1);
    }
  }

  /** Current value of `key`. */
  get(key: string): V | undefined {
    return this.#overlay.has(key) ? this.#overlay.get(key) : this.#base.get(key);
  }

  /** An immutable view of the current content; later sets and deletes do not affect it. */
  view(): ReadonlyMap<string, V> {
    this.#sortAdded();
    // Fold the overlay once copying it per snapshot would cost more than a rebuild now and then.
    if (this.#overlay.size > 64 && this.#overlay.size * 8 > this.#base.size) this.#compact();
    return new LayeredMap(this.#base, new Map(this.#overlay), [...this.#added], this.#size);
  }

  #sortAdded(): void {
    if (this.#addedSorted) return;
    this.#added.sort();
    this.#addedSorted = true;
  }

  #has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  #compact(): void {
    const next = new Map<string, V>();
    for (const [k, v] of new LayeredMap(this.#base, this.#overlay, this.#added, this.#size)) next.set(k, v);
    this.#base = next;
    this.#overlay = new Map();
    this.#added = [];
  }
}

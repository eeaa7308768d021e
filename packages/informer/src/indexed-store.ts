/**
 * The informer's cache: objects by key plus named secondary indices (client-go's
 * `ThreadSafeStore` + `Indexers`). The `namespace` index is always present.
 *
 * @module
 */
import type { KubeObject } from './types.js';

/** Maps an object to the index values it is filed under (e.g. `[obj.spec.nodeName]`). */
export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => readonly string[];

/** Index name → index function. */
export type Indexers<T extends KubeObject = KubeObject> = Readonly<Record<string, IndexFunc<T>>>;

/** The name of the built-in namespace index. */
export const NAMESPACE_INDEX = 'namespace';

/** The built-in namespace index function (cluster-scoped objects are filed under `''`). */
export const namespaceIndexFunc: IndexFunc = (obj) => [obj.metadata?.namespace ?? ''];

/** Read access to a keyed, indexed cache. */
export interface ReadonlyIndexer<T extends KubeObject = KubeObject> {
  /** The object stored under `key` (`ns/name` or `name`). */
  getByKey(key: string): T | undefined;
  /** Every cached object. */
  list(): T[];
  /** Every key. */
  listKeys(): string[];
  /** Objects whose index function for `indexName` returned `value`. */
  byIndex(indexName: string, value: string): T[];
  /** Keys of the objects filed under `value` in `indexName`. */
  indexKeys(indexName: string, value: string): string[];
  /** Every value present in `indexName`. */
  listIndexValues(indexName: string): string[];
  /** The names of the configured indices. */
  indexNames(): string[];
  /** Number of cached objects. */
  readonly size: number;
}

/** Thrown when an index name is unknown or added twice. */
export class IndexError extends Error {
  override readonly name = 'IndexError';
}

/** A mutable keyed store with secondary indices. */
export class IndexedStore<T extends KubeObject = KubeObject> implements ReadonlyIndexer<T> {
  readonly #items = new Map<string, T>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  readonly #indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Indexers<T> = {}) {
    this.addIndexers({ [NAMESPACE_INDEX]: namespaceIndexFunc as IndexFunc<T>, ...indexers });
  }

  get size(): number {
    return this.#items.size;
  }

  /** Adds indices; existing objects are indexed at once. Names must be new. */
  addIndexers(indexers: Indexers<T>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.#indexers.has(name)) throw new IndexError(`index ${JSON.stringify(name)} already exists`);
      this.#indexers.set(name, fn);
      const index = new Map<string, Set<string>>();
      this.#indices.set(name, index);
      for (const [key, obj] of this.#items) for (const v of fn(obj)) addTo(index, v, key);
    }
  }

  /** Adds or replaces the object under `key`. */
  set(key: string, obj: T): void {
    const old = this.#items.get(key);
    this.#items.set(key, obj);
    this.#reindex(key, old, obj);
  }

  /** Removes `key`; returns the object that was stored. */
  delete(key: string): T | undefined {
    const old = this.#items.get(key);
    if (old === undefined) return undefined;
    this.#items.delete(key);
    this.#reindex(key, old, undefined);
    return old;
  }

  /** Replaces the whole content. */
  replace(entries: Iterable<readonly [string, T]>): void {
    this.#items.clear();
    for (const index of this.#indices.values()) index.clear();
    for (const [key, obj] of entries) this.set(key, obj);
  }

  getByKey(key: string): T | undefined {
    return this.#items.get(key);
  }

  list(): T[] {
    return [...this.#items.values()];
  }

  listKeys(): string[] {
    return [...this.#items.keys()];
  }

  byIndex(indexName: string, value: string): T[] {
    return this.indexKeys(indexName, value).map((k) => this.#items.get(k) as T);
  }

  indexKeys(indexName: string, value: string): string[] {
    const index = this.#indices.get(indexName);
    if (!index) throw new IndexError(`no index named ${JSON.stringify(indexName)}`);
    return [...(index.get(value) ?? [])];
  }

  listIndexValues(indexName: string): string[] {
    const index = this.#indices.get(indexName);
    if (!index) throw new IndexError(`no index named ${JSON.stringify(indexName)}`);
    return [...index.keys()];
  }

  indexNames(): string[] {
    return [...this.#indexers.keys()];
  }

  #reindex(key: string, old: T | undefined, obj: T | undefined): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name) as Map<string, Set<string>>;
      const before = old === undefined ? [] : fn(old);
      const after = obj === undefined ? [] : fn(obj);
      if (before.length === 1 && after.length === 1 && before[0] === after[0]) continue;
      for (const v of before) removeFrom(index, v, key);
      for (const v of after) addTo(index, v, key);
    }
  }
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let set = index.get(value);
  if (!set) {
    set = new Set();
    index.set(value, set);
  }
  set.add(key);
}

function removeFrom(index: Map<string, Set<string>>, value: string, key: string): void {
  const set = index.get(value);
  if (!set) return;
  set.delete(key);
  if (set.size === 0) index.delete(value);
}

/**
 * Typed read-only views over an informer's cache (client-go's listers).
 *
 * @module
 */
import { NAMESPACE_INDEX, type ReadonlyIndexer } from './indexed-store.js';
import type { KubeObject } from './types.js';

/** Keeps objects for which the predicate returns true. */
export type ObjectFilter<T extends KubeObject> = (obj: T) => boolean;

/** True when every label in `selector` is set on `obj` with the same value (equality-based selector). */
export function matchesLabels(obj: KubeObject, selector: Readonly<Record<string, string>>): boolean {
  const labels = obj.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false;
  return true;
}

/** Read access to the objects of one namespace. */
export interface NamespaceLister<T extends KubeObject> {
  /** The object named `name` in this namespace. */
  get(name: string): T | undefined;
  /** Objects in this namespace, optionally filtered. */
  list(filter?: ObjectFilter<T>): T[];
}

/** Read access to an informer's cache. The returned objects are shared: do not mutate them. */
export class Lister<T extends KubeObject = KubeObject> {
  readonly #indexer: ReadonlyIndexer<T>;

  constructor(indexer: ReadonlyIndexer<T>) {
    this.#indexer = indexer;
  }

  /** Every cached object, optionally filtered. */
  list(filter?: ObjectFilter<T>): T[] {
    const all = this.#indexer.list();
    return filter ? all.filter(filter) : all;
  }

  /** The object `name` in `namespace` (omit `namespace` for cluster-scoped objects). */
  get(name: string, namespace?: string): T | undefined {
    return this.#indexer.getByKey(namespace ? `${namespace}/${name}` : name);
  }

  /** Objects filed under `value` in the index `indexName`. */
  byIndex(indexName: string, value: string): T[] {
    return this.#indexer.byIndex(indexName, value);
  }

  /** A view of one namespace, served from the namespace index. */
  namespaced(namespace: string): NamespaceLister<T> {
    const indexer = this.#indexer;
    return {
      get: (name) => indexer.getByKey(`${namespace}/${name}`),
      list: (filter) => {
        const objs = indexer.byIndex(NAMESPACE_INDEX, namespace);
        return filter ? objs.filter(filter) : objs;
      },
    };
  }
}

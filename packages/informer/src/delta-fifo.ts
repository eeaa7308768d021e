/**
 * An ordered per-key queue of changes (client-go's `DeltaFIFO`): every key keeps the
 * list of what happened to it since it was last popped, keys pop in the order they first
 * became dirty, `replace` (a relist) reports the keys that vanished as deletes carrying a
 * tombstone, and consecutive deletes collapse into one.
 *
 * @module
 */
import { type DeletedFinalStateUnknown, isTombstone, objectKey, tombstone } from './keys.js';
import type { KubeObject } from './types.js';

/** What happened to an object. */
export type DeltaType = 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync';

/** One change; `Deleted` deltas from a relist carry a tombstone. */
export interface Delta<T extends KubeObject = KubeObject> {
  readonly type: DeltaType;
  readonly object: T | DeletedFinalStateUnknown<T>;
}

/** The pending changes of one key, as {@link DeltaFIFO.pop} hands them out. */
export interface PoppedDeltas<T extends KubeObject = KubeObject> {
  readonly key: string;
  readonly deltas: readonly Delta<T>[];
  /** True while the changes of the first `replace` (the initial list) are being popped. */
  readonly isInInitialList: boolean;
}

/** The objects the consumer already knows (its store), used for tombstones and resync. */
export interface KnownObjects<T extends KubeObject = KubeObject> {
  /** The stored object for `key`. */
  getByKey(key: string): T | undefined;
  /** Every stored key. */
  listKeys(): string[];
}

/** Options for {@link DeltaFIFO}. */
export interface DeltaFIFOOptions<T extends KubeObject> {
  /** The consumer's store. Without it, `replace` cannot report deletions. */
  readonly knownObjects?: KnownObjects<T>;
  /** Key function. @default objectKey (`namespace/name`) */
  readonly keyOf?: (obj: T | DeletedFinalStateUnknown<T>) => string;
}

/** A per-key ordered delta queue. */
export class DeltaFIFO<T extends KubeObject = KubeObject> {
  readonly #items = new Map<string, Delta<T>[]>();
  readonly #queue: string[] = [];
  #queueHead = 0;
  readonly #known: KnownObjects<T> | undefined;
  readonly #keyOf: (obj: T | DeletedFinalStateUnknown<T>) => string;
  #populated = false;
  #initialPopulationCount = 0;

  constructor(options: DeltaFIFOOptions<T> = {}) {
    this.#known = options.knownObjects;
    this.#keyOf = options.keyOf ?? objectKey;
  }

  /** Number of keys waiting to be popped. */
  get length(): number {
    return this.#queue.length - this.#queueHead;
  }

  /** True once the first `replace` happened and all of its changes were popped. */
  hasSynced(): boolean {
    return this.#populated && this.#initialPopulationCount === 0;
  }

  /** Records an add (from a watch event). */
  add(obj: T): void {
    this.#populated = true;
    this.#enqueue('Added', obj);
  }

  /** Records an update. */
  update(obj: T): void {
    this.#populated = true;
    this.#enqueue('Updated', obj);
  }

  /** Records a delete. Ignored when neither the queue nor the known objects have the key. */
  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    this.#populated = true;
    const key = this.#keyOf(obj);
    if (!this.#items.has(key) && this.#known?.getByKey(key) === undefined) return;
    this.#enqueue('Deleted', obj);
  }

  /**
   * Records a relist: every listed object as `Replaced`, and every known or queued key
   * missing from `list` as `Deleted` with a tombstone carrying its last known state.
   */
  replace(list: readonly T[]): void {
    const listed = new Set<string>();
    for (const obj of list) {
      const key = this.#keyOf(obj);
      listed.add(key);
      this.#enqueueKey(key, 'Replaced', obj);
    }
    let queuedDeletions = 0;
    if (this.#known) {
      for (const key of this.#known.listKeys()) {
        if (listed.has(key)) continue;
        const last = this.#lastDelta(key);
        if (last?.type === 'Deleted') continue;
        const obj = this.#known.getByKey(key);
        if (obj === undefined) continue;
        queuedDeletions++;
        this.#enqueueKey(key, 'Deleted', tombstone(key, obj));
      }
    }
    for (const [key, deltas] of this.#items) {
      if (listed.has(key)) continue;
      const last = deltas[deltas.length - 1];
      if (!last || last.type === 'Deleted') continue;
      queuedDeletions++;
      this.#enqueueKey(key, 'Deleted', tombstone(key, unwrap(last.object)));
    }
    if (!this.#populated) {
      this.#populated = true;
      this.#initialPopulationCount = listed.size + queuedDeletions;
    }
  }

  /** Queues a `Sync` of every known object that has no pending change (a resync). */
  resync(): void {
    if (!this.#known) return;
    for (const key of this.#known.listKeys()) {
      if (this.#items.has(key)) continue;
      const obj = this.#known.getByKey(key);
      if (obj !== undefined) this.#enqueueKey(key, 'Sync', obj);
    }
  }

  /** Removes and returns the oldest dirty key with all its deltas, or `undefined`. */
  pop(): PoppedDeltas<T> | undefined {
    while (this.#queueHead < this.#queue.length) {
      const key = this.#queue[this.#queueHead] as string;
      this.#queue[this.#queueHead] = '';
      this.#queueHead++;
      if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
        this.#queue.splice(0, this.#queueHead);
        this.#queueHead = 0;
      }
      const deltas = this.#items.get(key);
      if (!deltas) continue;
      this.#items.delete(key);
      const isInInitialList = this.#initialPopulationCount > 0;
      if (isInInitialList) this.#initialPopulationCount--;
      return { key, deltas, isInInitialList };
    }
    return undefined;
  }

  #lastDelta(key: string): Delta<T> | undefined {
    const deltas = this.#items.get(key);
    return deltas?.[deltas.length - 1];
  }

  #enqueue(type: DeltaType, obj: T | DeletedFinalStateUnknown<T>): void {
    this.#enqueueKey(this.#keyOf(obj), type, obj);
  }

  #enqueueKey(key: string, type: DeltaType, obj: T | DeletedFinalStateUnknown<T>): void {
    let deltas = this.#items.get(key);
    if (!deltas) {
      deltas = [];
      this.#items.set(key, deltas);
      this.#queue.push(key);
    }
    deltas.push({ type, object: obj });
    dedupDeletes(deltas);
  }
}

function unwrap<T extends KubeObject>(obj: T | DeletedFinalStateUnknown<T>): T {
  return isTombstone(obj) ? obj.obj : obj;
}

/** Two deletes in a row collapse into one; the one with the real final state wins over a tombstone. */
function dedupDeletes<T extends KubeObject>(deltas: Delta<T>[]): void {
  const n = deltas.length;
  if (n < 2) return;
  const a = deltas[n - 2] as Delta<T>;
  const b = deltas[n - 1] as Delta<T>;
  if (a.type !== 'Deleted' || b.type !== 'Deleted') return;
  const keep = isTombstone(b.object) && !isTombstone(a.object) ? a : b;
  deltas.splice(n - 2, 2, keep);
}

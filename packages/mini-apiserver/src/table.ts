/**
 * The per-resource part of the store: current entries, a lazily sorted key index, the
 * bounded event history (the watch window) and list snapshots for continue tokens.
 *
 * @module
 * @internal
 */
import type { FieldSet } from './fields.js';
import type { ResourceType } from './resources.js';

/** One stored object version: its serialized JSON plus what selectors need. */
export interface StoreEntry {
  /** `namespace/name` for namespaced types, `name` otherwise (sort order = etcd key order). */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** The object's resourceVersion as a number. */
  readonly rv: number;
  /** The object serialized as JSON (what list, get and watch send). */
  readonly json: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly fields: FieldSet;
}

/** Type of a watch event kept in history. */
export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change: the new entry (for DELETED, the final state at the delete RV) and the previous one. */
export interface StoreEvent {
  readonly type: StoreEventType;
  readonly rv: number;
  readonly entry: StoreEntry;
  readonly prev: StoreEntry | undefined;
}

/** Something that receives a resource's events as they are committed. */
export interface EventSink {
  onEvent(event: StoreEvent): void;
}

/** Sorted entries of a resource at one resourceVersion. */
export type Snapshot = readonly StoreEntry[];

const MAX_SNAPSHOTS = 16;

/** The state of one resource type. */
export class ResourceTable {
  readonly entries = new Map<string, StoreEntry>();
  readonly sinks = new Set<EventSink>();
  /** Events with rv > compactedRv, oldest first, from index `historyStart`. */
  #history: StoreEvent[] = [];
  #historyStart = 0;
  #historyBytes = 0;
  /** Watches from an RV older than this get 410 Expired. */
  compactedRv: number;
  #sortedKeys: string[] | null = null;
  #current: Snapshot | null = null;
  readonly #snapshots = new Map<number, Snapshot>();

  readonly #historySize: number;

  constructor(
    readonly type: ResourceType,
    historySize: number,
    startRv: number,
  ) {
    this.#historySize = historySize;
    this.compactedRv = startRv;
  }

  /** Records a committed change, updates the entry map and notifies sinks. */
  commit(event: StoreEvent): void {
    const { entry } = event;
    if (event.type === 'DELETED') {
      this.entries.delete(entry.key);
      this.#sortedKeys = null;
    } else {
      if (event.prev === undefined) this.#sortedKeys = null;
      this.entries.set(entry.key, entry);
    }
    this.#current = null;
    this.#history.push(event);
    this.#historyBytes += eventBytes(event);
    if (this.#history.length - this.#historyStart > this.#historySize) this.dropOldest();
    for (const s of this.sinks) s.onEvent(event);
  }

  /** Bytes of serialized objects the history holds (what {@link dropOldest} frees). */
  get historyBytes(): number {
    return this.#historyBytes;
  }

  /** The resourceVersion of the oldest event kept, or `undefined` when the history is empty. */
  get oldestHistoryRv(): number | undefined {
    return this.#history[this.#historyStart]?.rv;
  }

  /**
   * Forgets the oldest event (as etcd compaction forgets old revisions): watches and continue
   * tokens from before it get 410 Expired from now on.
   */
  dropOldest(): void {
    const dropped = this.#history[this.#historyStart];
    if (dropped === undefined) return;
    this.compactedRv = dropped.rv;
    this.#historyBytes -= eventBytes(dropped);
    this.#history[this.#historyStart] = undefined as unknown as StoreEvent;
    this.#historyStart++;
    if (this.#historyStart > 1024 && this.#historyStart * 2 > this.#history.length) {
      this.#history = this.#history.slice(this.#historyStart);
      this.#historyStart = 0;
    }
    // Snapshots older than the window can no longer be served; they would only hold memory.
    for (const rv of this.#snapshots.keys()) if (rv < this.compactedRv) this.#snapshots.delete(rv);
  }

  /** Forgets all history: every RV up to `rv` becomes too old for watches and continues. */
  compact(rv: number): void {
    this.#history = [];
    this.#historyStart = 0;
    this.#historyBytes = 0;
    this.compactedRv = rv;
    this.#snapshots.clear();
  }

  /**
   * Events with rv > `fromRv`, oldest first.
   * @returns `undefined` when `fromRv` is older than the history window.
   */
  eventsSince(fromRv: number): StoreEvent[] | undefined {
    if (fromRv < this.compactedRv) return undefined;
    let lo = this.#historyStart;
    let hi = this.#history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#history[mid] as StoreEvent).rv <= fromRv) lo = mid + 1;
      else hi = mid;
    }
    return this.#history.slice(lo);
  }

  /** The current entries in key order (cached until the next write). */
  currentSnapshot(): Snapshot {
    if (this.#current) return this.#current;
    if (!this.#sortedKeys) this.#sortedKeys = [...this.entries.keys()].sort(compareKeys);
    const out: StoreEntry[] = new Array(this.#sortedKeys.length);
    for (let i = 0; i < this.#sortedKeys.length; i++)
      out[i] = this.entries.get(this.#sortedKeys[i] as string) as StoreEntry;
    this.#current = out;
    return out;
  }

  /** Keeps a snapshot so that continue tokens at `rv` can be served from it. */
  remember(rv: number, snapshot: Snapshot): void {
    this.#snapshots.delete(rv);
    this.#snapshots.set(rv, snapshot);
    while (this.#snapshots.size > MAX_SNAPSHOTS) {
      const oldest = this.#snapshots.keys().next().value as number;
      this.#snapshots.delete(oldest);
    }
  }

  /**
   * The entries as they were at global resourceVersion `rv`: a remembered snapshot, or the
   * current state with later history undone.
   * @returns `undefined` when `rv` is older than the history window.
   */
  snapshotAt(rv: number): Snapshot | undefined {
    if (rv < this.compactedRv) return undefined;
    const cached = this.#snapshots.get(rv);
    if (cached) return cached;
    const later = this.eventsSince(rv);
    if (!later) return undefined;
    if (later.length === 0) return this.currentSnapshot();
    const state = new Map(this.entries);
    for (let i = later.length - 1; i >= 0; i--) {
      const ev = later[i] as StoreEvent;
      if (ev.prev) state.set(ev.prev.key, ev.prev);
      else state.delete(ev.entry.key);
    }
    const keys = [...state.keys()].sort(compareKeys);
    const snap = keys.map((k) => state.get(k) as StoreEntry);
    this.remember(rv, snap);
    return snap;
  }
}

/** What an event keeps alive: its object's JSON (the previous version is an older event's). */
function eventBytes(event: StoreEvent): number {
  return event.entry.json.length;
}

/** Byte-wise key order, as etcd sorts keys. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Index of the first entry whose key is >= `key` (binary search). */
export function lowerBound(snapshot: Snapshot, key: string): number {
  let lo = 0;
  let hi = snapshot.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((snapshot[mid] as StoreEntry).key < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

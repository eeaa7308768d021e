/**
 * The kubelet's pod status cache (upstream `pkg/kubelet/container/cache.go`): the newest
 * runtime status of every pod, with reads that wait until the cache is fresher than a given
 * time — woken by the writer instead of polling.
 *
 * @module
 */
import { abortReason } from '@nodeagent/core';
import { emptyPodStatus, type PodStatus } from '@nodeagent/kubecontainer';

/** A cache read: the status, and the error of the inspection that produced it. */
export interface CachedPodStatus {
  /** The status (an empty status with only `id` set on a miss or when the inspection failed). */
  readonly status: PodStatus;
  /** Why the last inspection of this pod failed; `undefined` when it succeeded. */
  readonly error: Error | undefined;
}

/** Options of {@link PodStatusCache}. */
export interface PodStatusCacheOptions {
  /**
   * Refuse a `set` whose timestamp is older than the cached entry's (upstream does this when
   * the evented PLEG is on, because two writers race). @default false
   */
  readonly refuseOlderWrites?: boolean;
}

interface Entry {
  readonly status: PodStatus | undefined;
  readonly error: Error | undefined;
  readonly modified: number;
}

interface Subscriber {
  readonly minTimeMs: number;
  readonly resolve: (value: CachedPodStatus) => void;
}

/**
 * The pod status cache. PLEG writes it (`set` per inspected pod, then `updateTime` once per
 * relist); pod workers read it with {@link PodStatusCache.getNewerThan} so they never act on a
 * status older than the event that woke them. All times are ms since the epoch.
 *
 * @example
 * ```ts
 * const cache = new PodStatusCache();
 * const { status, error } = await cache.getNewerThan(uid, lastSyncMs, signal);
 * ```
 */
export class PodStatusCache {
  readonly #pods = new Map<string, Entry>();
  readonly #subscribers = new Map<string, Subscriber[]>();
  #globalTimestamp: number | undefined;
  readonly #refuseOlderWrites: boolean;

  constructor(options: PodStatusCacheOptions = {}) {
    this.#refuseOlderWrites = options.refuseOlderWrites ?? false;
  }

  /**
   * The global freshness stamp (`updateTime`), ms; `undefined` until the first relist finished
   * ("not ready to serve").
   */
  get timestamp(): number | undefined {
    return this.#globalTimestamp;
  }

  /** Number of cached pods. */
  get size(): number {
    return this.#pods.size;
  }

  /** UIDs of the cached pods. */
  uids(): string[] {
    return [...this.#pods.keys()];
  }

  /**
   * The cached status. A miss returns an empty status with only the ID set: the cache holds
   * every pod the runtime has, so a miss means the runtime has nothing of that pod.
   */
  get(uid: string): CachedPodStatus {
    const entry = this.#pods.get(uid);
    return entry === undefined ? { status: emptyPodStatus(uid), error: undefined } : toCached(uid, entry);
  }

  /** When the pod's entry was written, ms; `undefined` when not cached. */
  modifiedAt(uid: string): number | undefined {
    return this.#pods.get(uid)?.modified;
  }

  /**
   * Stores a status (or the error of a failed inspection, with `status` undefined) stamped
   * `timestampMs`, and releases the readers of this pod waiting for a time not after it.
   * @returns false when refused because the cached entry is newer (`refuseOlderWrites` only).
   */
  set(uid: string, status: PodStatus | undefined, error: Error | undefined, timestampMs: number): boolean {
    const cached = this.#pods.get(uid);
    if (this.#refuseOlderWrites && cached !== undefined && cached.modified > timestampMs) return false;
    this.#pods.set(uid, { status, error, modified: timestampMs });
    this.#notify(uid, timestampMs);
    return true;
  }

  /** Forgets a pod. Waiting readers are not woken (as upstream). */
  delete(uid: string): void {
    this.#pods.delete(uid);
  }

  /**
   * Marks the whole cache fresh as of `timestampMs` (called after a relist has written every
   * changed pod) and releases every waiting reader whose time is not after it.
   */
  updateTime(timestampMs: number): void {
    this.#globalTimestamp = timestampMs;
    for (const uid of [...this.#subscribers.keys()]) this.#notify(uid, timestampMs);
  }

  /**
   * Resolves with the pod's status once the cache is newer than `minTimeMs`: at once when the
   * entry was written strictly after it or the global stamp is strictly after it (a miss then
   * gives the empty status); otherwise on the next `set` of this pod or `updateTime` whose
   * timestamp is not before `minTimeMs`. Rejects with the signal's reason when it aborts.
   */
  getNewerThan(uid: string, minTimeMs: number, signal?: AbortSignal): Promise<CachedPodStatus> {
    const ready = this.#getIfNewerThan(uid, minTimeMs);
    if (ready !== undefined) return Promise.resolve(ready);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<CachedPodStatus>((resolve, reject) => {
      const onAbort = (): void => {
        this.#unsubscribe(uid, subscriber);
        reject(abortReason(signal as AbortSignal));
      };
      const subscriber: Subscriber = {
        minTimeMs,
        resolve: (value) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(value);
        },
      };
      const list = this.#subscribers.get(uid);
      if (list === undefined) this.#subscribers.set(uid, [subscriber]);
      else list.push(subscriber);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Number of readers waiting in {@link PodStatusCache.getNewerThan}. */
  get waiting(): number {
    let n = 0;
    for (const list of this.#subscribers.values()) n += list.length;
    return n;
  }

  #getIfNewerThan(uid: string, minTimeMs: number): CachedPodStatus | undefined {
    const entry = this.#pods.get(uid);
    const globalIsNewer = this.#globalTimestamp !== undefined && this.#globalTimestamp > minTimeMs;
    if (entry === undefined)
      return globalIsNewer ? { status: emptyPodStatus(uid), error: undefined } : undefined;
    if (entry.modified > minTimeMs || globalIsNewer) return toCached(uid, entry);
    return undefined;
  }

  #notify(uid: string, timestampMs: number): void {
    const list = this.#subscribers.get(uid);
    if (list === undefined) return;
    const keep: Subscriber[] = [];
    const release: Subscriber[] = [];
    for (const s of list) (timestampMs < s.minTimeMs ? keep : release).push(s);
    if (keep.length === 0) this.#subscribers.delete(uid);
    else this.#subscribers.set(uid, keep);
    for (const s of release) s.resolve(this.get(uid));
  }

  #unsubscribe(uid: string, subscriber: Subscriber): void {
    const list = this.#subscribers.get(uid);
    if (list === undefined) return;
    const index = list.indexOf(subscriber);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.#subscribers.delete(uid);
  }
}

function toCached(uid: string, entry: Entry): CachedPodStatus {
  return { status: entry.status ?? emptyPodStatus(uid), error: entry.error };
}

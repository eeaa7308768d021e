/**
 * The last start failure of each container (upstream `ReasonCache`): what the status shows as
 * the waiting reason and message (`CrashLoopBackOff`, `ImagePullBackOff`, `ErrImagePull`, …)
 * until a start succeeds.
 *
 * @module
 */
import type { SyncErrorReason } from './errors.js';

/** A cached start failure. */
export interface CachedReason {
  /** The kubelet's reason. */
  readonly reason: SyncErrorReason;
  /** The detail message. */
  readonly message: string;
}

/** Start failures keyed by pod UID and container name, bounded (oldest dropped first). */
export class ReasonCache {
  readonly #entries = new Map<string, CachedReason>();

  readonly #capacity: number;

  /** @param capacity most entries kept (upstream: 1000). */
  constructor(capacity = 1000) {
    this.#capacity = capacity;
  }

  /** Records a failure. */
  add(uid: string, name: string, reason: CachedReason): void {
    const key = `${uid}_${name}`;
    this.#entries.delete(key);
    this.#entries.set(key, reason);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  /** Forgets a container's failure (its start succeeded). */
  remove(uid: string, name: string): void {
    this.#entries.delete(`${uid}_${name}`);
  }

  /** The container's last failure, if any. */
  get(uid: string, name: string): CachedReason | undefined {
    return this.#entries.get(`${uid}_${name}`);
  }
}

/**
 * One worker's record (the kubelet's `podSyncStatus`): the pending and active update, the
 * lifecycle timestamps from which the state is derived, and the wake-up signal of its loop.
 *
 * @module
 * @internal
 */
import type { V1Pod } from '@kubernetes/client-node';
import type {
  KillPodOptions,
  PodStatusFunc,
  PodSyncStatusSnapshot,
  PodWorkerState,
  RunningPod,
  SyncPodType,
} from './types.js';

/** An update as the worker keeps it (a private, mutable copy of the caller's options). */
export interface PodUpdate<R extends RunningPod> {
  updateType: SyncPodType;
  startTime: number | undefined;
  pod: V1Pod | undefined;
  mirrorPod: V1Pod | undefined;
  runningPod: R | undefined;
  killOptions: KillPodOptions | undefined;
}

/** The record of one pod UID. */
export class PodSyncStatus<R extends RunningPod> {
  /** Aborted on termination start / grace shrink; replaced by a fresh one at the next sync. */
  abort: AbortController | undefined;
  /** The worker took an update and has not finished acting on it (status wait or callback). */
  syncInFlight = false;
  working = false;
  pendingUpdate: PodUpdate<R> | undefined;
  activeUpdate: PodUpdate<R> | undefined;
  startedAt: number | undefined;
  terminatingAt: number | undefined;
  terminatedAt: number | undefined;
  gracePeriodSeconds = 0;
  notifyPostTerminating: (() => void)[] = [];
  statusPostTerminating: PodStatusFunc[] = [];
  startedTerminating = false;
  deleted = false;
  evicted = false;
  finished = false;
  restartRequested = false;
  observedRuntime = false;

  constructor(
    readonly fullname: string,
    readonly syncedAt: number,
  ) {}

  /**
   * Aborts the sync in flight, if any, so the worker moves on to the pending update. An idle
   * worker has nothing to abort (and aborting is not free: it builds an error and dispatches
   * an event).
   */
  cancelSync(reason: string): boolean {
    if (!this.syncInFlight || this.abort === undefined || this.abort.signal.aborted) return false;
    const err = new Error(reason);
    err.name = 'AbortError';
    this.abort.abort(err);
    return true;
  }

  isTerminationRequested(): boolean {
    return this.terminatingAt !== undefined;
  }

  isTerminated(): boolean {
    return this.terminatedAt !== undefined;
  }

  isStarted(): boolean {
    return this.startedAt !== undefined;
  }

  /** The state, derived from the timestamps as upstream does. */
  workType(): PodWorkerState {
    if (this.isTerminated()) return 'terminated';
    if (this.isTerminationRequested()) return 'terminating';
    return 'sync';
  }

  /**
   * Folds a consumed update into `activeUpdate`, what other components see: the newest pod
   * (unless only a runtime pod came and a real pod is known), the last mirror pod given, the
   * kill options with a sticky `evict`.
   */
  mergeLastUpdate(other: PodUpdate<R>): void {
    const prev = this.activeUpdate;
    // The update type is not carried (upstream leaves it at its zero value): a replay of the
    // active update is a plain `sync`.
    const merged: PodUpdate<R> = prev
      ? { ...prev }
      : {
          updateType: 'sync',
          startTime: undefined,
          pod: undefined,
          mirrorPod: undefined,
          runningPod: undefined,
          killOptions: undefined,
        };
    if (merged.pod === undefined || other.runningPod === undefined) merged.pod = other.pod;
    merged.runningPod = other.runningPod;
    if (other.mirrorPod !== undefined) merged.mirrorPod = other.mirrorPod;
    if (other.killOptions !== undefined) {
      const evict = other.killOptions.evict === true || prev?.killOptions?.evict === true;
      const override = other.killOptions.podTerminationGracePeriodSecondsOverride;
      merged.killOptions = {
        ...(evict ? { evict } : {}),
        ...(override !== undefined ? { podTerminationGracePeriodSecondsOverride: override } : {}),
      };
    }
    // startTime is not carried: it only measures config-to-worker latency of one update.
    merged.startTime = undefined;
    this.activeUpdate = merged;
  }

  snapshot(): PodSyncStatusSnapshot {
    return {
      state: this.workType(),
      fullname: this.fullname,
      working: this.working,
      syncedAt: this.syncedAt,
      startedAt: this.startedAt,
      terminatingAt: this.terminatingAt,
      terminatedAt: this.terminatedAt,
      startedTerminating: this.startedTerminating,
      deleted: this.deleted,
      evicted: this.evicted,
      finished: this.finished,
      restartRequested: this.restartRequested,
      observedRuntime: this.observedRuntime,
      gracePeriodSeconds: this.gracePeriodSeconds,
    };
  }
}

/**
 * A wake-up signal with room for one pending notification (a Go channel of capacity 1
 * carrying no data). Closing it ends the worker loop waiting on it.
 */
export class WakeSignal {
  #pending = false;
  #closed = false;
  #waiter: ((open: boolean) => void) | undefined;

  /** Wakes the loop, or leaves one notification for its next wait. */
  notify(): void {
    if (this.#closed) return;
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter(true);
    } else {
      this.#pending = true;
    }
  }

  /** Drops a pending notification (the update it announced was just consumed). */
  drain(): void {
    this.#pending = false;
  }

  /** Ends the loop: its current or next wait resolves `false`. */
  close(): void {
    this.#closed = true;
    this.#pending = false;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.(false);
  }

  /** Resolves `true` on a notification, `false` once closed. */
  wait(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      this.#waiter = resolve;
    });
  }
}

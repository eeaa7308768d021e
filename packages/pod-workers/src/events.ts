/**
 * The typed events {@link PodWorkers} emits (eventemitter3). Listeners run synchronously;
 * one that throws is logged and never breaks a worker.
 *
 * @module
 */

/** Which step of a sync failed. */
export type PodSyncOperation =
  | 'getNewerThan'
  | 'syncPod'
  | 'syncTerminatingPod'
  | 'syncTerminatingRuntimePod'
  | 'syncTerminatedPod';

/** A worker's lifecycle state, including the final `finished`. */
export type PodLifecycleState = 'terminating' | 'terminated' | 'finished';

/** The event map of {@link PodWorkers}. */
export interface PodWorkersEvents {
  /** A worker moved forward in its lifecycle (never backwards). */
  stateChange: (event: { readonly uid: string; readonly state: PodLifecycleState }) => void;
  /** A sync step failed (not counting aborts); the pod is retried after a back-off. */
  syncError: (event: {
    readonly uid: string;
    readonly operation: PodSyncOperation;
    readonly error: Error;
    /** When the retry is due, in ms from now. */
    readonly retryInMs: number;
  }) => void;
  /** A callback ran longer than `maxSlotHoldMs` and stopped counting against `concurrency`. */
  slowSync: (event: { readonly uid: string }) => void;
  /** A {@link PodWorkers.killPodAndWait} timed out (the kubelet's `ExceededGracePeriod` event). */
  exceededGracePeriod: (event: { readonly uid: string; readonly timeoutSeconds: number }) => void;
}

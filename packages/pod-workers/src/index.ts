/**
 * The kubelet's per-pod worker contract: one serialized worker per pod UID, latest-wins
 * coalescing of updates, the one-way lifecycle sync → terminating → terminated, grace
 * periods that only shrink (never below 1 s), abort of a running sync when termination
 * starts, static pods with the same full name never running at once, `syncKnownPods`
 * reconciliation and the `should*` / `could*` queries. You supply the sync callbacks and a
 * pod status source; the workers decide when each runs.
 *
 * @example
 * ```ts
 * import { WorkQueue } from '@nodeagent/core';
 * import { PodWorkers } from '@nodeagent/pod-workers';
 *
 * const workers = new PodWorkers({
 *   syncer: {
 *     syncPod: async (ctx, updateType, pod) => ({ isTerminal: false }),
 *     syncTerminatingPod: async (ctx, pod, status, graceSeconds) => console.log('stop within', graceSeconds),
 *     syncTerminatingRuntimePod: async () => {},
 *     syncTerminatedPod: async () => {},
 *   },
 *   statusProvider: { getNewerThan: async (uid) => ({ uid }) },
 *   workQueue: new WorkQueue<string>(),
 * });
 * const pod = { metadata: { uid: 'u1', name: 'web', namespace: 'default' } };
 * workers.updatePod({ updateType: 'create', pod });
 * await workers.killPodAndWait(pod, { gracePeriodSecondsOverride: 5 });
 * ```
 *
 * @packageDocumentation
 */
export { InvalidPodUpdateError, KillPodTimeoutError } from './errors.js';
export type { PodLifecycleState, PodSyncOperation, PodWorkersEvents } from './events.js';
export {
  calculateEffectiveGracePeriod,
  DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
  type EffectiveGracePeriod,
  killPodWaitTimeoutSeconds,
  MIN_GRACE_PERIOD_SECONDS,
  MIN_KILL_WAIT_SECONDS,
  remainingGracePeriodSeconds,
} from './grace-period.js';
export type { KillPodAndWaitOptions } from './kill-pod-and-wait.js';
export { POD_WORKER_METRIC_NAMES, type PodWorkersMetricsOptions } from './metrics.js';
export {
  API_SERVER_SOURCE,
  buildPodFullName,
  CONFIG_SOURCE_ANNOTATION_KEY,
  isPodPhaseTerminal,
  isStaticPod,
} from './pod-identity.js';
export { PodWorkers } from './pod-workers.js';
export type { PodWorkersOptions } from './pod-workers-options.js';
export {
  BACK_OFF_ON_TRANSIENT_ERROR_PERIOD_MS,
  DEFAULT_BACK_OFF_PERIOD_MS,
  DEFAULT_ERROR_BACKOFF_CAP_MS,
  DEFAULT_RESYNC_INTERVAL_MS,
  isNetworkNotReadyError,
  NETWORK_NOT_READY_ERROR_MSG,
  WORKER_BACK_OFF_PERIOD_JITTER_FACTOR,
  WORKER_RESYNC_INTERVAL_JITTER_FACTOR,
} from './requeue.js';
export type {
  KillPodOptions,
  PodEventRecorder,
  PodStatusFunc,
  PodStatusProvider,
  PodSyncer,
  PodSyncStatusSnapshot,
  PodWorkerState,
  PodWorkerSync,
  PodWorkQueue,
  RunningPod,
  SyncContext,
  SyncPodResult,
  SyncPodType,
  UpdatePodOptions,
} from './types.js';

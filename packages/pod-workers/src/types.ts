/**
 * The vocabulary of the pod workers: update types, worker states, the options of an
 * update, and the interfaces the caller implements (the sync callbacks, the pod status
 * provider, the requeue sink).
 *
 * @module
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';

/**
 * Why a pod is being synced (the kubelet's `SyncPodType`): `create` (first seen), `update`
 * (config changed), `sync` (periodic or event-driven resync), `kill` (terminate it).
 */
export type SyncPodType = 'create' | 'update' | 'sync' | 'kill';

/**
 * A worker's lifecycle state (the kubelet's `PodWorkerState`). It only moves forward:
 * `sync` → `terminating` → `terminated`. After `syncTerminatedPod` succeeds the worker is
 * also *finished* (see {@link PodSyncStatusSnapshot.finished}).
 */
export type PodWorkerState = 'sync' | 'terminating' | 'terminated';

/** Lets `syncTerminatingPod` amend the pod's final status (reason, message, conditions). */
export type PodStatusFunc = (status: V1PodStatus) => void;

/** Options of a `kill` update (the kubelet's `KillPodOptions`). */
export interface KillPodOptions {
  /**
   * Called once when the termination this kill asked for has completed (`syncTerminatingPod`
   * succeeded), or at once when the pod is already terminated or the options do not apply
   * (the pod is not terminating). The kubelet's `CompletedCh`.
   */
  readonly onCompleted?: () => void;
  /** The kubelet is evicting the pod: its content is removed once terminated. @default false */
  readonly evict?: boolean;
  /** Amends the final pod status; the last one given is passed to `syncTerminatingPod`. */
  readonly podStatusFunc?: PodStatusFunc;
  /**
   * A grace period, in seconds, shorter than the pod's own (eviction, preemption, shutdown).
   * It only takes effect if it is shorter than the grace period already in force.
   */
  readonly podTerminationGracePeriodSecondsOverride?: number;
}

/**
 * A pod known only from the runtime (containers without config): the subset of the
 * kubelet's `kubecontainer.Pod` the workers need. Callers may pass richer objects; they reach
 * `syncTerminatingRuntimePod` unchanged.
 */
export interface RunningPod {
  /** The pod UID. */
  readonly id: string;
  /** The pod name. */
  readonly name: string;
  /** The pod namespace. */
  readonly namespace: string;
}

/** One call to {@link PodWorkers.updatePod} (the kubelet's `UpdatePodOptions`). */
export interface UpdatePodOptions<R extends RunningPod = RunningPod> {
  /** Why the pod is being synced. */
  readonly updateType: SyncPodType;
  /**
   * When the kubelet first saw this change, in ms since the epoch: feeds the
   * `kubelet_pod_worker_duration_seconds` and `..._start_duration_seconds` metrics. When
   * updates coalesce, the oldest start time is kept.
   */
  readonly startTime?: number;
  /** The pod from config. Required unless `runningPod` is given with `updateType: 'kill'`. */
  readonly pod?: V1Pod;
  /** The pod's mirror pod, if it is a static pod; the last one given is remembered. */
  readonly mirrorPod?: V1Pod;
  /** A runtime-only pod to tear down; only valid with `updateType: 'kill'` and no `pod`. */
  readonly runningPod?: R;
  /** Options of a kill; ignored (and `onCompleted` called) unless the pod is terminating. */
  readonly killOptions?: KillPodOptions;
}

/** What the callbacks receive: aborted when termination starts or the grace period shrinks. */
export interface SyncContext {
  /**
   * Aborted when the pod starts terminating or its grace period shrinks while a callback
   * runs; the callback should stop promptly (a newer update is already queued).
   */
  readonly signal: AbortSignal;
}

/** What `syncPod` returns. */
export interface SyncPodResult {
  /** The pod reached a terminal phase by itself (all containers done, no restart): terminate it. */
  readonly isTerminal: boolean;
  /**
   * Sync the pod again after this many ms if that is sooner than the resync interval: the
   * sync succeeded but something is due before then (a container whose CrashLoopBackOff or
   * ImagePullBackOff expires; `KubeRuntimeManager.syncOutcome` computes it). Minimum: 0.
   * @default the resync interval
   */
  readonly requeueAfterMs?: number | undefined;
}

/**
 * The work the caller does for each pod (the kubelet's `podSyncer`). Each method is called
 * for one pod at a time: never two calls for one UID at once. A rejection is logged,
 * reported as a `syncError` event and retried after a back-off; it never stops the worker.
 *
 * @typeParam S the pod status type the {@link PodStatusProvider} returns.
 * @typeParam R the runtime-only pod type.
 */
export interface PodSyncer<S, R extends RunningPod = RunningPod> {
  /** Moves a running pod toward its spec. Resolve `{ isTerminal: true }` when it completed by itself. */
  syncPod(
    ctx: SyncContext,
    updateType: SyncPodType,
    pod: V1Pod,
    mirrorPod: V1Pod | undefined,
    podStatus: S,
  ): Promise<SyncPodResult>;
  /**
   * Stops every container of the pod. `gracePeriodSeconds` is the effective grace period
   * (≥ 1), or `undefined` when the pod ended by itself and no kill gave one (use the pod's own).
   * Resolving means no container runs any more.
   */
  syncTerminatingPod(
    ctx: SyncContext,
    pod: V1Pod,
    podStatus: S,
    gracePeriodSeconds: number | undefined,
    podStatusFn: PodStatusFunc | undefined,
  ): Promise<void>;
  /** Stops the containers of a pod known only from the runtime (no config, no status wait). */
  syncTerminatingRuntimePod(ctx: SyncContext, runningPod: R): Promise<void>;
  /** Cleans up after a terminated pod (volumes, cgroups, final status). Resolving finishes the worker. */
  syncTerminatedPod(ctx: SyncContext, pod: V1Pod, podStatus: S): Promise<void>;
}

/**
 * Where workers read pod status (the kubelet's pod cache; `@nodeagent/pleg`'s cache
 * implements it).
 */
export interface PodStatusProvider<S> {
  /**
   * Resolves with the status of `uid` once the cache holds one at least as new as `minTimeMs`
   * (ms since the epoch; 0 on a worker's first sync). Rejects with the signal's reason if
   * `signal` aborts first.
   */
  getNewerThan(uid: string, minTimeMs: number, signal: AbortSignal): Promise<S>;
  /**
   * Whether the cache shows no running container and no ready sandbox for `uid` (`true` when
   * it knows nothing of it). Lets a pod first seen in a terminal phase (after an agent
   * restart) be recorded as terminated at once; without it such pods go through
   * `syncTerminatingPod` again.
   */
  isRuntimeTerminal?(uid: string): boolean;
}

/**
 * Where workers schedule their next resync (the kubelet's work queue, `Enqueue(uid, delay)`).
 * `WorkQueue<string>` from `@nodeagent/core` satisfies it; the caller turns due UIDs back
 * into `updatePod({ updateType: 'sync', ... })` calls.
 */
export interface PodWorkQueue {
  /** Schedules `uid` for a resync after `delayMs` milliseconds (0: now). */
  addAfter(uid: string, delayMs: number): void;
}

/** Emits Kubernetes events about a pod (the kubelet's `record.EventRecorder`). */
export interface PodEventRecorder {
  /** Records an event of `eventType` (`Normal` or `Warning`) with `reason` and `message` on `pod`. */
  event(pod: V1Pod, eventType: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** One worker as {@link PodWorkers.syncKnownPods} reports it (the kubelet's `PodWorkerSync`). */
export interface PodWorkerSync {
  /** The worker's lifecycle state. */
  readonly state: PodWorkerState;
  /** The pod is no longer in the desired set. */
  readonly orphan: boolean;
  /** The worker has a pod spec (false for runtime-only pods). */
  readonly hasConfig: boolean;
  /** The pod is a static pod (from a file or URL, not the API). */
  readonly static: boolean;
}

/** A read-only view of one worker's record (the kubelet's `podSyncStatus`). Times in ms since the epoch. */
export interface PodSyncStatusSnapshot {
  /** The worker's lifecycle state. */
  readonly state: PodWorkerState;
  /** `<name>_<namespace>`. */
  readonly fullname: string;
  /** An update is pending or being processed. */
  readonly working: boolean;
  /** When the record was created. */
  readonly syncedAt: number;
  /** When the worker was allowed to start (static pods may wait), if it has. */
  readonly startedAt: number | undefined;
  /** When termination was requested, if it was. */
  readonly terminatingAt: number | undefined;
  /** When `syncTerminatingPod` (or the runtime variant) completed, if it has. */
  readonly terminatedAt: number | undefined;
  /** The worker has observed the termination request: `syncPod` will not run again. */
  readonly startedTerminating: boolean;
  /** The pod was deleted (deletion timestamp, orphaned, or runtime-only). */
  readonly deleted: boolean;
  /** The pod was evicted by a kill with `evict: true`. */
  readonly evicted: boolean;
  /** `syncTerminatedPod` succeeded (or the pod could never start): no more updates are accepted. */
  readonly finished: boolean;
  /** A `create` arrived while terminating: the UID is forgotten at the next `syncKnownPods`. */
  readonly restartRequested: boolean;
  /** The pod was seen as a runtime-only pod. */
  readonly observedRuntime: boolean;
  /** The effective grace period in force, in seconds; 0 until termination computes one. */
  readonly gracePeriodSeconds: number;
}

/**
 * The loop of one pod's worker (the kubelet's `podWorkerLoop`): for each wake-up, consume
 * the newest update, wait for a pod status newer than the last sync, call the callback of
 * the current state under the concurrency limit, then record the outcome and schedule the
 * next sync. It ends when the pod is finished.
 *
 * @module
 * @internal
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock, Logger } from '@nodeagent/core';
import type { ConcurrencyLimiter } from './concurrency-limiter.js';
import type { PodSyncOperation } from './events.js';
import type { PodUpdate, WakeSignal } from './pod-sync-status.js';
import type {
  PodEventRecorder,
  PodStatusFunc,
  PodStatusProvider,
  PodSyncer,
  PodWorkerState,
  RunningPod,
} from './types.js';

/** How a worker's next sync starts (the result of the kubelet's `startPodSync`). */
export type StartPodSyncResult<R extends RunningPod> =
  | { readonly ok: false }
  | { readonly ok: true; readonly canStart: false; readonly canEverStart: boolean }
  | {
      readonly ok: true;
      readonly canStart: true;
      readonly canEverStart: true;
      readonly update: PodUpdate<R>;
      readonly workType: PodWorkerState;
      readonly signal: AbortSignal;
    };

/** What the loop needs from the pod workers: their dependencies and record transitions. */
export interface WorkerLoopHost<S, R extends RunningPod> {
  readonly syncer: PodSyncer<S, R>;
  readonly statusProvider: PodStatusProvider<S>;
  readonly limiter: ConcurrencyLimiter;
  readonly clock: Clock;
  readonly log: Logger;
  readonly recorder: PodEventRecorder | undefined;
  startPodSync(uid: string): StartPodSyncResult<R>;
  /** The worker is done acting on the update it took: nothing to abort any more. */
  endSync(uid: string): void;
  acknowledgeTerminating(uid: string): PodStatusFunc | undefined;
  completeSync(uid: string): void;
  completeTerminating(uid: string): void;
  completeTerminatingRuntimePod(uid: string): void;
  completeTerminated(uid: string): void;
  completeWork(
    uid: string,
    phaseTransition: boolean,
    err: Error | undefined,
    operation: PodSyncOperation,
    aborted: boolean,
    requeueAfterMs?: number,
  ): void;
  observeDuration(operation: string, startTime: number | undefined): void;
}

interface SyncOutcome {
  readonly isTerminal: boolean;
  readonly requeueAfterMs: number | undefined;
  readonly failure: Error | undefined;
  readonly operation: PodSyncOperation;
}

/** Runs one pod's worker until the pod finishes or its wake signal is closed. */
export async function runPodWorkerLoop<S, R extends RunningPod>(
  host: WorkerLoopHost<S, R>,
  uid: string,
  wake: WakeSignal,
): Promise<void> {
  const lastSync = { atMs: 0 };
  while (await wake.wait()) {
    const start = host.startPodSync(uid);
    if (!start.ok) continue;
    if (!start.canEverStart) return;
    if (!start.canStart) continue;
    const { update, workType, signal } = start;
    const { isTerminal, requeueAfterMs, failure, operation } = await syncOnce(
      host,
      uid,
      update,
      workType,
      signal,
      lastSync,
    );
    host.endSync(uid);

    if (failure !== undefined && (signal.aborted || failure.name === 'AbortError')) {
      // A newer update (termination, shorter grace) is already pending, or the sync was
      // cancelled (an `AbortError`, the kubelet's `context.Canceled`): not an error.
      host.log.debug({ podUID: uid, operation }, 'Sync exited with context cancellation error');
      host.completeWork(uid, false, undefined, operation, true);
      host.observeDuration(update.updateType, update.startTime);
      continue;
    }
    let phaseTransition = false;
    if (failure !== undefined) {
      host.log.error(
        { podUID: uid, pod: podRef(update), updateType: update.updateType, operation, err: failure },
        'Error syncing pod, skipping',
      );
    } else if (workType === 'terminated') {
      host.completeTerminated(uid);
      host.observeDuration('terminated', update.startTime);
      return;
    } else if (workType === 'terminating') {
      if (update.runningPod !== undefined) {
        host.completeTerminatingRuntimePod(uid);
        host.observeDuration(update.updateType, update.startTime);
        return;
      }
      host.completeTerminating(uid);
      phaseTransition = true;
    } else if (isTerminal) {
      host.completeSync(uid);
      phaseTransition = true;
    }
    host.completeWork(uid, phaseTransition, failure, operation, false, requeueAfterMs);
    host.observeDuration(update.updateType, update.startTime);
  }
}

/** Waits for the status, then calls the callback of `workType`; never throws. */
async function syncOnce<S, R extends RunningPod>(
  host: WorkerLoopHost<S, R>,
  uid: string,
  update: PodUpdate<R>,
  workType: PodWorkerState,
  signal: AbortSignal,
  lastSync: { atMs: number },
): Promise<SyncOutcome> {
  const ctx = { signal };
  let operation: PodSyncOperation = 'getNewerThan';
  let isTerminal = false;
  let requeueAfterMs: number | undefined;
  try {
    let podStatus: S | undefined;
    // A runtime-only pod is always terminating and needs no status.
    if (update.runningPod === undefined) {
      try {
        podStatus = await host.statusProvider.getNewerThan(uid, lastSync.atMs, signal);
      } catch (err) {
        if (!signal.aborted && update.pod !== undefined) {
          host.recorder?.event(
            update.pod,
            'Warning',
            'FailedSync',
            `error determining status: ${errorMessage(err)}`,
          );
        }
        throw err;
      }
    }
    const { syncer, limiter } = host;
    // `update.pod` is set for every update that is not runtime-only (updatePod enforces it).
    const pod = update.pod as V1Pod;
    try {
      if (workType === 'terminated') {
        operation = 'syncTerminatedPod';
        await limiter.run(uid, signal, () => syncer.syncTerminatedPod(ctx, pod, podStatus as S));
      } else if (workType === 'terminating') {
        const gracePeriodSeconds = update.killOptions?.podTerminationGracePeriodSecondsOverride;
        const podStatusFn = host.acknowledgeTerminating(uid);
        const runningPod = update.runningPod;
        if (runningPod !== undefined) {
          operation = 'syncTerminatingRuntimePod';
          await limiter.run(uid, signal, () => syncer.syncTerminatingRuntimePod(ctx, runningPod));
        } else {
          operation = 'syncTerminatingPod';
          await limiter.run(uid, signal, () =>
            syncer.syncTerminatingPod(ctx, pod, podStatus as S, gracePeriodSeconds, podStatusFn),
          );
        }
      } else {
        operation = 'syncPod';
        const result = await limiter.run(uid, signal, () =>
          syncer.syncPod(ctx, update.updateType, pod, update.mirrorPod, podStatus as S),
        );
        isTerminal = result?.isTerminal === true;
        requeueAfterMs = result?.requeueAfterMs;
      }
    } finally {
      // As upstream: the next sync waits for a status newer than the end of this one.
      lastSync.atMs = host.clock.now();
    }
    return { isTerminal, requeueAfterMs, failure: undefined, operation };
  } catch (err) {
    return { isTerminal: false, requeueAfterMs: undefined, failure: toError(err), operation };
  }
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(`non-Error thrown: ${String(err)}`);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function podRef(update: PodUpdate<RunningPod>): string {
  const meta = update.pod?.metadata;
  if (meta) return `${meta.namespace ?? ''}/${meta.name ?? ''}`;
  return update.runningPod ? `${update.runningPod.namespace}/${update.runningPod.name}` : '';
}

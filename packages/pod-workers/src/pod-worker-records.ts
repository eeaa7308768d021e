/**
 * The worker records of all pods (the kubelet's `podSyncStatuses` and friends): the record
 * per UID, the wake-up signal of each worker loop, the static-pod gate, and the one-way
 * transitions between lifecycle states. Also answers the kubelet's queries about them.
 *
 * @module
 * @internal
 */
import type { Clock, Logger } from '@nodeagent/core';
import type { PodLifecycleState } from './events.js';
import type { PodSyncStatus, WakeSignal } from './pod-sync-status.js';
import { StaticPodGate } from './static-pod-gate.js';
import type { PodStatusFunc, PodSyncStatusSnapshot, RunningPod } from './types.js';

/** The records, their transitions and queries. */
export class PodWorkerRecords<R extends RunningPod> {
  readonly statuses = new Map<string, PodSyncStatus<R>>();
  readonly wakes = new Map<string, WakeSignal>();
  readonly staticPods: StaticPodGate;
  /** `syncKnownPods` has run: unknown UIDs count as gone. */
  podsSynced = false;

  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #onState: (uid: string, state: PodLifecycleState) => void;

  constructor(clock: Clock, log: Logger, onState: (uid: string, state: PodLifecycleState) => void) {
    this.#clock = clock;
    this.#log = log;
    this.#onState = onState;
    this.staticPods = new StaticPodGate({
      isTerminationRequestedOrTerminated: (uid) => {
        const status = this.statuses.get(uid);
        return status === undefined ? undefined : status.isTerminationRequested() || status.isTerminated();
      },
    });
  }

  /** The pod's worker reached `terminated` (false for unknown UIDs). */
  isPodKnownTerminated(uid: string): boolean {
    return this.statuses.get(uid)?.isTerminated() ?? false;
  }

  /** The pod may still have running containers (unknown UIDs: only until the first `syncKnownPods`). */
  couldHaveRunningContainers(uid: string): boolean {
    const status = this.statuses.get(uid);
    return status ? !status.isTerminated() : !this.podsSynced;
  }

  /** `syncTerminatedPod` completed (unknown UIDs: once `syncKnownPods` has run). */
  shouldPodBeFinished(uid: string): boolean {
    const status = this.statuses.get(uid);
    return status ? status.finished : this.podsSynced;
  }

  /** Termination was requested; the pod may still be starting (false for unknown UIDs). */
  isPodTerminationRequested(uid: string): boolean {
    return this.statuses.get(uid)?.isTerminationRequested() ?? false;
  }

  /**
   * The worker has observed the termination, so `syncPod` will not start containers again
   * (unknown UIDs: once `syncKnownPods` has run).
   */
  shouldPodContainersBeTerminating(uid: string): boolean {
    const status = this.statuses.get(uid);
    return status ? status.startedTerminating : this.podsSynced;
  }

  /** The pod's runtime parts (containers, sandbox) may be removed (unknown UIDs: once synced). */
  shouldPodRuntimeBeRemoved(uid: string): boolean {
    const status = this.statuses.get(uid);
    return status ? status.isTerminated() : this.podsSynced;
  }

  /** The pod's content (volumes, logs) may be removed: evicted, or deleted and terminated. */
  shouldPodContentBeRemoved(uid: string): boolean {
    const status = this.statuses.get(uid);
    return status ? status.evicted || (status.deleted && status.isTerminated()) : this.podsSynced;
  }

  /** The static pod that holds `podFullName` (`<name>_<namespace>`) is terminating (mirror pod handling). */
  isPodForMirrorPodTerminatingByFullName(podFullName: string): boolean {
    const uid = this.staticPods.startedUid(podFullName);
    const status = uid === undefined ? undefined : this.statuses.get(uid);
    return status?.isTerminationRequested() === true && !status.isTerminated();
  }

  /** A read-only view of the pod's worker record, or `undefined` when the UID is unknown. */
  getPodSyncStatus(uid: string): PodSyncStatusSnapshot | undefined {
    return this.statuses.get(uid)?.snapshot();
  }

  /** The UIDs with a worker record. */
  knownPodUids(): string[] {
    return [...this.statuses.keys()];
  }

  /** marks that the worker saw the termination; returns the last status func. */
  acknowledgeTerminating(uid: string): PodStatusFunc | undefined {
    const status = this.statuses.get(uid);
    if (status === undefined) return undefined;
    if (status.terminatingAt !== undefined) status.startedTerminating = true;
    return status.statusPostTerminating.at(-1);
  }

  /** `syncPod` said terminal: move to terminating and replay the update at once. */
  completeSync(uid: string): void {
    const status = this.statuses.get(uid);
    if (status === undefined) return;
    if (status.terminatingAt === undefined) {
      status.terminatingAt = this.#clock.now();
      this.#onState(uid, 'terminating');
    }
    status.startedTerminating = true;
    this.requeueLastPodUpdate(uid, status);
  }

  /** `syncTerminatingPod` succeeded: terminated, tell the waiting kills, replay at once. */
  completeTerminating(uid: string): void {
    const status = this.statuses.get(uid);
    if (status === undefined) return;
    status.terminatedAt = this.#clock.now();
    const notify = status.notifyPostTerminating;
    status.notifyPostTerminating = [];
    status.statusPostTerminating = [];
    this.#onState(uid, 'terminated');
    for (const fn of notify) this.notifyCompleted(fn, uid);
    this.requeueLastPodUpdate(uid, status);
  }

  /** a runtime-only pod is gone: finished, worker exits. */
  completeTerminatingRuntimePod(uid: string): void {
    const status = this.statuses.get(uid);
    if (status === undefined) return;
    status.terminatedAt = this.#clock.now();
    status.finished = true;
    status.working = false;
    this.#onState(uid, 'terminated');
    this.#onState(uid, 'finished');
    this.releaseStaticPod(uid, status);
    this.cleanupPodUpdates(uid);
  }

  /** `syncTerminatedPod` succeeded: finished, worker exits. */
  completeTerminated(uid: string): void {
    this.cleanupPodUpdates(uid);
    const status = this.statuses.get(uid);
    if (status === undefined) return;
    status.finished = true;
    status.working = false;
    this.#onState(uid, 'finished');
    this.releaseStaticPod(uid, status);
  }

  /** A pod terminated before it could start: finished without any callback. */
  cleanupUnstartedPod(uid: string, status: PodSyncStatus<R>): void {
    this.cleanupPodUpdates(uid);
    status.finished = true;
    status.working = false;
    status.terminatedAt = this.#clock.now();
    // Upstream leaves these waiting until their timeout; the pod never ran, so it is done.
    const notify = status.notifyPostTerminating;
    status.notifyPostTerminating = [];
    for (const fn of notify) this.notifyCompleted(fn, uid);
    this.#onState(uid, 'terminated');
    this.#onState(uid, 'finished');
    this.releaseStaticPod(uid, status);
  }

  cleanupPodUpdates(uid: string): void {
    this.wakes.get(uid)?.close();
    this.wakes.delete(uid);
  }

  /** Re-queues the active update unless an update is already pending (a phase transition). */
  requeueLastPodUpdate(uid: string, status: PodSyncStatus<R>): void {
    if (status.pendingUpdate !== undefined || status.activeUpdate === undefined) return;
    status.pendingUpdate = { ...status.activeUpdate };
    status.working = true;
    this.wakes.get(uid)?.notify();
  }

  /**
   * Frees the static pod's full name and wakes the next UID waiting for it at once (upstream
   * waits for that UID's 10–15 s retry instead).
   */
  releaseStaticPod(uid: string, status: PodSyncStatus<R>): void {
    const next = this.staticPods.release(status.fullname, uid);
    if (next === undefined) return;
    const nextStatus = this.statuses.get(next);
    if (nextStatus?.pendingUpdate === undefined) return;
    nextStatus.working = true;
    this.wakes.get(next)?.notify();
  }

  /** The kubelet's `removeTerminatedWorker`: true when the record was forgotten. */
  removeTerminatedWorker(uid: string, status: PodSyncStatus<R>, orphaned: boolean): boolean {
    if (!status.finished) {
      if (!orphaned) return false;
      status.deleted = true;
      if (status.isStarted() || status.observedRuntime) {
        if (!status.isTerminationRequested()) this.terminateOrphan(uid, status);
        else this.requeueLastPodUpdate(uid, status);
        return false;
      }
      this.#log.debug({ podUID: uid }, 'Pod is orphaned and has not been started, dropping it');
      for (const fn of status.notifyPostTerminating) this.notifyCompleted(fn, uid);
    }
    this.statuses.delete(uid);
    this.cleanupPodUpdates(uid);
    this.staticPods.release(status.fullname, uid);
    return true;
  }

  /** A running pod vanished from the desired set: terminate it with its grace so far, else 1 s. */
  terminateOrphan(uid: string, status: PodSyncStatus<R>): void {
    status.terminatingAt = this.#clock.now();
    if (status.gracePeriodSeconds === 0) status.gracePeriodSeconds = 1;
    const kill = { podTerminationGracePeriodSecondsOverride: status.gracePeriodSeconds };
    if (status.pendingUpdate) status.pendingUpdate.killOptions = kill;
    else if (status.activeUpdate) {
      status.activeUpdate.killOptions = kill;
      this.requeueLastPodUpdate(uid, status);
    }
    this.#log.info(
      { podUID: uid, gracePeriodSeconds: status.gracePeriodSeconds },
      'Pod is orphaned, terminating it',
    );
    this.#onState(uid, 'terminating');
    status.cancelSync('pod orphaned');
  }

  notifyCompleted(fn: (() => void) | undefined, uid: string): void {
    if (fn === undefined) return;
    try {
      fn();
    } catch (err) {
      this.#log.error({ podUID: uid, err }, 'Kill completion callback threw');
    }
  }
}

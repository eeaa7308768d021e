/**
 * The kubelet's pod workers (`pkg/kubelet/pod_workers.go`) in TypeScript terms: one
 * serialized async worker per pod UID, latest-wins coalescing of updates, the one-way
 * lifecycle sync → terminating → terminated → finished, grace periods that only shrink,
 * abort of a running sync when termination starts, static-pod exclusivity by full name,
 * `syncKnownPods` reconciliation and the queries other components ask.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { type Clock, InvalidOptionsError, type Logger, noopLogger, realClock } from '@nodeagent/core';
import { EventEmitter } from 'eventemitter3';
import { ConcurrencyLimiter } from './concurrency-limiter.js';
import type { PodSyncOperation, PodWorkersEvents } from './events.js';
import { calculateEffectiveGracePeriod, remainingGracePeriodSeconds } from './grace-period.js';
import { type KillPodAndWaitOptions, killPodAndWait } from './kill-pod-and-wait.js';
import { createPodWorkerMetrics, noopPodWorkerMetrics, type PodWorkerMetrics } from './metrics.js';
import { buildPodFullName, isPodPhaseTerminal, isStaticPod, runningPodToApiPod } from './pod-identity.js';
import { PodSyncStatus, WakeSignal } from './pod-sync-status.js';
import { acceptUpdate } from './pod-update.js';
import { PodWorkerRecords } from './pod-worker-records.js';
import type { PodWorkersOptions } from './pod-workers-options.js';
import {
  DEFAULT_BACK_OFF_PERIOD_MS,
  DEFAULT_RESYNC_INTERVAL_MS,
  jitter,
  RequeuePolicy,
  WORKER_BACK_OFF_PERIOD_JITTER_FACTOR,
} from './requeue.js';
import type {
  PodEventRecorder,
  PodStatusProvider,
  PodSyncer,
  PodSyncStatusSnapshot,
  PodWorkerSync,
  PodWorkQueue,
  RunningPod,
  UpdatePodOptions,
} from './types.js';
import { runPodWorkerLoop, type StartPodSyncResult, type WorkerLoopHost } from './worker-loop.js';

/**
 * The per-pod worker pool. Call {@link updatePod} for every change; the workers call the
 * {@link PodSyncer} callbacks, one at a time per pod, with only the newest update.
 *
 * @typeParam S the pod status type of the {@link PodStatusProvider}.
 * @typeParam R the runtime-only pod type.
 *
 * @example
 * ```ts
 * const workQueue = new WorkQueue<string>();
 * const workers = new PodWorkers({ syncer, statusProvider: podCache, workQueue });
 * workers.updatePod({ updateType: 'create', pod });
 * ```
 */
export class PodWorkers<S, R extends RunningPod = RunningPod> extends EventEmitter<PodWorkersEvents> {
  readonly #syncer: PodSyncer<S, R>;
  readonly #statusProvider: PodStatusProvider<S>;
  readonly #clock: Clock;
  readonly #remainingGraceOnAdoption: boolean;
  readonly #log: Logger;
  readonly #recorder: PodEventRecorder | undefined;
  readonly #metrics: PodWorkerMetrics;
  readonly #limiter: ConcurrencyLimiter;
  readonly #workQueue: PodWorkQueue;
  readonly #requeue: RequeuePolicy;
  readonly #random: () => number;
  readonly #backOffPeriodMs: number;
  readonly #records: PodWorkerRecords<R>;
  readonly #loopHost: WorkerLoopHost<S, R>;

  /** @param options see {@link PodWorkersOptions}. */
  constructor(options: PodWorkersOptions<S, R>) {
    super();
    this.#syncer = options.syncer;
    this.#statusProvider = options.statusProvider;
    this.#workQueue = options.workQueue;
    this.#clock = options.clock ?? realClock;
    this.#remainingGraceOnAdoption = options.remainingGraceOnAdoption ?? false;
    this.#log = (options.logger ?? noopLogger).child({ component: 'pod-workers' });
    this.#recorder = options.recorder;
    this.#random = options.random ?? Math.random;
    this.#backOffPeriodMs = options.backOffPeriodMs ?? DEFAULT_BACK_OFF_PERIOD_MS;
    const resyncIntervalMs = options.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS;
    const concurrency = options.concurrency ?? Number.POSITIVE_INFINITY;
    const maxSlotHoldMs = options.maxSlotHoldMs ?? 10_000;
    if (!(concurrency >= 1)) {
      throw new InvalidOptionsError('PodWorkers', `PodWorkers: concurrency must be >= 1, got ${concurrency}`);
    }
    for (const [name, value] of [
      ['resyncIntervalMs', resyncIntervalMs],
      ['backOffPeriodMs', this.#backOffPeriodMs],
      ['maxSlotHoldMs', maxSlotHoldMs],
    ] as const) {
      if (!(value >= 0))
        throw new InvalidOptionsError('PodWorkers', `PodWorkers: ${name} must be >= 0, got ${value}`);
    }
    this.#requeue = new RequeuePolicy({
      resyncIntervalMs,
      backOffPeriodMs: this.#backOffPeriodMs,
      errorBackoff: options.errorBackoff,
      clock: this.#clock,
      random: this.#random,
    });
    this.#metrics = options.metrics ? createPodWorkerMetrics(options.metrics) : noopPodWorkerMetrics;
    this.#limiter = new ConcurrencyLimiter(concurrency, this.#clock, maxSlotHoldMs, (uid) => {
      this.#log.warn(
        { podUID: uid, maxSlotHoldMs },
        'Pod sync is slow, no longer counted against concurrency',
      );
      this.#emitSafe('slowSync', { uid });
    });
    this.#records = new PodWorkerRecords<R>(this.#clock, this.#log, (uid, state) =>
      this.#emitSafe('stateChange', { uid, state }),
    );
    this.#loopHost = {
      syncer: this.#syncer,
      statusProvider: this.#statusProvider,
      limiter: this.#limiter,
      clock: this.#clock,
      log: this.#log,
      recorder: this.#recorder,
      startPodSync: (uid) => this.#startPodSync(uid),
      endSync: (uid) => {
        const status = this.#records.statuses.get(uid);
        if (status !== undefined) status.syncInFlight = false;
      },
      acknowledgeTerminating: (uid) => this.#records.acknowledgeTerminating(uid),
      completeSync: (uid) => this.#records.completeSync(uid),
      completeTerminating: (uid) => this.#records.completeTerminating(uid),
      completeTerminatingRuntimePod: (uid) => this.#records.completeTerminatingRuntimePod(uid),
      completeTerminated: (uid) => this.#records.completeTerminated(uid),
      completeWork: (uid, phaseTransition, err, operation, aborted, requeueAfterMs) =>
        this.#completeWork(uid, phaseTransition, err, operation, aborted, requeueAfterMs),
      observeDuration: (operation, startTime) => this.#observeDuration(operation, startTime),
    };
  }

  /**
   * Hands an update to the pod's worker, creating the worker on first sight. Only the newest
   * pending update is kept; termination (deletion timestamp, terminal phase, `kill`, runtime
   * pod) is one-way, and starting it or shrinking the grace period aborts the running sync.
   *
   * @throws `InvalidPodUpdateError` when the update names no pod or the pod has no UID.
   */
  updatePod(options: UpdatePodOptions<R>): void {
    const accepted = acceptUpdate(options, this.#log);
    if (accepted === undefined) return;
    const { uid, name, namespace, isRuntimePod, update } = accepted;
    const runningPod = update.runningPod;

    const now = this.#clock.now();
    let status = this.#records.statuses.get(uid);
    const firstTime = status === undefined;
    if (status === undefined) {
      status = new PodSyncStatus<R>(buildPodFullName(name, namespace), now);
      // After an agent restart a pod already terminal in config and in the runtime is recorded
      // as terminated (not finished), so admission does not count it and it still gets
      // syncTerminatedPod (kubernetes issue 105523).
      if (
        update.pod &&
        isPodPhaseTerminal(update.pod) &&
        this.#statusProvider.isRuntimeTerminal?.(uid) === true
      ) {
        status.terminatingAt = now;
        status.terminatedAt = now;
        status.startedTerminating = true;
      }
      this.#records.statuses.set(uid, status);
    }

    // This process has not seen the pod from config before (adoption after a restart).
    const configPodUnseen = status.pendingUpdate?.pod === undefined && status.activeUpdate?.pod === undefined;
    // A runtime pod carries no spec: once a real pod is known, use it instead.
    let pod: V1Pod;
    if (isRuntimePod) {
      status.observedRuntime = true;
      const known = status.pendingUpdate?.pod ?? status.activeUpdate?.pod;
      if (known !== undefined) {
        update.pod = known;
        update.runningPod = undefined;
        pod = known;
      } else {
        pod = runningPodToApiPod(runningPod as R);
      }
    } else {
      pod = update.pod as V1Pod;
    }

    // A create for a UID already terminating means the UID was reused (static pods with a
    // fixed UID): forget it at the next syncKnownPods, after which the caller creates again.
    if (!firstTime && status.isTerminationRequested() && update.updateType === 'create') {
      status.restartRequested = true;
      this.#log.debug({ podUID: uid }, 'Pod is terminating but has been requested to restart with same UID');
      return;
    }
    if (status.finished) {
      this.#log.debug({ podUID: uid }, 'Pod is finished processing, no further updates');
      return;
    }

    let becameTerminating = false;
    if (!status.isTerminationRequested()) {
      if (isRuntimePod) {
        status.deleted = true;
        becameTerminating = true;
      } else if (pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) {
        status.deleted = true;
        becameTerminating = true;
      } else if (isPodPhaseTerminal(pod)) {
        becameTerminating = true;
      } else if (update.updateType === 'kill') {
        if (update.killOptions?.evict === true) status.evicted = true;
        becameTerminating = true;
      }
      if (becameTerminating) status.terminatingAt = now;
    }

    let gracePeriodShortened = false;
    if (status.isTerminated()) {
      // A stale runtime-pod kill from housekeeping: ignore it until the worker finishes.
      if (isRuntimePod) return;
      this.#records.notifyCompleted(update.killOptions?.onCompleted, uid);
      update.killOptions = undefined;
    } else if (status.isTerminationRequested()) {
      const kill = update.killOptions ?? {};
      if (kill.onCompleted) status.notifyPostTerminating.push(kill.onCompleted);
      if (kill.podStatusFunc) status.statusPostTerminating.push(kill.podStatusFunc);
      let override = kill.podTerminationGracePeriodSecondsOverride;
      // Adopted mid-deletion: only the grace left until deletionTimestamp (opt-in, not upstream).
      if (this.#remainingGraceOnAdoption && !isRuntimePod && configPodUnseen) {
        const left = remainingGracePeriodSeconds(pod, now);
        if (left !== undefined && (override === undefined || left < override)) override = left;
      }
      const grace = calculateEffectiveGracePeriod(status.gracePeriodSeconds, pod, override);
      gracePeriodShortened = grace.shortened;
      status.gracePeriodSeconds = grace.gracePeriodSeconds;
      // The worker always gets the computed value, never zero.
      update.killOptions = {
        ...(kill.evict === true ? { evict: true } : {}),
        podTerminationGracePeriodSecondsOverride: grace.gracePeriodSeconds,
      };
    } else if (update.killOptions !== undefined) {
      // Kill options mean nothing to a pod that is not terminating.
      this.#records.notifyCompleted(update.killOptions.onCompleted, uid);
      update.killOptions = undefined;
    }

    let wake = this.#records.wakes.get(uid);
    if (wake === undefined) {
      wake = new WakeSignal();
      this.#records.wakes.set(uid, wake);
      if (isStaticPod(pod)) this.#records.staticPods.enqueue(status.fullname, uid);
      const ownWake = wake;
      runPodWorkerLoop(this.#loopHost, uid, ownWake).catch((err: unknown) => {
        this.#log.error({ podUID: uid, err }, 'Pod worker stopped unexpectedly');
      });
    }

    // Keep the oldest start time, so the latency metric reports the worst case.
    const pendingStart = status.pendingUpdate?.startTime;
    if (pendingStart !== undefined && (update.startTime === undefined || pendingStart < update.startTime)) {
      update.startTime = pendingStart;
    }
    status.pendingUpdate = update;
    status.working = true;
    wake.notify();

    if (becameTerminating) this.#emitSafe('stateChange', { uid, state: 'terminating' });
    if (becameTerminating || gracePeriodShortened) {
      const reason = becameTerminating ? 'pod termination requested' : 'grace period shortened';
      if (status.cancelSync(reason)) this.#log.debug({ podUID: uid, reason }, 'Cancelling current pod sync');
    }
  }

  /**
   * Kills a pod and resolves once `syncTerminatingPod` has finished for it (the kubelet's
   * `killPodNow` / `TerminatePodAbnormallyAndWait`). Gives up after max(1.5 × grace, 10 s),
   * rejecting with a `KillPodTimeoutError` and recording an `ExceededGracePeriod` event; the
   * termination goes on.
   */
  killPodAndWait(pod: V1Pod, options: KillPodAndWaitOptions = {}): Promise<void> {
    return killPodAndWait(
      {
        clock: this.#clock,
        recorder: this.#recorder,
        updatePod: (update) => this.updatePod(update),
        onTimeout: (uid, timeoutSeconds) => this.#emitSafe('exceededGracePeriod', { uid, timeoutSeconds }),
      },
      pod,
      options,
    );
  }

  /**
   * Housekeeping: reconciles the workers with the desired pods and reports every remaining
   * worker. Finished workers of pods no longer desired (or whose UID was reused) are
   * forgotten; an orphan that never started is dropped; a running orphan starts terminating
   * (with its grace period so far, else 1 s); a terminating orphan is nudged on. After the
   * first call, unknown UIDs count as gone in the queries.
   */
  syncKnownPods(desiredPods: readonly V1Pod[]): Map<string, PodWorkerSync> {
    const known = new Set<string>();
    for (const pod of desiredPods) if (pod.metadata?.uid) known.add(pod.metadata.uid);
    this.#records.podsSynced = true;
    const workers = new Map<string, PodWorkerSync>();
    for (const [uid, status] of this.#records.statuses) {
      const orphan = !known.has(uid);
      if ((status.restartRequested || orphan) && this.#records.removeTerminatedWorker(uid, status, orphan)) {
        this.#requeue.forget(uid);
        continue;
      }
      const pod = status.activeUpdate ? status.activeUpdate.pod : status.pendingUpdate?.pod;
      workers.set(uid, {
        state: status.workType(),
        orphan,
        hasConfig: pod !== undefined,
        static: pod !== undefined && isStaticPod(pod),
      });
    }
    this.#metrics.setWorkingPods(workers);
    return workers;
  }

  /** The pod's worker reached `terminated` (false for unknown UIDs). */
  isPodKnownTerminated(uid: string): boolean {
    return this.#records.isPodKnownTerminated(uid);
  }

  /** The pod may still have running containers (unknown UIDs: only until the first `syncKnownPods`). */
  couldHaveRunningContainers(uid: string): boolean {
    return this.#records.couldHaveRunningContainers(uid);
  }

  /** `syncTerminatedPod` completed (unknown UIDs: once `syncKnownPods` has run). */
  shouldPodBeFinished(uid: string): boolean {
    return this.#records.shouldPodBeFinished(uid);
  }

  /** Termination was requested; the pod may still be starting (false for unknown UIDs). */
  isPodTerminationRequested(uid: string): boolean {
    return this.#records.isPodTerminationRequested(uid);
  }

  /**
   * The worker has observed the termination, so `syncPod` will not start containers again
   * (unknown UIDs: once `syncKnownPods` has run).
   */
  shouldPodContainersBeTerminating(uid: string): boolean {
    return this.#records.shouldPodContainersBeTerminating(uid);
  }

  /** The pod's runtime parts (containers, sandbox) may be removed (unknown UIDs: once synced). */
  shouldPodRuntimeBeRemoved(uid: string): boolean {
    return this.#records.shouldPodRuntimeBeRemoved(uid);
  }

  /** The pod's content (volumes, logs) may be removed: evicted, or deleted and terminated. */
  shouldPodContentBeRemoved(uid: string): boolean {
    return this.#records.shouldPodContentBeRemoved(uid);
  }

  /** The static pod that holds `podFullName` (`<name>_<namespace>`) is terminating (mirror pod handling). */
  isPodForMirrorPodTerminatingByFullName(podFullName: string): boolean {
    return this.#records.isPodForMirrorPodTerminatingByFullName(podFullName);
  }

  /** A read-only view of the pod's worker record, or `undefined` when the UID is unknown. */
  getPodSyncStatus(uid: string): PodSyncStatusSnapshot | undefined {
    return this.#records.getPodSyncStatus(uid);
  }

  /** The UIDs with a worker record. */
  knownPodUids(): string[] {
    return this.#records.knownPodUids();
  }

  /** the kubelet's `startPodSync`: consume the pending update, decide whether it may run. */
  #startPodSync(uid: string): StartPodSyncResult<R> {
    const status = this.#records.statuses.get(uid);
    if (status === undefined) return { ok: false };
    const update = status.pendingUpdate;
    if (update === undefined) {
      status.working = false;
      return { ok: false };
    }
    const workType = status.workType();
    status.pendingUpdate = undefined;
    this.#records.wakes.get(uid)?.drain();
    if (status.abort === undefined || status.abort.signal.aborted) status.abort = new AbortController();
    const signal = status.abort.signal;

    if (status.isStarted() || (update.runningPod !== undefined && workType === 'terminating')) {
      status.mergeLastUpdate(update);
      status.syncInFlight = true;
      return { ok: true, canStart: true, canEverStart: true, update, workType, signal };
    }
    if (update.pod === undefined) {
      status.mergeLastUpdate(update);
      this.#log.debug({ podUID: uid }, 'Running pod cannot start ever, programmer error');
      return { ok: true, canStart: false, canEverStart: false };
    }
    const allowed = this.#allowPodStart(uid, update.pod, status);
    if (!allowed.canEverStart) {
      this.#records.cleanupUnstartedPod(uid, status);
      this.#observeDuration('terminated', update.startTime);
      return { ok: true, canStart: false, canEverStart: false };
    }
    if (!allowed.canStart) {
      status.pendingUpdate = update;
      status.working = false;
      return { ok: true, canStart: false, canEverStart: true };
    }
    status.startedAt = this.#clock.now();
    if (update.startTime !== undefined)
      this.#metrics.observeWorkerStart((status.startedAt - update.startTime) / 1000);
    status.mergeLastUpdate(update);
    status.syncInFlight = true;
    return { ok: true, canStart: true, canEverStart: true, update, workType, signal };
  }

  /** schedules the next sync, then wakes the worker again if an update is pending. */
  #completeWork(
    uid: string,
    phaseTransition: boolean,
    err: Error | undefined,
    operation: PodSyncOperation,
    aborted: boolean,
    requeueAfterMs: number | undefined,
  ): void {
    // An aborted sync is requeued like a failed one (as upstream's context.Canceled), but its
    // pending update runs at once anyway and it does not count toward the error back-off.
    const { delayMs } = aborted
      ? { delayMs: jitter(this.#backOffPeriodMs, WORKER_BACK_OFF_PERIOD_JITTER_FACTOR, this.#random) }
      : this.#requeue.delayFor(uid, phaseTransition, err, requeueAfterMs);
    this.#workQueue.addAfter(uid, delayMs);
    if (err !== undefined) this.#emitSafe('syncError', { uid, operation, error: err, retryInMs: delayMs });
    const status = this.#records.statuses.get(uid);
    if (status === undefined) return;
    if (status.pendingUpdate !== undefined) this.#records.wakes.get(uid)?.notify();
    else status.working = false;
  }

  /** `PodWorkerDuration`: `seconds` since the update's start time, if it has one. */
  #observeDuration(operation: string, startTime: number | undefined): void {
    if (startTime !== undefined)
      this.#metrics.observeWorkerDuration(operation, (this.#clock.now() - startTime) / 1000);
  }

  /** emits, logging (never throwing) when a listener throws. */
  #emitSafe<E extends keyof PodWorkersEvents>(event: E, ...args: Parameters<PodWorkersEvents[E]>): void {
    try {
      (this.emit as (e: E, ...a: Parameters<PodWorkersEvents[E]>) => boolean)(event, ...args);
    } catch (err) {
      this.#log.error({ err, event }, 'Pod workers event listener threw');
    }
  }

  #allowPodStart(
    uid: string,
    pod: V1Pod,
    status: PodSyncStatus<R>,
  ): { canStart: boolean; canEverStart: boolean } {
    if (!isStaticPod(pod)) return { canStart: true, canEverStart: true };
    if (status.isTerminationRequested()) return { canStart: false, canEverStart: false };
    if (!this.#records.staticPods.tryStart(status.fullname, uid)) {
      this.#workQueue.addAfter(
        uid,
        jitter(this.#backOffPeriodMs, WORKER_BACK_OFF_PERIOD_JITTER_FACTOR, this.#random),
      );
      return { canStart: false, canEverStart: true };
    }
    return { canStart: true, canEverStart: true };
  }
}

/**
 * The pod status manager (upstream `pkg/kubelet/status`): a versioned cache of the statuses the
 * agent computed, written to the API by one sync loop — at once after a change, and in a full
 * batch every 10 s that also repairs statuses the API lost. A write is a strategic merge patch
 * with the pod's UID as precondition, sent only when something differs from what the API has.
 *
 * @module
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import {
  type Clock,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { errorMessage, type StatusApi } from './api.js';
import { type StatusMetrics, statusMetrics } from './metrics.js';
import { isPodPhaseTerminal, isPodStatusByKubeletEqual } from './pod-conditions.js';
import {
  type MirrorPodTranslator,
  noMirrorPods,
  type PodStatusManagerOptions,
} from './pod-status-manager-options.js';
import { normalizePodStatus } from './pod-status-normalize.js';
import {
  applyTransitionTimes,
  canBeDeleted,
  illegalContainerTransition,
  terminatedStatus,
} from './pod-status-rules.js';
import { syncPodStatus } from './pod-status-sync.js';
import { rfc3339Seconds } from './time.js';

interface VersionedPodStatus {
  readonly status: V1PodStatus;
  readonly version: number;
  readonly podName: string;
  readonly podNamespace: string;
  readonly podIsFinished: boolean;
  /** When the first unsent version was set, ms. */
  readonly atMs: number;
}

/** What a {@link PodStatusManager.syncBatch} did. */
export interface SyncBatchResult {
  /** Pods whose status was looked at (GET). */
  readonly attempted: number;
  /** Status patches that succeeded. */
  readonly patched: number;
}

function podRef(namespace: string | undefined, name: string | undefined): string {
  return `${namespace ?? ''}/${name ?? ''}`;
}

/**
 * Keeps the API's pod statuses equal to what the agent computed.
 *
 * @example
 * ```ts
 * const statuses = new PodStatusManager({ api });
 * await statuses.start();
 * statuses.setPodStatus(pod, { phase: 'Running', conditions: [...] }); // written within ms
 * ```
 */
export class PodStatusManager implements Lifecycle {
  readonly #once = new StartOnce('PodStatusManager');
  readonly #statuses = new Map<string, VersionedPodStatus>();
  /** API status versions by the UID of the pod in the API (the mirror pod for static pods). */
  readonly #apiVersions = new Map<string, number>();
  readonly #api: StatusApi;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #metrics: StatusMetrics;
  readonly #mirror: MirrorPodTranslator;
  readonly #options: PodStatusManagerOptions;
  #timer: Timer | undefined;
  #running: Promise<void> | undefined;
  #pending: 'none' | 'changed' | 'all' = 'none';
  #stopped = false;
  /** Status patches sent successfully. */
  patches = 0;
  /** Final pod deletes sent successfully. */
  deletes = 0;

  /** @param options see {@link PodStatusManagerOptions}. */
  constructor(options: PodStatusManagerOptions) {
    const period = options.syncPeriodMs ?? 10_000;
    if (!(period >= 1)) throw new RangeError(`PodStatusManager: syncPeriodMs must be >= 1, got ${period}`);
    this.#options = options;
    this.#api = options.api;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'status-manager' });
    this.#metrics = statusMetrics(options.metrics);
    this.#mirror = options.mirrorPods ?? noMirrorPods;
  }

  /** Reconciles every cached status with the API once, then syncs on changes and every sync period. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        this.#timer = this.#clock.setInterval(() => this.#kick('all'), this.#options.syncPeriodMs ?? 10_000);
        this.#kick('all');
        await this.#running;
      },
      () => this.stop(),
    );
  }

  /** Stops the loop and waits for a batch in flight. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#running;
  }

  /** The status last set for `uid` (a mirror pod's UID is translated to its static pod's). */
  getPodStatus(uid: string): V1PodStatus | undefined {
    return this.#statuses.get(this.#mirror.staticPodUid(uid) ?? uid)?.status;
  }

  /** Number of pods with a cached status. */
  get size(): number {
    return this.#statuses.size;
  }

  /**
   * Caches `status` for `pod` (transition times, start time and timestamps normalized) and
   * queues a write if it differs from the cached one. A pod being deleted always queues one.
   */
  setPodStatus(pod: V1Pod, status: V1PodStatus): void {
    const deleting = pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
    this.#update(pod, status, deleting, false);
  }

  /**
   * Marks `pod` finished (upstream `TerminatePod`): containers that have no terminated state get
   * `ContainerStatusUnknown` (exit 137), a non-terminal phase becomes `Failed` (static pods
   * excepted), and once the API shows the terminal phase a pod being deleted is deleted for good.
   */
  terminatePod(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    const last = this.#statuses.get(uid)?.status ?? pod.status ?? {};
    const status = terminatedStatus(pod, last, this.#mirror.mirrorPodUid(uid) !== undefined);
    this.#update(pod, status, true, true);
  }

  /** Drops cached statuses of pods not in `uids` (upstream `RemoveOrphanedStatuses`). */
  removeOrphanedStatuses(uids: ReadonlySet<string>): void {
    for (const uid of this.#statuses.keys()) if (!uids.has(uid)) this.#statuses.delete(uid);
  }

  /** Forgets `uid`'s cached status. */
  deletePodStatus(uid: string): void {
    this.#statuses.delete(uid);
  }

  /**
   * One sync pass (upstream `syncBatch`): with `all` false, the pods whose cached version the
   * API has not seen; with `all` true, also those whose API status drifted from the cache and
   * those that can now be deleted. Never throws; failed pods are retried by the next pass.
   */
  async syncBatch(all: boolean): Promise<SyncBatchResult> {
    const work: [string, VersionedPodStatus][] = [];
    if (all) {
      for (const uid of this.#apiVersions.keys()) {
        if (!this.#statuses.has(uid) && this.#mirror.staticPodUid(uid) === undefined)
          this.#apiVersions.delete(uid);
      }
    }
    for (const [uid, vs] of this.#statuses) {
      const mirrorUid = this.#mirror.mirrorPodUid(uid);
      if (mirrorUid === null) {
        this.#log.debug(
          { podUID: uid, pod: podRef(vs.podNamespace, vs.podName) },
          'Static pod does not have a corresponding mirror pod; skipping',
        );
        continue;
      }
      const statusUid = mirrorUid ?? uid;
      const seen = this.#apiVersions.get(statusUid);
      if (!all) {
        if (seen === undefined || seen < vs.version) work.push([uid, vs]);
        continue;
      }
      if (seen === undefined || seen < vs.version || this.#canBeDeletedCached(statusUid, vs))
        work.push([uid, vs]);
      else if (this.#needsReconcile(uid, vs.status)) {
        this.#apiVersions.delete(statusUid);
        work.push([uid, vs]);
      }
    }
    let patched = 0;
    for (const [uid, vs] of work) {
      if (await this.#syncPod(uid, vs)) patched++;
    }
    return { attempted: work.length, patched };
  }

  #update(pod: V1Pod, input: V1PodStatus, force: boolean, finished: boolean): void {
    const uid = pod.metadata?.uid ?? '';
    const cached = this.#statuses.get(uid);
    let podIsFinished = finished;
    if (cached?.podIsFinished === true && !finished && this.#mirror.mirrorPodUid(uid) === undefined) {
      this.#log.info(
        { pod: podRef(pod.metadata?.namespace, pod.metadata?.name) },
        'Got unexpected podIsFinished=false, while podIsFinished=true in status cache, programmer error.',
      );
      podIsFinished = true;
    }
    const oldStatus = cached?.status ?? this.#mirrorStatus(uid) ?? pod.status ?? {};
    const status = structuredClone(input);
    const restartPolicy = pod.spec?.restartPolicy;
    const illegal =
      illegalContainerTransition(oldStatus.containerStatuses, status.containerStatuses, restartPolicy) ??
      illegalContainerTransition(
        oldStatus.initContainerStatuses,
        status.initContainerStatuses,
        restartPolicy,
      );
    if (illegal !== undefined) {
      this.#log.error(
        { pod: podRef(pod.metadata?.namespace, pod.metadata?.name), err: illegal },
        'Status update on pod aborted',
      );
      return;
    }
    if (isPodPhaseTerminal(oldStatus.phase) && !isPodPhaseTerminal(status.phase)) {
      this.#log.info(
        {
          pod: podRef(pod.metadata?.namespace, pod.metadata?.name),
          phase: status.phase,
          oldPhase: oldStatus.phase,
        },
        'Pod phase is terminal; keeping it',
      );
      status.phase = oldStatus.phase as string;
    }
    applyTransitionTimes(status, oldStatus, rfc3339Seconds(this.#clock.now()));
    const normalized = normalizePodStatus(pod, status);
    if (cached !== undefined && !force && isPodStatusByKubeletEqual(cached.status, normalized)) return;
    this.#statuses.set(uid, {
      status: normalized,
      version: (cached?.version ?? 0) + 1,
      podName: pod.metadata?.name ?? '',
      podNamespace: pod.metadata?.namespace ?? '',
      podIsFinished,
      atMs:
        cached !== undefined && this.#apiVersions.get(uid) !== cached.version
          ? cached.atMs
          : this.#clock.now(),
    });
    this.#kick('changed');
  }

  #mirrorStatus(uid: string): V1PodStatus | undefined {
    const mirrorUid = this.#mirror.mirrorPodUid(uid);
    if (mirrorUid === undefined || mirrorUid === null) return undefined;
    return this.#options.podLookup?.(mirrorUid)?.status;
  }

  /** Runs a batch now, or right after the one in flight (changes coalesce into one pass). */
  #kick(kind: 'changed' | 'all'): void {
    if (this.#stopped || !this.#once.started) return;
    if (this.#pending !== 'all') this.#pending = kind;
    // The pass starts in the event loop's check phase, after the caller's turn: a status is set
    // at the start of a pod's sync, whose runtime calls would otherwise wait for the pass's CPU
    // (the GET's request), as they do not in upstream, whose manager syncs from a goroutine.
    this.#running ??= (async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.#pending !== 'none' && !this.#stopped) {
        const all = this.#pending === 'all';
        this.#pending = 'none';
        await this.syncBatch(all).catch((err: unknown) => {
          // A throwing peer (pod lookup, translator): this pass is lost, the next one retries.
          this.#log.error({ err: errorMessage(err) }, 'Pod status sync pass failed');
        });
      }
    })().finally(() => {
      this.#running = undefined;
    });
  }

  #canBeDeletedCached(statusUid: string, vs: VersionedPodStatus): boolean {
    const pod = this.#options.podLookup?.(statusUid);
    return pod !== undefined && canBeDeleted(pod, vs.podIsFinished);
  }

  #needsReconcile(uid: string, status: V1PodStatus): boolean {
    let pod = this.#options.podLookup?.(uid);
    if (pod === undefined) return false;
    const mirrorUid = this.#mirror.mirrorPodUid(uid);
    if (mirrorUid !== undefined) {
      pod = mirrorUid === null ? undefined : this.#options.podLookup?.(mirrorUid);
      if (pod === undefined) return false;
    }
    if (isPodStatusByKubeletEqual(normalizePodStatus(pod, pod.status ?? {}), status)) return false;
    this.#log.info(
      { pod: podRef(pod.metadata?.namespace, pod.metadata?.name) },
      'Pod status is inconsistent with cached status for pod, a reconciliation should be triggered',
    );
    return true;
  }

  /** Upstream `syncPod` (see `syncPodStatus`), then the cache's bookkeeping. */
  async #syncPod(uid: string, vs: VersionedPodStatus): Promise<boolean> {
    const outcome = await syncPodStatus(
      {
        api: this.#api,
        metrics: this.#metrics,
        log: this.#log,
        clock: this.#clock,
        mirror: this.#mirror,
        couldHaveRunningContainers: this.#options.couldHaveRunningContainers,
      },
      uid,
      vs,
    );
    if (outcome.kind === 'recreated') this.#statuses.delete(uid);
    if (outcome.kind !== 'synced') return false;
    if (outcome.wrote) this.patches++;
    this.#metrics.podStatusSyncDuration.observe(Math.max(0, this.#clock.now() - vs.atMs) / 1000);
    this.#apiVersions.set(outcome.apiUid, vs.version);
    if (outcome.deleted) {
      this.deletes++;
      this.#statuses.delete(uid);
    }
    return outcome.wrote;
  }
}

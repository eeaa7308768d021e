/**
 * The kubelet's main loop in miniature (`syncLoopIteration`): pod informer events become
 * pod-worker updates (a status-only change is a reconcile and is not sent), PLEG events
 * and due work-queue keys become `sync` updates, and a housekeeping tick
 * (`HandlePodCleanups`, every 2 s once the pod source has synced) reconciles the workers with
 * the desired pods and stops pods found only in the runtime.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import {
  type Clock,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
  type WorkQueue,
} from '@nodeagent/core';
import { PodSandboxState } from '@nodeagent/cri';
import {
  type DeletedFinalStateUnknown,
  type KubeObject,
  objectOf,
  type SharedInformer,
} from '@nodeagent/informer';
import { type GenericPLEG, isSyncPodWorthy } from '@nodeagent/pleg';
import type { PodWorkers } from '@nodeagent/pod-workers';
import type { ProbeManager, ProbeResultUpdate } from '@nodeagent/prober';
import type { PodStatusManager } from '@nodeagent/status';

/** A pod as the informer hands it over. */
export type PodObject = V1Pod & KubeObject;

/** What {@link PodLifecycle} wires together. */
export interface PodLifecycleDeps {
  /** Pods bound to this node (`spec.nodeName=<node>`). */
  readonly pods: SharedInformer<PodObject>;
  /** One worker per pod UID. */
  readonly workers: PodWorkers<unknown>;
  /** Runtime events and the pod status cache. */
  readonly pleg: GenericPLEG;
  /** Where the workers schedule resyncs. */
  readonly queue: WorkQueue<string>;
  /** Pod statuses: final deletes of pods that finished before they were deleted, and forgetting removed pods. */
  readonly statuses: Pick<PodStatusManager, 'terminatePod' | 'deletePodStatus'>;
  /**
   * Probe results wake the pod's worker (upstream `handleProbeSync`): a readiness or startup
   * change, a liveness failure; housekeeping drops the workers of pods no longer desired.
   * @default none
   */
  readonly prober?: Pick<ProbeManager, 'on' | 'off' | 'cleanupPods'>;
  /** Housekeeping period, ms. @default 2000 */
  readonly housekeepingMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

function uidOf(pod: V1Pod): string {
  return pod.metadata?.uid ?? '';
}

/** Whether an update changes something the workers act on (else it is a status-only reconcile). */
export function podConfigChanged(oldPod: V1Pod, newPod: V1Pod): boolean {
  const pick = (p: V1Pod) =>
    JSON.stringify([
      p.spec,
      p.metadata?.labels,
      p.metadata?.annotations,
      p.metadata?.deletionTimestamp,
      p.metadata?.deletionGracePeriodSeconds,
    ]);
  return pick(oldPod) !== pick(newPod);
}

/** The loop feeding the pod workers. */
export class PodLifecycle implements Lifecycle {
  readonly #once = new StartOnce('PodLifecycle');
  readonly #stopping = new AbortController();
  /** When the last housekeeping pass ran (ms since the epoch), for the sync-loop health check. */
  lastHousekeepingAt: number | undefined;
  /** Pods by UID, including deleted ones whose worker still exists (the kubelet's pod manager). */
  readonly #podsByUid = new Map<string, V1Pod>();
  readonly #removed = new Set<string>();
  #timer: Timer | undefined;
  #loops: Promise<unknown>[] = [];
  readonly #clock: Clock;
  readonly #log: Logger;

  readonly #deps: PodLifecycleDeps;

  /** @param deps see {@link PodLifecycleDeps}. */
  constructor(deps: PodLifecycleDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? realClock;
    this.#log = (deps.logger ?? noopLogger).child({ component: 'sync-loop' });
  }

  /**
   * Registers the informer handler and starts the event, work-queue and housekeeping loops
   * (until {@link PodLifecycle.stop}); resolves once they run. `signal` bounds that wait only.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => this.#startLoops(this.#stopping.signal),
      () => this.stop(),
    );
  }

  #startLoops(signal: AbortSignal): void {
    const { pods, pleg, queue, workers } = this.#deps;
    pods.addEventHandler(
      {
        onAdd: (pod) => this.#onAdd(pod),
        onUpdate: (oldPod, pod) => this.#onUpdate(oldPod, pod),
        onDelete: (pod) => this.#onDelete(pod),
      },
      { name: 'pod-config' },
    );
    this.#loops.push(
      (async () => {
        for await (const event of pleg.events(signal)) {
          if (!isSyncPodWorthy(event)) continue;
          const pod = this.#podsByUid.get(event.id);
          if (pod !== undefined) workers.updatePod({ updateType: 'sync', pod, startTime: this.#clock.now() });
        }
      })().catch(() => {}),
      (async () => {
        for await (const uid of queue.keys(signal)) {
          const pod = this.#podsByUid.get(uid);
          if (pod !== undefined) workers.updatePod({ updateType: 'sync', pod });
          queue.done(uid);
        }
      })().catch(() => {}),
    );
    const prober = this.#deps.prober;
    if (prober !== undefined) {
      const onResult = (u: ProbeResultUpdate) => this.#onProbeResult(u);
      prober.on('result', onResult);
      signal.addEventListener('abort', () => prober.off('result', onResult), { once: true });
    }
    this.#timer = this.#clock.setInterval(() => this.housekeeping(), this.#deps.housekeepingMs ?? 2_000);
  }

  #onProbeResult(update: ProbeResultUpdate): void {
    // Upstream's syncLoopIteration: every readiness and startup update, liveness only on failure.
    if (update.probeType === 'liveness' && update.result !== 'failure') return;
    const pod = this.#podsByUid.get(uidOf(update.pod));
    if (pod === undefined) return;
    this.#log.debug(
      {
        pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`,
        probe: update.probeType,
        result: update.result,
      },
      'SyncLoop (probe)',
    );
    this.#deps.workers.updatePod({ updateType: 'sync', pod });
  }

  /** Stops the loops and waits for them to end. Idempotent. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#timer?.cancel();
    this.#timer = undefined;
    await Promise.all(this.#loops);
    this.#loops = [];
  }

  #onAdd(pod: V1Pod): void {
    this.#podsByUid.set(uidOf(pod), pod);
    this.#log.info({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` }, 'SyncLoop ADD');
    this.#deps.workers.updatePod({ updateType: 'create', pod, startTime: this.#clock.now() });
  }

  #onUpdate(oldPod: V1Pod, pod: V1Pod): void {
    const uid = uidOf(pod);
    this.#podsByUid.set(uid, pod);
    if (!podConfigChanged(oldPod, pod)) return;
    const deleting = pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
    if (deleting && this.#deps.workers.getPodSyncStatus(uid)?.finished === true) {
      // Finished before the delete arrived: nothing runs, so the final delete can go at once.
      // The status manager deletes it once the API shows the terminal phase (upstream TerminatePod).
      this.#deps.statuses.terminatePod(pod);
      return;
    }
    this.#log.info(
      { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` },
      deleting ? 'SyncLoop DELETE' : 'SyncLoop UPDATE',
    );
    this.#deps.workers.updatePod({ updateType: 'update', pod, startTime: this.#clock.now() });
  }

  #onDelete(obj: PodObject | DeletedFinalStateUnknown<PodObject>): void {
    const pod = objectOf(obj);
    const uid = uidOf(pod);
    this.#removed.add(uid);
    this.#log.info({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` }, 'SyncLoop REMOVE');
    this.#deps.workers.updatePod({ updateType: 'kill', pod, startTime: this.#clock.now() });
  }

  /** The pod with this UID as the informer last delivered it (upstream `podManager.GetPodByUID`). */
  podByUid(uid: string): V1Pod | undefined {
    return this.#podsByUid.get(uid);
  }

  /** One `HandlePodCleanups` pass; public for tests. */
  housekeeping(): void {
    const { pods, workers, pleg, statuses } = this.#deps;
    if (!pods.hasSynced()) return;
    this.lastHousekeepingAt = this.#clock.now();
    const desired = pods.lister.list();
    const known = workers.syncKnownPods(desired);
    const desiredUids = new Set(desired.map(uidOf));
    // Upstream HandlePodCleanups: probe workers of pods no longer desired stop.
    this.#deps.prober?.cleanupPods(desiredUids);
    for (const uid of this.#removed) {
      if (known.has(uid) || desiredUids.has(uid)) continue;
      this.#removed.delete(uid);
      this.#podsByUid.delete(uid);
      statuses.deletePodStatus(uid);
    }
    // Pods the runtime runs that no config asks for (e.g. left by an earlier agent): stop them.
    for (const uid of pleg.cache.uids()) {
      if (desiredUids.has(uid) || known.has(uid)) continue;
      const { status } = pleg.cache.get(uid);
      const running =
        status.containerStatuses.some((c) => c.state === 'running') ||
        status.sandboxStatuses.some((s) => s.state === PodSandboxState.SANDBOX_READY);
      if (!running) continue;
      workers.updatePod({
        updateType: 'kill',
        runningPod: { id: uid, name: status.name, namespace: status.namespace },
      });
    }
  }
}

/**
 * The kubelet's main loop in miniature (`syncLoopIteration`): the merged pod config
 * (`@nodeagent/pod-sources`: API server, manifest directory, URL) becomes pod-worker updates —
 * an ADD only after admission (`@nodeagent/admission`; a rejected pod is written Failed),
 * UPDATE/DELETE as updates, REMOVE as a kill, RECONCILE not sent —, PLEG events (one `sync`
 * per pod for the events buffered together) and due work-queue keys become `sync` updates, and
 * a housekeeping tick (`HandlePodCleanups`, every 2 s once every source has been seen)
 * reconciles the workers with the desired pods and stops pods found only in the runtime.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { type PodAdmitter, rejectedPodStatus } from '@nodeagent/admission';
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
import type { KubeObject } from '@nodeagent/informer';
import { type GenericPLEG, isSyncPodWorthy, type PodLifecycleEvent } from '@nodeagent/pleg';
import type { PodConfig, PodUpdate } from '@nodeagent/pod-sources';
import { isPodPhaseTerminal, type PodWorkers } from '@nodeagent/pod-workers';
import type { ProbeManager, ProbeResultUpdate } from '@nodeagent/prober';
import type { PodStatusManager } from '@nodeagent/status';

/** A pod as the informer hands it over. */
export type PodObject = V1Pod & KubeObject;

/** What {@link PodLifecycle} wires together. */
export interface PodLifecycleDeps {
  /** The merged pod sources. */
  readonly config: Pick<PodConfig, 'updates' | 'pods' | 'seenAllSources'>;
  /** Judges each added pod before it reaches the workers. @default admit everything */
  readonly admitter?: Pick<PodAdmitter, 'admit' | 'update' | 'release' | 'admittedPods'>;
  /** Runs after each config update and housekeeping pass (mirror pods). @default none */
  readonly afterUpdate?: () => void;
  /** One worker per pod UID. */
  readonly workers: PodWorkers<unknown>;
  /** Runtime events and the pod status cache. */
  readonly pleg: GenericPLEG;
  /** Where the workers schedule resyncs. */
  readonly queue: WorkQueue<string>;
  /**
   * Pod statuses: rejected pods' status, final deletes of pods that finished before they were
   * deleted, and forgetting removed pods.
   */
  readonly statuses: Pick<PodStatusManager, 'setPodStatus' | 'terminatePod' | 'deletePodStatus'>;
  /** Records the Warning event of a rejected pod (upstream `rejectPod`). @default none */
  readonly recordRejection?: (pod: V1Pod, reason: string, message: string) => void;
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

function timeOf(t: Date | string | undefined): number {
  return t === undefined ? 0 : new Date(t).getTime();
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
  /** Pods admission refused: they never reach the workers. */
  readonly #rejected = new Set<string>();
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
    const { config, pleg, queue, workers } = this.#deps;
    this.#loops.push(
      (async () => {
        while (!signal.aborted) {
          const update = await config.updates.receive(signal);
          try {
            this.#onConfig(update);
          } catch (err) {
            this.#log.error({ err: (err as Error).message, op: update.op }, 'pod config update failed');
          }
          this.#deps.afterUpdate?.();
        }
      })().catch(() => {}),
      (async () => {
        for await (const first of pleg.events(signal)) {
          // The events already buffered with it (one relist sends a pod's events together: a new
          // pod's sandbox and container start) make one sync per pod: the sync reads the cache,
          // which holds them all. Upstream's workers merge them only when the second arrives
          // before the worker took the first (a race); a second sync would wait for the cache
          // to change again.
          const uids = new Set<string>();
          for (let e: PodLifecycleEvent | undefined = first; e !== undefined; e = pleg.channel.tryReceive()) {
            if (isSyncPodWorthy(e)) uids.add(e.id);
          }
          for (const uid of uids) {
            const pod = this.#podsByUid.get(uid);
            if (pod !== undefined)
              workers.updatePod({ updateType: 'sync', pod, startTime: this.#clock.now() });
          }
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

  #onConfig(update: PodUpdate): void {
    switch (update.op) {
      case 'ADD': {
        // Upstream admits additions oldest first, against the pods admitted before them.
        const sorted = [...update.pods].sort(
          (a, b) => timeOf(a.metadata?.creationTimestamp) - timeOf(b.metadata?.creationTimestamp),
        );
        for (const pod of sorted) this.#onAdd(pod, update.source);
        break;
      }
      case 'UPDATE':
      case 'DELETE':
        for (const pod of update.pods) this.#onUpdate(pod, update.op);
        break;
      case 'REMOVE':
        for (const pod of update.pods) this.#onRemove(pod);
        break;
      case 'RECONCILE':
        for (const pod of update.pods) this.#podsByUid.set(uidOf(pod), pod);
        break;
    }
  }

  #onAdd(pod: V1Pod, source: string): void {
    const uid = uidOf(pod);
    this.#podsByUid.set(uid, pod);
    const name = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
    this.#log.info({ pod: name, source }, 'SyncLoop ADD');
    const admitter = this.#deps.admitter;
    if (admitter !== undefined && !isPodPhaseTerminal(pod)) {
      this.#releaseInactive(admitter);
      const result = admitter.admit(pod);
      if (!result.admit) {
        this.#rejected.add(uid);
        this.#log.warn({ pod: name, reason: result.reason }, result.message ?? 'Pod rejected');
        this.#deps.recordRejection?.(pod, result.reason ?? 'Rejected', result.message ?? '');
        this.#deps.statuses.setPodStatus(pod, rejectedPodStatus(pod, result));
        return;
      }
    }
    this.#deps.workers.updatePod({ updateType: 'create', pod, startTime: this.#clock.now() });
  }

  /** Takes pods that finished or left off the admission books (upstream `filterOutInactivePods`). */
  #releaseInactive(admitter: NonNullable<PodLifecycleDeps['admitter']>): void {
    for (const admitted of admitter.admittedPods()) {
      const uid = uidOf(admitted);
      const current = this.#podsByUid.get(uid);
      const status = this.#deps.workers.getPodSyncStatus(uid);
      if (
        current === undefined ||
        this.#removed.has(uid) ||
        status?.finished === true ||
        isPodPhaseTerminal(current)
      ) {
        admitter.release(uid);
      }
    }
  }

  #onUpdate(pod: V1Pod, op: 'UPDATE' | 'DELETE'): void {
    const uid = uidOf(pod);
    this.#podsByUid.set(uid, pod);
    this.#deps.admitter?.update(pod);
    if (
      this.#rejected.has(uid) ||
      (op === 'DELETE' && this.#deps.workers.getPodSyncStatus(uid)?.finished === true)
    ) {
      // Nothing runs (rejected, or finished before the delete arrived): the status manager
      // deletes it once the API shows the terminal phase (upstream TerminatePod).
      if (op === 'DELETE') this.#deps.statuses.terminatePod(pod);
      return;
    }
    this.#log.info({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` }, `SyncLoop ${op}`);
    this.#deps.workers.updatePod({ updateType: 'update', pod, startTime: this.#clock.now() });
  }

  #onRemove(pod: V1Pod): void {
    const uid = uidOf(pod);
    this.#removed.add(uid);
    this.#deps.admitter?.release(uid);
    this.#log.info({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` }, 'SyncLoop REMOVE');
    if (this.#rejected.delete(uid)) return;
    this.#deps.workers.updatePod({ updateType: 'kill', pod, startTime: this.#clock.now() });
  }

  /** The pod with this UID as the config last delivered it (upstream `podManager.GetPodByUID`). */
  podByUid(uid: string): V1Pod | undefined {
    return this.#podsByUid.get(uid);
  }

  /** One `HandlePodCleanups` pass; public for tests. */
  housekeeping(): void {
    const { config, workers, pleg, statuses } = this.#deps;
    if (!config.seenAllSources()) return;
    this.lastHousekeepingAt = this.#clock.now();
    const desired = config.pods().filter((p) => !this.#rejected.has(uidOf(p)));
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
    this.#deps.afterUpdate?.();
  }
}

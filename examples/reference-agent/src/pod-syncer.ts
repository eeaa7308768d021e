/**
 * The pod workers' callbacks (the kubelet's `SyncPod`, `SyncTerminatingPod`,
 * `SyncTerminatingRuntimePod`, `SyncTerminatedPod`), each a few calls into
 * `@nodeagent/kuberuntime` and the `@nodeagent/status` pod status manager.
 *
 * @module
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { definedFields, type Logger, noopLogger } from '@nodeagent/core';
import type { KnownRuntimeIds, PodStatus } from '@nodeagent/kubecontainer';
import type { KubeRuntimeManager, PodSyncResult } from '@nodeagent/kuberuntime';
import type { CachedPodStatus } from '@nodeagent/pleg';
import type {
  PodStatusFunc,
  PodSyncer,
  RunningPod,
  SyncContext,
  SyncPodResult,
  SyncPodType,
} from '@nodeagent/pod-workers';
import type { ProbeManager } from '@nodeagent/prober';
import type { PodStatusManager } from '@nodeagent/status';
import type { PodEnvSources } from './env-sources-wiring.js';
import type { PodVolumes } from './volumes-wiring.js';

/** The part of `@nodeagent/prober`'s `ProbeManager` the syncer drives. */
export type PodProber = Pick<ProbeManager, 'addPod' | 'stopLivenessAndStartup' | 'removePod'>;

/** Orphaned runtime pods are stopped with this grace period, seconds (as upstream). */
export const RUNTIME_POD_GRACE_SECONDS = 1;

/** A container still runs after the kill: the worker retries the termination. */
export class PodStillRunningError extends Error {
  override readonly name = 'PodStillRunningError';
}

/** What {@link AgentPodSyncer} needs. */
export interface AgentPodSyncerDeps {
  /** Moves pods toward their spec. */
  readonly runtime: KubeRuntimeManager;
  /** Caches and writes statuses, and deletes finished pods that are being deleted. */
  readonly statuses: Pick<PodStatusManager, 'getPodStatus' | 'setPodStatus' | 'terminatePod'>;
  /**
   * Probes the pods' containers (upstream `probeManager`): pods are added on every sync,
   * liveness and startup stop when a pod starts terminating, the rest once it is killed.
   * The results reach the status and the kill decisions through the runtime manager's
   * `probes` option. @default none (no probes run)
   */
  readonly prober?: PodProber;
  /**
   * The pod's volumes (`@nodeagent/volumes`, see volumes-wiring.ts): set up before the runtime
   * starts containers, torn down once the pod terminated. @default none (the runtime handles
   * emptyDir and hostPath itself)
   */
  readonly volumes?: PodVolumes;
  /**
   * ConfigMaps and Secrets named in env, read before the runtime acts (the runtime's env lookups
   * answer from them; see env-sources-wiring.ts) and released once the pod terminated.
   * @default none (such env references fail unless optional)
   */
  readonly envSources?: Pick<PodEnvSources, 'refresh' | 'release'>;
  /**
   * Called after the volumes are unmounted and before the status manager may delete the pod
   * (upstream's SyncTerminatedPod removes the pod cgroup there). @default none
   */
  readonly afterVolumesUnmounted?: (pod: V1Pod) => Promise<void>;
  /**
   * Reads one pod into the PLEG at once (the agent passes `GenericPLEG.inspectPod`), called
   * without waiting right after a sync or kill changed the pod's containers or sandbox, so the
   * new state reaches the cache, the pod lifecycle events and so the status without waiting up
   * to a relist period. `known` names the sandboxes and containers the sync knew of or made. A
   * difference from upstream's generic PLEG, which only sees the change at its next periodic
   * relist; its evented PLEG gets it from CRI container events, which containerd < 1.7 does
   * not send. @default none (the next periodic relist sees the change)
   */
  readonly inspectPod?: (uid: string, known: KnownRuntimeIds) => Promise<void>;
  /** @default noopLogger */
  readonly logger?: Logger;
}

function podRef(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** Back-off reasons: the step was skipped, nothing changed in the runtime. */
const BACK_OFF_REASONS: ReadonlySet<string> = new Set(['CrashLoopBackOff', 'ImagePullBackOff']);

/**
 * Whether a sync or kill may have changed the pod's containers or sandbox in the runtime: a
 * start, kill or sandbox step that ran (succeeded, or failed other than by a back-off, e.g. a
 * container created whose start failed). `ConfigPodSandbox` changes nothing.
 */
export function runtimeChanged(result: PodSyncResult): boolean {
  return result.results.some(
    (r) =>
      r.action !== 'ConfigPodSandbox' && (r.error === undefined || !BACK_OFF_REASONS.has(r.error.reason)),
  );
}

function isTerminalPhase(status: V1PodStatus): boolean {
  return status.phase === 'Succeeded' || status.phase === 'Failed';
}

/** The callbacks the reference agent gives `PodWorkers`. */
export class AgentPodSyncer implements PodSyncer<CachedPodStatus> {
  readonly #log: Logger;

  readonly #deps: AgentPodSyncerDeps;

  /** @param deps see {@link AgentPodSyncerDeps}. */
  constructor(deps: AgentPodSyncerDeps) {
    this.#deps = deps;
    this.#log = (deps.logger ?? noopLogger).child({ component: 'pod-syncer' });
  }

  /**
   * Reads `pod` into the PLEG now, without waiting (see {@link AgentPodSyncerDeps.inspectPod}),
   * naming the sandboxes and containers of `before` and those `result` made.
   */
  #readBack(pod: V1Pod, before: PodStatus, result: PodSyncResult): void {
    const inspectPod = this.#deps.inspectPod;
    if (inspectPod === undefined) return;
    const created = result.createdIds();
    const known = {
      sandboxIds: [...before.sandboxStatuses.map((s) => s.id), ...created.sandboxIds],
      containerIds: [...before.containerStatuses.map((c) => c.id), ...created.containerIds],
    };
    inspectPod(pod.metadata?.uid ?? '', known).catch((err: unknown) => {
      // The periodic relist still sees the change.
      this.#log.debug({ pod: podRef(pod), err: String(err) }, 'PLEG read of the pod failed');
    });
  }

  #apiStatus(pod: V1Pod, status: PodStatus, podIsTerminal = false): V1PodStatus {
    const uid = pod.metadata?.uid ?? '';
    const oldStatus = this.#deps.statuses.getPodStatus(uid) ?? pod.status ?? {};
    return this.#deps.runtime.computePodStatus(pod, status, { oldStatus, podIsTerminal });
  }

  /** Status first (from the cached runtime status), then the runtime actions, as the kubelet. */
  async syncPod(
    ctx: SyncContext,
    updateType: SyncPodType,
    pod: V1Pod,
    _mirrorPod: V1Pod | undefined,
    cached: CachedPodStatus,
  ): Promise<SyncPodResult> {
    if (cached.error !== undefined) throw cached.error;
    const status = this.#apiStatus(pod, cached.status);
    this.#deps.statuses.setPodStatus(pod, status);
    if (isTerminalPhase(status)) return { isTerminal: true };
    ctx.signal.throwIfAborted();
    if (updateType === 'create') this.#log.info({ pod: podRef(pod) }, 'Starting pod');
    // As upstream's SyncPod: every volume is set up before any container starts.
    await this.#deps.volumes?.waitForAttachAndMount(pod, ctx.signal);
    // As upstream's SyncPod: the probe workers exist (or see the new pod object) before the runtime acts.
    this.#deps.prober?.addPod(pod);
    await this.#deps.envSources?.refresh(pod, ctx.signal);
    const result = await this.#deps.runtime.syncPod(pod, cached.status);
    if (runtimeChanged(result)) this.#readBack(pod, cached.status, result);
    // A start that failed (CrashLoopBackOff, ImagePullBackOff, CreateContainerConfigError, …) is
    // in the reason cache now: show it at once, not only on the next sync when the back-off
    // has already run out, so the container reads `waiting: CrashLoopBackOff` for the whole wait.
    if (result.results.some((r) => r.action === 'StartContainer' && r.error !== undefined)) {
      this.#deps.statuses.setPodStatus(pod, this.#apiStatus(pod, cached.status));
    }
    // Back-offs are not errors (as upstream); the pod is due again when the first one expires.
    const { error, requeueAfterMs } = this.#deps.runtime.syncOutcome(pod, cached.status, result);
    if (error !== undefined) throw error;
    return { isTerminal: false, requeueAfterMs };
  }

  /** Report, kill within the grace period, check nothing runs, report the terminal status. */
  async syncTerminatingPod(
    ctx: SyncContext,
    pod: V1Pod,
    cached: CachedPodStatus,
    gracePeriodSeconds: number | undefined,
    podStatusFn: PodStatusFunc | undefined,
  ): Promise<void> {
    const { runtime, statuses, prober } = this.#deps;
    prober?.stopLivenessAndStartup(pod);
    const before = this.#apiStatus(pod, cached.status);
    podStatusFn?.(before);
    statuses.setPodStatus(pod, before);
    this.#log.info({ pod: podRef(pod), ...definedFields({ gracePeriodSeconds }) }, 'Killing pod');
    const result = await runtime.killPod(pod, cached.status, gracePeriodSeconds);
    if (runtimeChanged(result)) this.#readBack(pod, cached.status, result);
    const err = result.error();
    if (err !== undefined) throw err;
    prober?.removePod(pod);
    const stopped = await runtime.getPodStatus(pod, ctx.signal);
    const running = stopped.containerStatuses.filter((c) => c.state === 'running').map((c) => c.name);
    if (running.length > 0)
      throw new PodStillRunningError(
        `pod ${podRef(pod)} still has running containers: ${running.join(', ')}`,
      );
    // As PLEG's cache does: a torn-down sandbox has no IP any more, keep reporting the last one.
    const withIps = stopped.ips.length > 0 ? stopped : { ...stopped, ips: cached.status.ips };
    const final = this.#apiStatus(pod, withIps, true);
    podStatusFn?.(final);
    statuses.setPodStatus(pod, final);
  }

  /** An orphan found only in the runtime: stop it with a 1 s grace period. */
  async syncTerminatingRuntimePod(_ctx: SyncContext, runningPod: RunningPod): Promise<void> {
    const { runtime } = this.#deps;
    const pod: V1Pod = {
      metadata: { uid: runningPod.id, name: runningPod.name, namespace: runningPod.namespace },
    };
    this.#log.info({ pod: podRef(pod) }, 'Killing orphaned runtime pod');
    const result = await runtime.killPod(
      undefined,
      await runtime.getPodStatus(pod),
      RUNTIME_POD_GRACE_SECONDS,
    );
    const err = result.error();
    if (err !== undefined) throw err;
  }

  /**
   * The terminal status, then `terminatePod`: the status manager writes it and — for a pod
   * being deleted — deletes the pod once the API shows the terminal phase.
   */
  async syncTerminatedPod(_ctx: SyncContext, pod: V1Pod, cached: CachedPodStatus): Promise<void> {
    const { statuses } = this.#deps;
    const final = this.#apiStatus(pod, cached.status, true);
    statuses.setPodStatus(pod, final);
    // As upstream's SyncTerminatedPod: volumes are unmounted before the pod is reported done.
    await this.#deps.volumes?.unmountPodVolumes(pod);
    // Then the pod cgroup; only then may the API object go (upstream PodResourcesAreReclaimed).
    await this.#deps.afterVolumesUnmounted?.(pod);
    this.#deps.envSources?.release(pod.metadata?.uid ?? '');
    statuses.terminatePod(pod);
    this.#log.info({ pod: podRef(pod), phase: final.phase }, 'Pod terminated');
  }
}

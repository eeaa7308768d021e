/**
 * The agent's `@nodeagent/cgroups` part (the kubelet's container manager, cgroup side): the
 * kubelet's cgroup flags, the container manager on a real runtime — `kubepods` and the QoS
 * tiers at start, a pod cgroup before the sandbox (its literal path is the sandbox's cgroup
 * parent), removal after the pod terminated, orphaned pod cgroups at housekeeping — and the
 * no-op manager on the in-process fake runtime, whose "containers" are no processes and which
 * must run without root.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import {
  type CgroupDriver,
  type CgroupName,
  ContainerManager,
  type ContainerManagerOptions,
  NoopContainerManager,
  type PodCgroups,
} from '@nodeagent/cgroups';
import type { Clock, Logger, Timer } from '@nodeagent/core';
import { PodSandboxState } from '@nodeagent/cri';
import type { PodEventRecorder } from '@nodeagent/events';
import type { PodStatusCache } from '@nodeagent/pleg';
import type {
  PodStatusFunc,
  PodSyncer,
  RunningPod,
  SyncContext,
  SyncPodResult,
  SyncPodType,
} from '@nodeagent/pod-workers';
import { hugePageResourceName, type MachineInfo, type ResourceList } from '@nodeagent/status';

/** The kubelet's cgroup flags. */
export interface CgroupFlags {
  /** `--cgroup-driver cgroupfs|systemd`. */
  readonly cgroupDriver: CgroupDriver | undefined;
  /** `--cgroup-root`. */
  readonly cgroupRoot: string | undefined;
  /** `--cgroups-per-qos[=true|false]`. */
  readonly cgroupsPerQOS: boolean | undefined;
  /** `--enforce-node-allocatable pods,...` (`none` or empty: nothing). */
  readonly enforceNodeAllocatable: readonly string[] | undefined;
}

/** `parseArgs` specs of the cgroup flags (merged into the agent's). */
export const CGROUP_FLAG_OPTIONS = {
  'cgroup-driver': { type: 'string' },
  'cgroup-root': { type: 'string' },
  'cgroups-per-qos': { type: 'string' },
  'enforce-node-allocatable': { type: 'string' },
} as const;

/** Usage lines of the cgroup flags. */
export const CGROUP_FLAGS_USAGE = `  --cgroup-driver cgroupfs|systemd
                                 cgroup naming, as the runtime's (default cgroupfs; real runtimes only)
  --cgroup-root PATH             cgroup that holds kubepods (default /)
  --cgroups-per-qos[=BOOL]       create the kubepods/QoS/pod cgroup hierarchy (default true)
  --enforce-node-allocatable L   comma-separated: pods enforces node allocatable on kubepods (default pods)
`;

/** `--cgroups-per-qos` alone means true (pflag's bool); parseArgs needs a value. */
export function normalizeCgroupArgv(argv: readonly string[]): string[] {
  return argv.map((a) => (a === '--cgroups-per-qos' ? '--cgroups-per-qos=true' : a));
}

/** Reads the cgroup flags; `fail(message)` throws the agent's flag error. */
export function parseCgroupFlags(
  str: (k: string) => string | undefined,
  fail: (message: string) => never,
): CgroupFlags {
  const driver = str('cgroup-driver');
  if (driver !== undefined && driver !== 'cgroupfs' && driver !== 'systemd') {
    fail(`--cgroup-driver: expected cgroupfs or systemd, got "${driver}"`);
  }
  const root = str('cgroup-root');
  if (root !== undefined && !root.startsWith('/'))
    fail(`--cgroup-root: expected an absolute cgroup path, got "${root}"`);
  const perQos = str('cgroups-per-qos');
  if (perQos !== undefined && perQos !== 'true' && perQos !== 'false') {
    fail(`--cgroups-per-qos: expected true or false, got "${perQos}"`);
  }
  const enforce = str('enforce-node-allocatable');
  const list = enforce
    ?.split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '' && x !== 'none');
  for (const x of list ?? []) {
    if (
      ![
        'pods',
        'system-reserved',
        'kube-reserved',
        'system-reserved-compressible',
        'kube-reserved-compressible',
      ].includes(x)
    ) {
      fail(
        `--enforce-node-allocatable: unknown value "${x}" (expected pods, system-reserved, kube-reserved or none)`,
      );
    }
  }
  return {
    cgroupDriver: driver as CgroupDriver | undefined,
    cgroupRoot: root,
    cgroupsPerQOS: perQos === undefined ? undefined : perQos === 'true',
    enforceNodeAllocatable: list,
  };
}

/** What {@link createPodCgroups} needs. */
export interface PodCgroupsDeps {
  /** The cgroup flags. */
  readonly flags: Partial<CgroupFlags> | undefined;
  /** True on a real CRI runtime; the fake one gets the no-op manager. */
  readonly realRuntime: boolean;
  /** Machine facts for the capacity. */
  readonly machine: MachineInfo;
  /** `--kube-reserved`. */
  readonly kubeReserved: ResourceList | undefined;
  /** `--system-reserved`. */
  readonly systemReserved: ResourceList | undefined;
  /** The node's non-terminal pods (burstable tier shares). */
  readonly activePods: () => readonly V1Pod[];
  /** `--pod-max-pids` (`podPidsLimit`): `pids.max` of each pod cgroup; ≤ 0: none. @default -1 */
  readonly podPidsLimit?: number | undefined;
  /** Test hooks: where cgroups are mounted and the filesystem calls. */
  readonly overrides?: Pick<ContainerManagerOptions, 'cgroupMountRoot' | 'fs' | 'procRoot' | 'sysRoot'>;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The container manager for a real runtime, or the no-op one (empty cgroup parent, nothing
 * created) for the fake runtime: the fake runs no processes and the agent must run without root.
 */
export function createPodCgroups(d: PodCgroupsDeps): PodCgroups {
  if (!d.realRuntime) return new NoopContainerManager();
  const f = d.flags ?? {};
  const capacity: Record<string, string> = {
    cpu: String(d.machine.cpus),
    memory: String(d.machine.memoryBytes),
  };
  for (const [page, bytes] of Object.entries(d.machine.hugePages)) {
    capacity[hugePageResourceName(Number(page))] = String(bytes);
  }
  return new ContainerManager({
    capacity,
    ...(f.cgroupDriver !== undefined ? { cgroupDriver: f.cgroupDriver } : {}),
    ...(f.cgroupRoot !== undefined ? { cgroupRoot: f.cgroupRoot } : {}),
    ...(f.cgroupsPerQOS !== undefined ? { cgroupsPerQOS: f.cgroupsPerQOS } : {}),
    ...(f.enforceNodeAllocatable !== undefined ? { enforceNodeAllocatable: f.enforceNodeAllocatable } : {}),
    ...(d.kubeReserved !== undefined ? { kubeReserved: d.kubeReserved } : {}),
    ...(d.systemReserved !== undefined ? { systemReserved: d.systemReserved } : {}),
    activePods: d.activePods,
    ...(d.podPidsLimit !== undefined ? { podPidsLimit: d.podPidsLimit } : {}),
    ...d.overrides,
    clock: d.clock,
    logger: d.logger,
  });
}

const isTerminal = (pod: V1Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/**
 * The pod workers' callbacks with the kubelet's cgroup steps around them: `SyncPod` ensures the
 * pod cgroup before the runtime acts (a failure is a `FailedToCreatePodContainer` event and a
 * sync error), `SyncTerminatedPod` removes it once the pod's containers are gone.
 */
export class CgroupPodSyncer<S> implements PodSyncer<S> {
  readonly #inner: PodSyncer<S>;
  readonly #cgroups: PodCgroups;
  readonly #isTerminationRequested: (uid: string) => boolean;
  readonly #record: PodEventRecorder | undefined;

  /**
   * @param inner the callbacks that do the work.
   * @param cgroups the pod cgroup manager.
   * @param isTerminationRequested the pod workers' `isPodTerminationRequested`.
   * @param record pod events.
   */
  constructor(
    inner: PodSyncer<S>,
    cgroups: PodCgroups,
    isTerminationRequested: (uid: string) => boolean,
    record?: PodEventRecorder,
  ) {
    this.#inner = inner;
    this.#cgroups = cgroups;
    this.#isTerminationRequested = isTerminationRequested;
    this.#record = record;
  }

  /** Ensures the pod cgroup, then syncs. */
  async syncPod(
    ctx: SyncContext,
    type: SyncPodType,
    pod: V1Pod,
    mirror: V1Pod | undefined,
    status: S,
  ): Promise<SyncPodResult> {
    const uid = pod.metadata?.uid ?? '';
    if (!isTerminal(pod) && !this.#isTerminationRequested(uid)) {
      try {
        this.#cgroups.ensurePodCgroup(pod);
      } catch (err) {
        const message = (err as Error).message;
        this.#record?.(
          pod,
          undefined,
          'Warning',
          'FailedToCreatePodContainer',
          `unable to ensure pod container exists: ${message}`,
        );
        throw new Error(
          `failed to ensure that the pod: ${uid} cgroups exist and are correctly applied: ${message}`,
          { cause: err },
        );
      }
    }
    return this.#inner.syncPod(ctx, type, pod, mirror, status);
  }

  /** Unchanged. */
  syncTerminatingPod(
    ctx: SyncContext,
    pod: V1Pod,
    status: S,
    grace: number | undefined,
    fn: PodStatusFunc | undefined,
  ): Promise<void> {
    return this.#inner.syncTerminatingPod(ctx, pod, status, grace, fn);
  }

  /** Unchanged (the orphan cleanup removes such pods' cgroups). */
  syncTerminatingRuntimePod(ctx: SyncContext, runningPod: RunningPod): Promise<void> {
    return this.#inner.syncTerminatingRuntimePod(ctx, runningPod);
  }

  /** Finishes the pod, then removes its cgroup. */
  async syncTerminatedPod(ctx: SyncContext, pod: V1Pod, status: S): Promise<void> {
    await this.#inner.syncTerminatedPod(ctx, pod, status);
    await this.#cgroups.destroyPodCgroup(pod);
  }
}

/** Whether the runtime (PLEG's cache) shows a running container or a ready sandbox of the pod. */
export function runtimeRunsPod(cache: Pick<PodStatusCache, 'get'>, uid: string): boolean {
  const { status } = cache.get(uid);
  return (
    status.containerStatuses.some((c) => c.state === 'running') ||
    status.sandboxStatuses.some((s) => s.state === PodSandboxState.SANDBOX_READY)
  );
}

/** What the orphan cleanup loop needs. */
export interface OrphanCleanupDeps {
  readonly cgroups: PodCgroups;
  /** Whether a pod may still run (its worker is not finished, or the runtime runs it). */
  readonly possiblyRunning: (uid: string) => boolean;
  /** Pod directories (`<podsRoot>/<uid>/volumes` present: only reduce CPU). */
  readonly podsRoot: string;
  readonly periodMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Removes orphaned pod cgroups every housekeeping period (upstream `HandlePodCleanups`); returns the stop function. */
export function startOrphanCgroupCleanup(d: OrphanCleanupDeps): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const pass = async () => {
    // One listing of the hierarchies per pass, as upstream's HandlePodCleanups.
    const cgroupPods =
      d.cgroups instanceof ContainerManager
        ? d.cgroups.getAllPodsFromCgroups()
        : new Map<string, CgroupName>();
    const possibly = new Set([...cgroupPods.keys()].filter((uid) => d.possiblyRunning(uid)));
    const removed = await d.cgroups.cleanupOrphanedPodCgroups(
      possibly,
      (uid) => existsSync(join(d.podsRoot, uid, 'volumes')),
      cgroupPods,
    );
    if (removed.length > 0) d.logger.info({ pods: removed }, 'Removed orphaned pod cgroups');
  };
  const timer: Timer = d.clock.setInterval(() => {
    running = running
      .then(pass)
      .catch((err) => d.logger.warn({ err: (err as Error).message }, 'orphaned pod cgroup cleanup failed'));
  }, d.periodMs);
  return async () => {
    timer.cancel();
    await running;
  };
}

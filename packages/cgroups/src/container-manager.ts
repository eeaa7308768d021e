/**
 * The kubelet's container manager, cgroup part (upstream `containerManagerImpl` with its QoS
 * container manager, pod container manager and node allocatable enforcement): `kubepods`
 * under `cgroupRoot` carrying node allocatable, `burstable` and `besteffort` below it with the
 * QoS tier values, one `pod<uid>` cgroup per pod (Guaranteed ones directly in `kubepods`)
 * carrying the pod's summed limits, the literal cgroup parent the runtime gets, and removal of
 * pod cgroups (processes killed first) when a pod is gone.
 *
 * @module
 */
import { join } from 'node:path';
import { type Clock, type Logger, noopLogger, realClock, type Timer } from '@nodeagent/core';
import { podQosClass } from '@nodeagent/kubecontainer';
import { type CgroupFs, nodeCgroupFs, subdirectoriesOf } from './cgroup-fs.js';
import { type CgroupLayout, detectCgroupLayout } from './cgroup-layout.js';
import { CgroupManager } from './cgroup-manager.js';
import {
  type CgroupDriver,
  type CgroupName,
  cgroupPath,
  newCgroupName,
  parseCgroupfs,
  parseCgroupPath,
} from './cgroup-name.js';
import type { ContainerManagerOptions } from './container-manager-options.js';
import { CgroupError } from './errors.js';
import { readHugePageSizes, readMaxPid } from './machine.js';
import type { CgroupPod } from './pod-shape.js';
import {
  MIN_SHARES,
  nodeAllocatableAbsolute,
  nodeAllocatableResourceConfig,
  qosResourceConfigs,
  type ResourceConfig,
  resourceConfigForPod,
} from './resource-config.js';

/** Name of the node allocatable cgroup (upstream `defaultNodeAllocatableCgroupName`). */
export const NODE_ALLOCATABLE_CGROUP = 'kubepods';
/** Prefix of pod cgroups (upstream `podCgroupNamePrefix`). */
export const POD_CGROUP_PREFIX = 'pod';

/** The QoS tiers' cgroup names (upstream `QOSContainersInfo`): Guaranteed pods sit in `kubepods` itself. */
export interface QosContainersInfo {
  /** `kubepods`. */
  readonly guaranteed: CgroupName;
  /** `kubepods/burstable`. */
  readonly burstable: CgroupName;
  /** `kubepods/besteffort`. */
  readonly besteffort: CgroupName;
}

/** What the agent needs from a pod cgroup manager; {@link NoopContainerManager} implements it without cgroups. */
export interface PodCgroups {
  /** Creates the hierarchy; resolves when it exists. */
  start(signal?: AbortSignal): Promise<void>;
  /** Stops the periodic QoS update. */
  stop(): Promise<void>;
  /** The cgroup parent for the pod's sandbox, as the kubelet passes it to the runtime (`''` when none). */
  podCgroupParent(pod: CgroupPod): string;
  /** Whether the pod's cgroup exists. */
  podCgroupExists(pod: CgroupPod): boolean;
  /** Creates the pod's cgroup with its limits if missing (the QoS tiers are recomputed first). */
  ensurePodCgroup(pod: CgroupPod): void;
  /** Kills what still runs in the pod's cgroup and removes it. */
  destroyPodCgroup(pod: CgroupPod): Promise<void>;
  /**
   * Removes the cgroups of pods not in `possiblyRunning`; resolves to the UIDs removed.
   * `cgroupPods` is a listing the caller already made ({@link ContainerManager.getAllPodsFromCgroups},
   * as upstream passes its `cgroupPods`); without it the hierarchies are listed again.
   */
  cleanupOrphanedPodCgroups(
    possiblyRunning: ReadonlySet<string>,
    podVolumesExist?: (uid: string) => boolean,
    cgroupPods?: ReadonlyMap<string, CgroupName>,
  ): Promise<string[]>;
  /** Recomputes the burstable tier's shares from the active pods. */
  updateQosCgroups(): void;
}

function uidOf(pod: CgroupPod): string {
  const uid = pod.metadata?.uid ?? '';
  if (uid === '')
    throw new CgroupError('invalid-name', '', 'pod has no metadata.uid: cannot name its cgroup');
  return uid;
}

/** The kubelet's cgroup hierarchy (see the module comment). */
export class ContainerManager implements PodCgroups {
  readonly #o: ContainerManagerOptions;
  readonly #fs: CgroupFs;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #driver: CgroupDriver;
  readonly #perQos: boolean;
  readonly #root: CgroupName;
  #layout: CgroupLayout | undefined;
  #cgroups: CgroupManager | undefined;
  #timer: Timer | undefined;
  #allocatableEnforced = false;
  /** Names of the three QoS tiers. */
  readonly qosContainers: QosContainersInfo;

  /** @param options see {@link ContainerManagerOptions}. */
  constructor(options: ContainerManagerOptions) {
    this.#o = options;
    this.#fs = options.fs ?? nodeCgroupFs;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'container-manager' });
    this.#driver = options.cgroupDriver ?? 'cgroupfs';
    this.#perQos = options.cgroupsPerQOS ?? true;
    this.#root = parseCgroupfs(options.cgroupRoot ?? '/');
    const kubepods = newCgroupName(this.#root, NODE_ALLOCATABLE_CGROUP);
    this.qosContainers = {
      guaranteed: kubepods,
      burstable: newCgroupName(kubepods, 'burstable'),
      besteffort: newCgroupName(kubepods, 'besteffort'),
    };
  }

  /** The one-cgroup manager (after {@link ContainerManager.start}). */
  get cgroupManager(): CgroupManager {
    if (this.#cgroups === undefined) throw new Error('ContainerManager: call start() first');
    return this.#cgroups;
  }

  /** The detected layout (after {@link ContainerManager.start}). */
  get layout(): CgroupLayout {
    if (this.#layout === undefined) throw new Error('ContainerManager: call start() first');
    return this.#layout;
  }

  /**
   * Validates `cgroupRoot`, creates and enforces `kubepods` (node allocatable), creates the QoS
   * tiers and starts their periodic update; a second call while started does nothing.
   * @throws CgroupError
   */
  async start(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (!this.#perQos || this.#timer !== undefined) return;
    const mountRoot = this.#o.cgroupMountRoot ?? '/sys/fs/cgroup';
    const layout = detectCgroupLayout(mountRoot, this.#fs);
    this.#layout = layout;
    const cgroups = new CgroupManager({
      driver: this.#driver,
      layout,
      fs: this.#fs,
      hugePageSizesBytes: readHugePageSizes(this.#o.sysRoot ?? '/sys', this.#fs),
      clock: this.#clock,
      logger: this.#log,
    });
    this.#cgroups = cgroups;
    // The root is checked in cgroupfs form (upstream converts no names here).
    const rootProblem = new CgroupManager({
      driver: 'cgroupfs',
      layout,
      fs: this.#fs,
      hugePageSizesBytes: [],
    }).validate(this.#root);
    if (rootProblem !== undefined) {
      throw new CgroupError(
        'root-invalid',
        this.#o.cgroupRoot ?? '/',
        `invalid configuration: ${rootProblem}`,
      );
    }
    const kubepods = this.qosContainers.guaranteed;
    const allocatable = this.#nodeAllocatableConfig(layout);
    if (!cgroups.exists(kubepods)) cgroups.create(kubepods, allocatable);
    this.#enforceNodeAllocatable(allocatable);
    for (const [name, config] of [
      [this.qosContainers.burstable, {}],
      [this.qosContainers.besteffort, { cpuShares: MIN_SHARES }],
    ] as const) {
      if (!cgroups.exists(name)) cgroups.create(name, config);
      else cgroups.update(name, config);
    }
    this.updateQosCgroups();
    this.#timer = this.#clock.setInterval(() => {
      try {
        if (!this.#allocatableEnforced) this.#enforceNodeAllocatable(this.#nodeAllocatableConfig(layout));
        this.updateQosCgroups();
      } catch (err) {
        this.#log.warn({ err: (err as Error).message }, 'Failed to update QoS cgroup configuration');
      }
    }, this.#o.qosUpdatePeriodMs ?? 60_000);
    this.#log.info(
      { cgroupRoot: this.#cgroups.name(kubepods), driver: this.#driver, version: layout.version },
      'Created the kubepods hierarchy',
    );
  }

  /** Stops the periodic QoS update. Cgroups stay (pods may still run). Idempotent. */
  async stop(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /** Capacity plus the `pid` the procfs reports (upstream `internalCapacity`), in milli-units. */
  #internalCapacity(): Record<string, string> {
    const capacity: Record<string, string> = { ...this.#o.capacity };
    if (capacity.pid === undefined) {
      const maxPid = readMaxPid(this.#o.procRoot ?? '/proc', this.#fs);
      if (maxPid !== undefined) capacity.pid = String(maxPid);
    }
    return capacity;
  }

  /** What `kubepods` gets (upstream `createNodeAllocatableCgroups` / `enforceNodeAllocatableCgroups`). */
  #nodeAllocatableConfig(layout: CgroupLayout): ResourceConfig {
    const capacity = this.#internalCapacity();
    const enforce = this.#o.enforceNodeAllocatable ?? ['pods'];
    const list = enforce.includes('pods')
      ? nodeAllocatableAbsolute(capacity, this.#o.systemReserved, this.#o.kubeReserved)
      : nodeAllocatableAbsolute(capacity);
    const config = nodeAllocatableResourceConfig(list, this.#allCpus(layout));
    // MemoryQoS is off: reset memory.min/low a previous configuration may have left (upstream, v2).
    return layout.version === 2 ? { ...config, unified: { 'memory.min': '0', 'memory.low': '0' } } : config;
  }

  /** All CPUs of the machine (upstream: the CPU manager's `GetAllCPUs` for the none policy). */
  #allCpus(layout: CgroupLayout): string | undefined {
    const dir = layout.controllers.get('cpuset');
    if (dir === undefined) return undefined;
    const file = join(dir, layout.version === 2 ? 'cpuset.cpus.effective' : 'cpuset.cpus');
    try {
      const cpus = this.#fs.readFile(file).trim();
      return cpus === '' ? undefined : cpus;
    } catch {
      return undefined;
    }
  }

  #enforceNodeAllocatable(config: ResourceConfig): void {
    try {
      this.cgroupManager.update(this.qosContainers.guaranteed, config);
      this.#allocatableEnforced = true;
    } catch (err) {
      // Upstream retries every minute until evictions bring usage under the new limits.
      this.#allocatableEnforced = false;
      this.#log.warn({ err: (err as Error).message }, 'Failed to update Node Allocatable Limits');
    }
  }

  /** Recomputes the QoS tiers (upstream `UpdateCgroups`). @throws CgroupError `update-failed` */
  updateQosCgroups(): void {
    if (!this.#perQos || this.#cgroups === undefined) return;
    const configs = qosResourceConfigs(this.#o.activePods?.() ?? [], this.#hugePageSizes());
    this.#cgroups.update(this.qosContainers.guaranteed, configs.guaranteed);
    this.#cgroups.update(this.qosContainers.burstable, configs.burstable);
    this.#cgroups.update(this.qosContainers.besteffort, configs.besteffort);
  }

  #hugePageSizes(): bigint[] {
    return readHugePageSizes(this.#o.sysRoot ?? '/sys', this.#fs);
  }

  /** The pod's cgroup name (upstream `GetPodContainerName`): its QoS tier + `pod<uid>`. @throws CgroupError */
  podContainerName(pod: CgroupPod): CgroupName {
    const qos = podQosClass(pod);
    const parent =
      qos === 'Guaranteed'
        ? this.qosContainers.guaranteed
        : qos === 'Burstable'
          ? this.qosContainers.burstable
          : this.qosContainers.besteffort;
    return newCgroupName(parent, `${POD_CGROUP_PREFIX}${uidOf(pod)}`);
  }

  /**
   * The literal cgroup parent of the pod as the kubelet gives it to the runtime (upstream
   * `GetPodCgroupParent`): `/kubepods/burstable/pod<uid>` (cgroupfs) or
   * `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice` (systemd);
   * `''` with `cgroupsPerQOS` off.
   */
  podCgroupParent(pod: CgroupPod): string {
    if (!this.#perQos) return '';
    return cgroupPath(this.podContainerName(pod), this.#driver);
  }

  /** Whether the pod's cgroup exists (upstream `Exists`). */
  podCgroupExists(pod: CgroupPod): boolean {
    if (!this.#perQos) return true;
    return this.cgroupManager.exists(this.podContainerName(pod));
  }

  /**
   * Creates the pod's cgroup with {@link resourceConfigForPod}'s values when it does not exist
   * (upstream `SyncPod`: `UpdateQOSCgroups` then `EnsureExists`). An existing one is left as is.
   * @throws CgroupError
   */
  ensurePodCgroup(pod: CgroupPod): void {
    if (!this.#perQos) return;
    const name = this.podContainerName(pod);
    const cgroups = this.cgroupManager;
    if (cgroups.exists(name)) return;
    try {
      this.updateQosCgroups();
    } catch (err) {
      this.#log.debug({ err: (err as Error).message }, 'Failed to update QoS cgroups while syncing pod');
    }
    const config = resourceConfigForPod(pod, {
      cpuCfsQuota: this.#o.cpuCfsQuota ?? true,
      cpuCfsQuotaPeriodUs: BigInt(this.#o.cpuCfsQuotaPeriodUs ?? 100_000),
      podPidsLimit: BigInt(this.#o.podPidsLimit ?? -1),
    });
    try {
      cgroups.create(name, config);
    } catch (err) {
      const cause = err as Error;
      throw new CgroupError(
        err instanceof CgroupError ? err.code : 'create-failed',
        cgroups.name(name),
        `failed to create container for ${cgroups.name(name)} : ${cause.message}`,
        { cause },
      );
    }
  }

  /** Kills the pod's remaining processes and removes its cgroup (upstream `SyncTerminatedPod` → `Destroy`). */
  async destroyPodCgroup(pod: CgroupPod): Promise<void> {
    if (!this.#perQos) return;
    await this.destroy(this.podContainerName(pod));
  }

  /**
   * Kills every process in the cgroup — `cgroup.kill` on v2 when the kernel has it, else
   * SIGKILL to each PID, up to five rounds — then removes it (upstream pod container manager
   * `Destroy`). @throws CgroupError `destroy-failed`
   */
  async destroy(name: CgroupName): Promise<void> {
    const cgroups = this.cgroupManager;
    const literal = cgroups.name(name);
    if (!cgroups.killAll(name)) {
      const removed = new Set<number>();
      let failed: unknown[] = [];
      for (let round = 0; round < 5; round++) {
        failed = [];
        for (const pid of cgroups.pids(name)) {
          if (removed.has(pid)) continue;
          try {
            cgroups.killPid(pid);
            removed.add(pid);
          } catch (err) {
            failed.push(err);
          }
        }
        if (failed.length === 0) break;
      }
      if (failed.length > 0) {
        throw new CgroupError(
          'destroy-failed',
          literal,
          `failed to kill all the processes attached to the ${literal} cgroups : ${failed.map((e) => (e as Error).message).join(', ')}`,
        );
      }
    }
    // Killed tasks leave the cgroup as they exit; wait a little before removing it.
    for (let i = 0; i < 50 && cgroups.pids(name).length > 0; i++) await this.#clock.sleep(20);
    await cgroups.destroy(name);
  }

  /**
   * The parse of each directory name seen under a QoS cgroup by {@link getAllPodsFromCgroups}
   * (`[pod UID, cgroup name]`, or `null` when it is not a pod cgroup), keyed by QoS path and
   * name: the same names come back every 2 s in every hierarchy. Names not seen in a pass go.
   */
  readonly #podCgroupNames = new Map<string, readonly [string, CgroupName] | null>();

  /** Pod UID → cgroup name of every pod cgroup found in any hierarchy (upstream `GetAllPodsFromCgroups`). */
  getAllPodsFromCgroups(): Map<string, CgroupName> {
    const found = new Map<string, CgroupName>();
    if (!this.#perQos) return found;
    const cgroups = this.cgroupManager;
    const layout = this.layout;
    const qosPaths = [
      this.qosContainers.besteffort,
      this.qosContainers.burstable,
      this.qosContainers.guaranteed,
    ].map((qos) => cgroups.name(qos));
    const seen = new Set<string>();
    for (const mount of [...layout.hierarchies, ...layout.cleanupOnly]) {
      for (const qosPath of qosPaths) {
        let entries: string[];
        try {
          // The listing's entry types, not a stat per entry (upstream: os.ReadDir, IsDir): every
          // 2 s, over every hierarchy of cgroup v1, with up to max-pods pod directories in each.
          entries = subdirectoriesOf(this.#fs, join(mount, qosPath));
        } catch {
          continue;
        }
        for (const e of entries) {
          if (!e.includes(POD_CGROUP_PREFIX)) continue;
          const key = `${qosPath}\0${e}`;
          seen.add(key);
          let parsed = this.#podCgroupNames.get(key);
          if (parsed === undefined) {
            parsed = this.#parsePodCgroupName(qosPath, e);
            this.#podCgroupNames.set(key, parsed);
          }
          if (parsed !== null) found.set(parsed[0], parsed[1]);
        }
      }
    }
    for (const key of this.#podCgroupNames.keys()) if (!seen.has(key)) this.#podCgroupNames.delete(key);
    return found;
  }

  #parsePodCgroupName(qosPath: string, entry: string): readonly [string, CgroupName] | null {
    const internal = parseCgroupPath(join(qosPath, entry), this.#driver);
    const base = internal[internal.length - 1] ?? '';
    if (!base.includes(POD_CGROUP_PREFIX)) return null;
    const parts = base.split(POD_CGROUP_PREFIX);
    if (parts.length !== 2) {
      this.#log.info(
        { path: join(qosPath, entry) },
        'Pod cgroup manager ignored unexpected cgroup because it is not a pod',
      );
      return null;
    }
    return [parts[1] ?? '', internal];
  }

  /**
   * Removes the cgroups of pods that are not possibly running (upstream
   * `cleanupOrphanedPodCgroups`): while a pod's volumes still exist its cgroup only gets
   * minimal CPU shares; errors are logged and retried at the next call.
   */
  async cleanupOrphanedPodCgroups(
    possiblyRunning: ReadonlySet<string>,
    podVolumesExist: (uid: string) => boolean = () => false,
    cgroupPods: ReadonlyMap<string, CgroupName> = this.getAllPodsFromCgroups(),
  ): Promise<string[]> {
    if (!this.#perQos) return [];
    const removed: string[] = [];
    for (const [uid, name] of cgroupPods) {
      if (possiblyRunning.has(uid)) continue;
      if (podVolumesExist(uid)) {
        this.#log.debug(
          { podUID: uid },
          'Orphaned pod found, but volumes not yet removed.  Reducing cpu to minimum',
        );
        try {
          this.cgroupManager.update(name, { cpuShares: MIN_SHARES });
        } catch (err) {
          this.#log.info(
            { podUID: uid, err: (err as Error).message },
            'Failed to reduce cpu time for pod pending volume cleanup',
          );
        }
        continue;
      }
      this.#log.info({ podUID: uid }, 'Orphaned pod found, removing pod cgroups');
      try {
        await this.destroy(name);
        removed.push(uid);
      } catch (err) {
        this.#log.warn({ podUID: uid, err: (err as Error).message }, 'Failed to remove orphaned pod cgroup');
      }
    }
    return removed;
  }
}

/**
 * A container manager that manages no cgroups (upstream `podContainerManagerNoop`, what the
 * kubelet uses with `cgroupsPerQOS` off): an empty cgroup parent, every pod "exists", nothing
 * is created or removed. For runtimes that do not run real processes (the fake runtime) and
 * for agents without root.
 */
export class NoopContainerManager implements PodCgroups {
  /** Does nothing. */
  async start(): Promise<void> {}
  /** Does nothing. */
  async stop(): Promise<void> {}
  /** Always `''`: the runtime picks its default. */
  podCgroupParent(): string {
    return '';
  }
  /** Always true. */
  podCgroupExists(): boolean {
    return true;
  }
  /** Does nothing. */
  ensurePodCgroup(): void {}
  /** Does nothing. */
  async destroyPodCgroup(): Promise<void> {}
  /** Removes nothing. */
  async cleanupOrphanedPodCgroups(): Promise<string[]> {
    return [];
  }
  /** Does nothing. */
  updateQosCgroups(): void {}
}

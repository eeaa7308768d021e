/**
 * The stats provider: the kubelet's CRI stats provider on top of cAdvisor-style housekeeping.
 * Per field, the kubelet's choice of source:
 * - container CPU/memory/swap: the container's cgroup (housekeeping cache) when found, else CRI
 *   `ListContainerStats` (with `usageNanoCores` from the previous CRI sample when the runtime
 *   gives none);
 * - container rootfs: CRI `writable_layer` on the image (or container) filesystem's capacity;
 *   logs: `du` of `<podLogsDir>/<ns>_<name>_<uid>/<container>` on nodefs' capacity;
 * - pod CPU/memory/swap/processes: the pod cgroup, else the sum of the containers; pod network:
 *   the netns of a process in the pod cgroup. Without cgroups to read (embedded mode, no
 *   hierarchy) these come from CRI `ListPodSandboxStats` instead, which is called only then: the
 *   kubelet calls it only under the alpha `PodAndContainerStatsFromCRI` gate, and containerd 1.6
 *   takes seconds of its CPU to answer it for 110 pods;
 * - node CPU/memory: the root cgroup (`/proc/meminfo` for capacity: `availableBytes =
 *   MemTotal − workingSet`), network: the host's interfaces, fs: statfs of the root directory,
 *   imageFs/containerFs: CRI `ImageFsInfo` usage on statfs of its mount point.
 *
 * @module
 */

import { join } from 'node:path';
import { type Clock, type Logger, noopLogger, realClock } from '@nodeagent/core';
import type {
  Container,
  ContainerStats as CriContainerStats,
  FilesystemUsage,
  PodSandbox,
} from '@nodeagent/cri';
import { CgroupTree, detectCgroupVersion } from './cgroup-tree.js';
import {
  cpuFromCgroup,
  cpuFromCri,
  fsFromCri,
  fsStats,
  ioFromCgroup,
  ioFromCri,
  memoryFromCgroup,
  memoryFromCri,
  networkFromCri,
  networkFromNetDev,
  nsToMs,
  statsTime,
  sumCpuMemory,
  swapFromCgroup,
  swapFromCri,
} from './convert.js';
import { type CriSnapshot, readCriSnapshot } from './cri-snapshot.js';
import {
  StatsErrorRecorder,
  type StatsErrorSource,
  StatsOptionsError,
  StatsUnavailableError,
} from './errors.js';
import {
  capacityOf,
  defaultStatfs,
  diskUsage,
  type FsCapacity,
  type MountEntry,
  readMounts,
} from './filesystem.js';
import { type CgroupInfo, Housekeeping, type HousekeepingSnapshot } from './housekeeping.js';
import { ProcFs } from './procfs.js';
import type { StatsProviderOptions } from './stats-options.js';
import {
  type ContainerStats,
  type FsStats,
  type NodeStats,
  type PodStats,
  type Summary,
  type SummaryProvider,
  type SummaryScope,
  SystemContainerKubelet,
  SystemContainerMisc,
  SystemContainerPods,
  SystemContainerRuntime,
  type VolumeStats,
} from './summary-types.js';
import { FsResourceAnalyzer } from './volume-stats.js';

/** One container as `/metrics/cadvisor` labels it. */
export interface CadvisorContainer {
  /** cAdvisor's container name: the cgroup path (`id` label). */
  readonly id: string;
  /** First alias: the runtime's container id, or empty for raw cgroups (`name` label). */
  readonly name: string;
  /** Image (`image` label). */
  readonly image: string;
  /** Pod name (`pod` label); set on pod cgroups too. */
  readonly pod: string;
  /** Pod namespace (`namespace` label). */
  readonly namespace: string;
  /** Container name (`container` label). */
  readonly container: string;
  /** The cached cgroup data. */
  readonly info: CgroupInfo;
  /** Filesystems the container uses: device → usage. */
  readonly filesystems: readonly CadvisorFilesystem[];
  /** Start time, ms. */
  readonly startTimeMs: number;
}

/** One filesystem row of a container in `/metrics/cadvisor`. */
export interface CadvisorFilesystem {
  /** Device label. */
  readonly device: string;
  /** Bytes used. */
  readonly usageBytes: number;
  /** Bytes in the filesystem. */
  readonly limitBytes: number;
  /** Inodes in the filesystem. */
  readonly inodes: number;
  /** Free inodes. */
  readonly inodesFree: number;
}

/** What `/metrics/cadvisor` renders. */
export interface CadvisorSnapshot {
  /** When the data was read, ms. */
  readonly timeMs: number;
  /** Every container, raw cgroups included. */
  readonly containers: readonly CadvisorContainer[];
  /** True when the container list failed (`container_scrape_error 1`). */
  readonly scrapeError: boolean;
}

/** The provider; `get` is the kubelet's `SummaryProvider.Get`. */
export interface StatsProvider extends SummaryProvider {
  /** Runs a first housekeeping pass, then one every interval. */
  start(): Promise<void>;
  /** Stops housekeeping. Idempotent. */
  stop(): Promise<void>;
  /** Runs one housekeeping pass now (tests, benchmarks). */
  housekeep(): Promise<void>;
  /**
   * The full Summary (`/stats/summary`), or with `{ pods: false }` the node's part only;
   * `updateStats` refreshes the CRI CPU-rate cache.
   * @throws {@link StatsUnavailableError} when the runtime cannot list sandboxes or containers.
   */
  get(updateStats: boolean, scope?: SummaryScope): Promise<Summary>;
  /**
   * CPU and memory only (`/stats/summary?only_cpu_and_memory=true`, `/metrics/resource`).
   * @throws {@link StatsUnavailableError} as {@link StatsProvider.get}.
   */
  getCpuAndMemory(): Promise<Summary>;
  /** What `/metrics/cadvisor` renders. */
  cadvisorSnapshot(): Promise<CadvisorSnapshot>;
  /** Read failures so far, by source. */
  errorCounts(): Readonly<Record<StatsErrorSource, number>>;
  /** The detected cgroup version (undefined in embedded mode or without cgroupfs). */
  readonly cgroupVersion: 'v1' | 'v2' | undefined;
}

const POD_NAME_LABEL = 'io.kubernetes.pod.name';
const POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';

interface NodeFacts {
  timeMs: number;
  memTotal?: number;
  memFree?: number;
  inactiveFile?: number;
  cpuNs?: number;
  swapTotal?: number;
  swapFree?: number;
  bootMs?: number;
  pidMax?: number;
  procs?: number;
  cpus?: number;
  nodefs?: FsCapacity;
  mounts: MountEntry[];
}

class Provider implements StatsProvider {
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly errors: StatsErrorRecorder;
  private readonly proc: ProcFs;
  private readonly statfs;
  private housekeeping: Housekeeping | undefined;
  private prepared: Promise<void> | undefined;
  private readonly volumeStats: FsResourceAnalyzer | undefined;
  cgroupVersion: 'v1' | 'v2' | undefined;
  /** CRI CPU samples for usageNanoCores, by container or sandbox id. */
  private procCpu: { cpuNs: number; timeMs: number; nanoCores?: number } | undefined;
  private readonly criCpu = new Map<string, { usageNs: number; timeNs: bigint; nanoCores?: number }>();

  constructor(private readonly o: StatsProviderOptions) {
    if (!o.nodeName) throw new StatsOptionsError('nodeName', 'must be a non-empty node name');
    if (o.housekeepingIntervalMs !== undefined && !(o.housekeepingIntervalMs >= 1000)) {
      throw new StatsOptionsError(
        'housekeepingIntervalMs',
        `must be ≥ 1000, got ${o.housekeepingIntervalMs}`,
      );
    }
    this.clock = o.clock ?? realClock;
    this.log = (o.logger ?? noopLogger).child({ component: 'stats' });
    this.errors = new StatsErrorRecorder(this.log, o.metrics);
    this.proc = new ProcFs(o.procRoot ?? '/proc');
    this.statfs = o.statfs ?? defaultStatfs;
    if (o.volumes !== undefined) {
      this.volumeStats = new FsResourceAnalyzer({
        lister: o.volumes,
        statfs: this.statfs,
        clock: this.clock,
        logger: this.log,
        onError: (path, reason) => this.errors.record('du', path, reason),
        ...(o.volumeStatsAggPeriodMs === undefined ? {} : { periodMs: o.volumeStatsAggPeriodMs }),
      });
    }
  }

  private prepare(): Promise<void> {
    this.prepared ??= (async () => {
      if (this.o.embedded) return;
      const root = this.o.cgroupRoot ?? '/sys/fs/cgroup';
      const version = await detectCgroupVersion(root);
      this.cgroupVersion = version;
      if (version === undefined) {
        this.errors.record('cgroup', root, 'no cgroup hierarchy found');
        return;
      }
      const sys = this.o.systemCgroups ?? {};
      const extra = [sys.kubelet, sys.runtime, sys.misc].filter((c): c is string => c !== undefined);
      this.housekeeping = new Housekeeping({
        tree: new CgroupTree(root, version),
        proc: this.proc,
        podsCgroupRoots: this.o.podsCgroupRoots ?? ['kubepods', 'kubepods.slice'],
        extraCgroups: extra.map((c) => `/${c.replace(/^\/+/, '')}`),
        clock: this.clock,
        errors: this.errors,
        logger: this.log,
        ...(this.o.housekeepingIntervalMs === undefined ? {} : { intervalMs: this.o.housekeepingIntervalMs }),
      });
    })();
    return this.prepared;
  }

  async start(): Promise<void> {
    await this.prepare();
    await this.housekeeping?.start();
    this.volumeStats?.start();
  }

  async stop(): Promise<void> {
    this.housekeeping?.stop();
    this.volumeStats?.stop();
  }

  async housekeep(): Promise<void> {
    await this.prepare();
    await this.housekeeping?.housekeep();
  }

  errorCounts() {
    return this.errors.snapshot();
  }

  private async cache(): Promise<HousekeepingSnapshot | undefined> {
    await this.prepare();
    if (this.housekeeping === undefined) return undefined;
    return this.housekeeping.latest() ?? (await this.housekeeping.housekeep());
  }

  private async statfsCapacity(path: string): Promise<FsCapacity | undefined> {
    try {
      return capacityOf(await this.statfs(path));
    } catch (err) {
      this.errors.record('statfs', path, (err as Error).message);
      return undefined;
    }
  }

  /**
   * `/proc` facts, plus statfs of nodefs unless `cpuAndMemoryOnly`, and the mount table only
   * with `withMounts` (`/metrics/cadvisor`).
   */
  private async nodeFacts(cpuAndMemoryOnly: boolean, withMounts: boolean): Promise<NodeFacts> {
    const skipFs = this.o.embedded === true || cpuAndMemoryOnly;
    const [mi, uptime, pidMax, procs, cpuNs, nodefs, mounts] = await Promise.all([
      this.proc.meminfo(),
      this.proc.uptimeSeconds(),
      this.proc.pidMax(),
      this.proc.processCount(),
      this.proc.cpuNs(),
      skipFs ? undefined : this.statfsCapacity(this.o.rootDirectory ?? '/var/lib/kubelet'),
      skipFs || !withMounts ? [] : readMounts(this.o.procRoot ?? '/proc'),
    ]);
    if (mi === undefined) this.errors.record('proc', 'meminfo', 'unreadable');
    const facts: NodeFacts = { mounts, timeMs: this.clock.now() };
    const set = <K extends keyof NodeFacts>(k: K, v: NodeFacts[K] | undefined): void => {
      if (v !== undefined) facts[k] = v;
    };
    set('memTotal', mi?.get('MemTotal'));
    set('memFree', mi?.get('MemFree'));
    set('inactiveFile', mi?.get('Inactive(file)'));
    set('swapTotal', mi?.get('SwapTotal'));
    set('swapFree', mi?.get('SwapFree'));
    set('bootMs', uptime === undefined ? undefined : this.clock.now() - uptime * 1000);
    set('pidMax', pidMax);
    set('procs', procs);
    set('cpuNs', cpuNs);
    set('nodefs', nodefs);
    return facts;
  }

  /**
   * Node CPU and memory from `/proc` when no cgroup hierarchy is read (embedded mode): the
   * same formulas as the root cgroup (usage = MemTotal − MemFree, working set = usage −
   * Inactive(file), rate from the previous `/proc/stat` sample).
   */
  private nodeFromProc(facts: NodeFacts, update: boolean): Pick<NodeStats, 'cpu' | 'memory'> {
    const out: Pick<NodeStats, 'cpu' | 'memory'> = {};
    const time = statsTime(facts.timeMs);
    if (facts.cpuNs !== undefined) {
      const prev = this.procCpu;
      let nano = prev?.nanoCores;
      if (update) {
        if (prev !== undefined && facts.timeMs > prev.timeMs && facts.cpuNs >= prev.cpuNs) {
          nano = Math.round(((facts.cpuNs - prev.cpuNs) / ((facts.timeMs - prev.timeMs) * 1e6)) * 1e9);
        }
        this.procCpu = {
          cpuNs: facts.cpuNs,
          timeMs: facts.timeMs,
          ...(nano === undefined ? {} : { nanoCores: nano }),
        };
      }
      out.cpu = {
        time,
        usageCoreNanoSeconds: facts.cpuNs,
        ...(nano === undefined ? {} : { usageNanoCores: nano }),
      };
    }
    if (facts.memTotal !== undefined && facts.memFree !== undefined) {
      const usage = facts.memTotal - facts.memFree;
      const inactive = facts.inactiveFile ?? 0;
      const ws = usage > inactive ? usage - inactive : 0;
      out.memory = {
        time,
        availableBytes: Math.max(0, facts.memTotal - ws),
        usageBytes: usage,
        workingSetBytes: ws,
      };
    }
    return out;
  }

  /** CPU rate from the previous CRI sample of `id` (the kubelet's `getAndUpdateContainerUsageNanoCores`). */
  private criNanoCores(id: string, cpu: CriContainerStats['cpu'], update: boolean): number | undefined {
    const usage = cpu?.usageCoreNanoSeconds;
    if (cpu === undefined || usage === undefined) return undefined;
    const cached = this.criCpu.get(id);
    const usageNs = Number(usage.value);
    if (!update) return cached?.nanoCores;
    let nanoCores = cached?.nanoCores;
    if (cached !== undefined && cpu.timestamp > cached.timeNs && usageNs >= cached.usageNs) {
      nanoCores = Math.round(((usageNs - cached.usageNs) / Number(cpu.timestamp - cached.timeNs)) * 1e9);
    }
    this.criCpu.set(id, {
      usageNs,
      timeNs: cpu.timestamp,
      ...(nanoCores === undefined ? {} : { nanoCores }),
    });
    return nanoCores;
  }

  private knownPods(): Set<string> | undefined {
    const lister = this.o.podLister;
    return lister === undefined ? undefined : new Set(lister.listPods().map((p) => p.uid));
  }

  private async imageFs(
    fs: readonly FilesystemUsage[],
  ): Promise<{ stats?: FsStats; capacity?: FsCapacity; mountpoint?: string }> {
    const first = fs[0];
    if (first === undefined) return {};
    const mountpoint = first.fsId?.mountpoint;
    const capacity = this.o.embedded || !mountpoint ? undefined : await this.statfsCapacity(mountpoint);
    const stats = fsFromCri(first, capacity);
    return {
      ...(stats === undefined ? {} : { stats }),
      ...(capacity === undefined ? {} : { capacity }),
      ...(mountpoint === undefined ? {} : { mountpoint }),
    };
  }

  async get(updateStats: boolean, scope?: SummaryScope): Promise<Summary> {
    return this.build(updateStats, false, scope?.pods ?? true);
  }

  async getCpuAndMemory(): Promise<Summary> {
    return this.build(false, true, true);
  }

  private async build(updateStats: boolean, cpuAndMemoryOnly: boolean, withPods: boolean): Promise<Summary> {
    const timeMs = this.clock.now();
    await this.prepare();
    const [cache, cri, facts] = await Promise.all([
      this.cache(),
      // Pod-level CRI stats only without cgroups to read (see readCriSnapshot).
      readCriSnapshot(this.o.cri, this.errors, this.o.criTimeoutMs ?? 10_000, {
        pods: withPods,
        sandboxStats: this.housekeeping === undefined,
      }),
      this.nodeFacts(cpuAndMemoryOnly, false),
    ]);
    if (cri.listError !== undefined) throw new StatsUnavailableError(cri.listError.rpc, cri.listError.error);
    const imageFs = cpuAndMemoryOnly ? {} : await this.imageFs(cri.imageFilesystems);
    const containerFs =
      cpuAndMemoryOnly || cri.containerFilesystems.length === 0
        ? imageFs
        : await this.imageFs(cri.containerFilesystems);
    const pods = await this.podStats(
      cri,
      cache,
      facts,
      containerFs.capacity,
      updateStats,
      cpuAndMemoryOnly,
      timeMs,
    );
    const node = await this.nodeStats(
      cache,
      facts,
      imageFs.stats,
      containerFs.stats,
      cpuAndMemoryOnly,
      updateStats,
      timeMs,
    );
    return { node, pods };
  }

  private async nodeStats(
    cache: HousekeepingSnapshot | undefined,
    facts: NodeFacts,
    imageFs: FsStats | undefined,
    containerFs: FsStats | undefined,
    cpuAndMemoryOnly: boolean,
    updateStats: boolean,
    timeMs: number,
  ): Promise<NodeStats> {
    const root = cache?.cgroups.get('/');
    const node: NodeStats = {
      nodeName: this.o.nodeName,
      startTime: statsTime(facts.bootMs ?? root?.firstSeenMs ?? timeMs),
    };
    if (root !== undefined) {
      const cpu = cpuFromCgroup(root);
      const memory = memoryFromCgroup(root, facts.memTotal);
      if (cpu !== undefined) node.cpu = cpu;
      if (memory !== undefined) node.memory = memory;
    } else {
      Object.assign(node, this.nodeFromProc(facts, updateStats));
    }
    const system: ContainerStats[] = [];
    const sys = this.o.systemCgroups ?? {};
    const sysEntries: [string, string | undefined][] = [
      [SystemContainerKubelet, sys.kubelet],
      [SystemContainerRuntime, sys.runtime],
      [SystemContainerMisc, sys.misc],
      [SystemContainerPods, cache?.layout.podsRoot],
    ];
    for (const [name, cgroup] of sysEntries) {
      if (cgroup === undefined) continue;
      const info = cache?.cgroups.get(`/${cgroup.replace(/^\/+/, '')}`);
      if (info === undefined) continue;
      const c: ContainerStats = { name, startTime: statsTime(info.firstSeenMs) };
      const cpu = cpuFromCgroup(info);
      const memory = memoryFromCgroup(info);
      if (cpu !== undefined) c.cpu = cpu;
      if (memory !== undefined) c.memory = memory;
      system.push(c);
    }
    if (system.length > 0) node.systemContainers = system;
    if (facts.swapTotal !== undefined && facts.swapFree !== undefined) {
      node.swap = {
        time: statsTime(timeMs),
        swapAvailableBytes: facts.swapFree,
        swapUsageBytes: facts.swapTotal - facts.swapFree,
      };
    }
    if (cpuAndMemoryOnly) return node;
    if (root?.network !== undefined) node.network = networkFromNetDev(root.latest.timeMs, root.network);
    const io = root === undefined ? undefined : ioFromCgroup(root);
    if (io !== undefined) node.io = io;
    if (facts.nodefs !== undefined) node.fs = fsStats(timeMs, facts.nodefs, facts.nodefs);
    if (imageFs !== undefined || containerFs !== undefined) {
      node.runtime = {
        ...(imageFs === undefined ? {} : { imageFs }),
        ...(containerFs === undefined ? {} : { containerFs }),
      };
    }
    if (facts.pidMax !== undefined || facts.procs !== undefined) {
      node.rlimit = {
        time: statsTime(timeMs),
        ...(facts.pidMax === undefined ? {} : { maxpid: facts.pidMax }),
        ...(facts.procs === undefined ? {} : { curproc: facts.procs }),
      };
    }
    return node;
  }

  private async podStats(
    cri: CriSnapshot,
    cache: HousekeepingSnapshot | undefined,
    facts: NodeFacts,
    containerFsCapacity: FsCapacity | undefined,
    updateStats: boolean,
    cpuAndMemoryOnly: boolean,
    timeMs: number,
  ): Promise<PodStats[]> {
    const known = this.knownPods();
    const out: PodStats[] = [];
    const logsDir = this.o.podLogsDirectory ?? '/var/log/pods';
    await Promise.all(
      cri.sandboxes.map(async (sandbox, index) => {
        const meta = sandbox.metadata;
        if (meta === undefined || (known !== undefined && !known.has(meta.uid))) return;
        const podCgroups = cache?.layout.pods.get(meta.uid);
        const podDir = join(logsDir, `${meta.namespace}_${meta.name}_${meta.uid}`);
        const containers = await Promise.all(
          (cri.containersBySandbox.get(sandbox.id) ?? []).map((c) =>
            this.containerStats(c, cri, cache, podCgroups?.containers.get(c.id), facts, containerFsCapacity, {
              updateStats,
              cpuAndMemoryOnly,
              logDir: join(podDir, c.metadata?.name ?? ''),
            }),
          ),
        );
        const pod: PodStats = {
          podRef: { name: meta.name, namespace: meta.namespace, uid: meta.uid },
          startTime: statsTime(nsToMs(sandbox.createdAt)),
          containers,
        };
        this.addPodCpuMemory(
          pod,
          sandbox,
          cri,
          podCgroups === undefined ? undefined : cache?.cgroups.get(podCgroups.path),
          timeMs,
        );
        if (!cpuAndMemoryOnly) {
          this.addPodNetworkAndProcesses(
            pod,
            sandbox,
            cri,
            podCgroups === undefined ? undefined : cache?.cgroups.get(podCgroups.path),
          );
          const volumes = this.volumeStats?.podVolumeStats(meta.uid);
          const all =
            volumes === undefined ? [] : [...volumes.ephemeralVolumes, ...volumes.persistentVolumes];
          if (all.length > 0) pod.volume = all;
          const eph = ephemeralStorage(containers, volumes?.ephemeralVolumes ?? [], facts.nodefs, timeMs);
          if (eph !== undefined) pod['ephemeral-storage'] = eph;
        }
        out[index] = pod;
      }),
    );
    return out.filter((p) => p !== undefined);
  }

  private addPodCpuMemory(
    pod: PodStats,
    sandbox: PodSandbox,
    cri: CriSnapshot,
    info: CgroupInfo | undefined,
    timeMs: number,
  ): void {
    if (info !== undefined) {
      const cpu = cpuFromCgroup(info);
      const memory = memoryFromCgroup(info);
      const swap = swapFromCgroup(info);
      if (cpu !== undefined) pod.cpu = cpu;
      if (memory !== undefined) pod.memory = memory;
      if (swap !== undefined) pod.swap = swap;
      if (cpu !== undefined && memory !== undefined) return;
    }
    const linux = cri.sandboxStats.get(sandbox.id)?.linux;
    const cpu = cpuFromCri(linux?.cpu);
    const memory = memoryFromCri(linux?.memory);
    if (pod.cpu === undefined && cpu !== undefined) pod.cpu = cpu;
    if (pod.memory === undefined && memory !== undefined) pod.memory = memory;
    if (pod.cpu !== undefined && pod.memory !== undefined) return;
    const sum = sumCpuMemory(pod.containers, timeMs);
    if (pod.cpu === undefined && sum.cpu !== undefined) pod.cpu = sum.cpu;
    if (pod.memory === undefined && sum.memory !== undefined) pod.memory = sum.memory;
  }

  private addPodNetworkAndProcesses(
    pod: PodStats,
    sandbox: PodSandbox,
    cri: CriSnapshot,
    info: CgroupInfo | undefined,
  ): void {
    const linux = cri.sandboxStats.get(sandbox.id)?.linux;
    if (info?.network !== undefined) pod.network = networkFromNetDev(info.latest.timeMs, info.network);
    else {
      const network = networkFromCri(linux?.network);
      if (network !== undefined) pod.network = network;
    }
    const io = (info && ioFromCgroup(info)) ?? ioFromCri(linux?.io);
    if (io !== undefined) pod.io = io;
    if (info?.latest.pids !== undefined) pod.process_stats = { process_count: info.latest.pids };
    else if (linux?.process?.processCount !== undefined) {
      pod.process_stats = { process_count: Number(linux.process.processCount.value) };
    }
  }

  private async containerStats(
    c: Container,
    cri: CriSnapshot,
    cache: HousekeepingSnapshot | undefined,
    cgroupPath: string | undefined,
    facts: NodeFacts,
    containerFsCapacity: FsCapacity | undefined,
    opts: { updateStats: boolean; cpuAndMemoryOnly: boolean; logDir: string },
  ): Promise<ContainerStats> {
    const out: ContainerStats = {
      name: c.metadata?.name ?? '',
      startTime: statsTime(nsToMs(c.createdAt)),
    };
    const crs = cri.containerStats.get(c.id);
    const info = cgroupPath === undefined ? undefined : cache?.cgroups.get(cgroupPath);
    const cpu =
      (info && cpuFromCgroup(info)) ??
      cpuFromCri(crs?.cpu, this.criNanoCores(c.id, crs?.cpu, opts.updateStats));
    const memory = (info && memoryFromCgroup(info)) ?? memoryFromCri(crs?.memory);
    const swap = (info && swapFromCgroup(info)) ?? swapFromCri(crs?.swap);
    if (cpu !== undefined) out.cpu = cpu;
    if (memory !== undefined) out.memory = memory;
    if (swap !== undefined) out.swap = swap;
    if (opts.cpuAndMemoryOnly) return out;
    const io = (info && ioFromCgroup(info)) ?? ioFromCri(crs?.io);
    if (io !== undefined) out.io = io;
    const rootfs = fsFromCri(crs?.writableLayer, containerFsCapacity);
    if (rootfs !== undefined) out.rootfs = rootfs;
    if (!this.o.embedded) {
      const du = await diskUsage(opts.logDir);
      if (du === undefined) this.errors.record('du', opts.logDir, 'log directory missing');
      else out.logs = fsStats(this.clock.now(), facts.nodefs, du);
    }
    return out;
  }

  async cadvisorSnapshot(): Promise<CadvisorSnapshot> {
    const [cache, cri, facts] = await Promise.all([
      this.cache(),
      readCriSnapshot(this.o.cri, this.errors, this.o.criTimeoutMs ?? 10_000, {
        pods: true,
        sandboxStats: false,
      }),
      this.nodeFacts(false, true),
    ]);
    const containers: CadvisorContainer[] = [];
    if (cache === undefined) {
      return { timeMs: this.clock.now(), containers, scrapeError: !cri.complete };
    }
    const podByUid = new Map<string, { name: string; namespace: string }>();
    const criContainers = new Map<string, Container>();
    for (const s of cri.sandboxes) if (s.metadata) podByUid.set(s.metadata.uid, s.metadata);
    for (const list of cri.containersBySandbox.values()) for (const c of list) criContainers.set(c.id, c);
    const podOfPath = new Map<string, { name: string; namespace: string }>();
    const containerOfPath = new Map<string, string>();
    for (const [uid, pod] of cache.layout.pods) {
      const ref = podByUid.get(uid);
      if (ref !== undefined) podOfPath.set(pod.path, ref);
      for (const [id, path] of pod.containers) containerOfPath.set(path, id);
    }
    const imageDevice = (id: string): CadvisorFilesystem[] => {
      const layer = cri.containerStats.get(id)?.writableLayer;
      const mountpoint = layer?.fsId?.mountpoint;
      if (layer?.usedBytes === undefined || mountpoint === undefined) return [];
      return [
        {
          device: deviceOfMount(facts.mounts, mountpoint),
          usageBytes: Number(layer.usedBytes.value),
          limitBytes: 0,
          inodes: 0,
          inodesFree: 0,
        },
      ];
    };
    for (const info of cache.cgroups.values()) {
      const id = containerOfPath.get(info.path);
      const c = id === undefined ? undefined : criContainers.get(id);
      const pod = podOfPath.get(info.path);
      const filesystems: CadvisorFilesystem[] = id === undefined ? [] : imageDevice(id);
      if (info.path === '/' && facts.nodefs !== undefined) {
        filesystems.push({
          device: deviceOfMount(facts.mounts, this.o.rootDirectory ?? '/var/lib/kubelet'),
          usageBytes: facts.nodefs.usedBytes,
          limitBytes: facts.nodefs.capacityBytes,
          inodes: facts.nodefs.inodes,
          inodesFree: facts.nodefs.inodesFree,
        });
      }
      containers.push({
        id: info.path,
        name: id ?? '',
        image: c?.image?.image ?? '',
        pod: c?.labels[POD_NAME_LABEL] ?? pod?.name ?? '',
        namespace: c?.labels[POD_NAMESPACE_LABEL] ?? pod?.namespace ?? '',
        container: c?.labels[CONTAINER_NAME_LABEL] ?? '',
        info,
        filesystems,
        startTimeMs:
          c !== undefined
            ? nsToMs(c.createdAt)
            : info.path === '/'
              ? (facts.bootMs ?? info.firstSeenMs)
              : info.firstSeenMs,
      });
    }
    return { timeMs: cache.timeMs, containers, scrapeError: !cri.complete };
  }
}

function deviceOfMount(mounts: readonly MountEntry[], path: string): string {
  let best: MountEntry | undefined;
  for (const m of mounts) {
    const prefix = m.mountPoint === '/' ? '/' : `${m.mountPoint}/`;
    if (
      (path === m.mountPoint || path.startsWith(prefix)) &&
      (best === undefined || m.mountPoint.length >= best.mountPoint.length)
    ) {
      best = m;
    }
  }
  return best?.source ?? path;
}

/**
 * The pod's ephemeral storage: writable layers, logs and the ephemeral volumes (upstream
 * `calcEphemeralStorage`; the `/etc/hosts` file is not counted, see README).
 */
function ephemeralStorage(
  containers: readonly ContainerStats[],
  volumes: readonly VolumeStats[],
  nodefs: FsCapacity | undefined,
  timeMs: number,
): FsStats | undefined {
  let used = 0;
  let inodes = 0;
  let seen = false;
  for (const fs of [...containers.flatMap((c) => [c.rootfs, c.logs]), ...volumes]) {
    if (fs === undefined) continue;
    seen = true;
    used += fs.usedBytes ?? 0;
    inodes += fs.inodesUsed ?? 0;
  }
  return seen ? fsStats(timeMs, nodefs, { usedBytes: used, inodesUsed: inodes }) : undefined;
}

/**
 * Creates the stats provider the kubelet server and the eviction manager read.
 *
 * @throws {@link StatsOptionsError} for an empty node name or a housekeeping interval under 1 s.
 *
 * @example
 * ```ts
 * const stats = createStatsProvider({ nodeName: 'node-1', cri, podLister });
 * await stats.start();
 * const summary = await stats.get(true);
 * ```
 */
export function createStatsProvider(options: StatsProviderOptions): StatsProvider {
  return new Provider(options);
}

/**
 * Conversions into Summary API shapes from cgroup samples, CRI stats, statfs and `net/dev`,
 * with the kubelet's rules (`cadvisorInfoToCPUandMemoryStats`, `makeContainerStats`,
 * `cadvisorInfoToNetworkStats`): `availableBytes = limit − workingSet` only under a limit, the
 * default interface `eth0` inline, filesystem capacity from the filesystem the usage lives on.
 *
 * @module
 */
import type {
  CpuUsage,
  FilesystemUsage,
  IoUsage,
  MemoryUsage,
  NetworkUsage,
  PsiStats,
  SwapUsage,
} from '@nodeagent/cri';
import type { FsCapacity } from './filesystem.js';
import type { CgroupInfo } from './housekeeping.js';
import type { NetDevCounters } from './procfs.js';
import type {
  CPUStats,
  FsStats,
  InterfaceStats,
  IOStats,
  MemoryStats,
  NetworkStats,
  PSIStats,
  StatsTime,
  SwapStats,
} from './summary-types.js';

/** The kubelet's default network interface (`network.DefaultInterfaceName`). */
export const DEFAULT_INTERFACE_NAME = 'eth0';

/** `metav1.Time` JSON: RFC 3339, whole seconds, UTC. */
export function statsTime(ms: number): StatsTime {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** ns (bigint, CRI) → ms. */
export function nsToMs(ns: bigint): number {
  return Number(ns / 1_000_000n);
}

/** Copies the defined entries only (exactOptionalPropertyTypes). */
function defined<T extends object>(o: { [K in keyof T]: T[K] | undefined }): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** CPU of a cgroup from the housekeeping cache. */
export function cpuFromCgroup(info: CgroupInfo): CPUStats | undefined {
  if (info.latest.cpuUsageNs === undefined) return undefined;
  return defined<CPUStats>({
    time: statsTime(info.latest.timeMs),
    usageNanoCores: info.usageNanoCores,
    usageCoreNanoSeconds: info.latest.cpuUsageNs,
    psi: info.latest.cpuPressure,
  });
}

/** I/O pressure of a cgroup. */
export function ioFromCgroup(info: CgroupInfo): IOStats | undefined {
  const psi = info.latest.ioPressure;
  return psi === undefined ? undefined : { time: statsTime(info.latest.timeMs), psi };
}

/** CRI's `PsiStats` (capitalised fields, µs totals) as the Summary's. */
export function psiFromCri(psi: PsiStats | undefined): PSIStats | undefined {
  if (psi?.Some === undefined) return undefined;
  const data = (d: PsiStats['Some']) => ({
    total: Number(d?.Total ?? 0n),
    avg10: d?.Avg10 ?? 0,
    avg60: d?.Avg60 ?? 0,
    avg300: d?.Avg300 ?? 0,
  });
  return { some: data(psi.Some), full: data(psi.Full) };
}

/** I/O pressure from CRI. */
export function ioFromCri(io: IoUsage | undefined): IOStats | undefined {
  const psi = psiFromCri(io?.psi);
  return io === undefined || psi === undefined ? undefined : { time: statsTime(nsToMs(io.timestamp)), psi };
}

/** Memory of a cgroup; `limitBytes` overrides the cgroup's limit (the node's capacity for `/`). */
export function memoryFromCgroup(info: CgroupInfo, limitBytes?: number): MemoryStats | undefined {
  const s = info.latest;
  if (s.memoryUsageBytes === undefined) return undefined;
  const limit = limitBytes ?? s.memoryLimitBytes;
  const ws = s.workingSetBytes;
  return defined<MemoryStats>({
    time: statsTime(s.timeMs),
    availableBytes: limit !== undefined && ws !== undefined ? Math.max(0, limit - ws) : undefined,
    usageBytes: s.memoryUsageBytes,
    workingSetBytes: ws,
    rssBytes: s.rssBytes,
    pageFaults: s.pgfault,
    majorPageFaults: s.pgmajfault,
    psi: s.memoryPressure,
  });
}

/** Swap of a cgroup. */
export function swapFromCgroup(info: CgroupInfo): SwapStats | undefined {
  const s = info.latest;
  if (s.swapBytes === undefined) return undefined;
  return defined<SwapStats>({
    time: statsTime(s.timeMs),
    swapUsageBytes: s.swapBytes,
    swapAvailableBytes:
      s.memorySwapLimitBytes === undefined ? undefined : Math.max(0, s.memorySwapLimitBytes - s.swapBytes),
  });
}

const u64 = (v: { value: bigint } | undefined): number | undefined =>
  v === undefined ? undefined : Number(v.value);

/** CPU from CRI stats; `nanoCores` is the rate computed by the caller when CRI has none. */
export function cpuFromCri(cpu: CpuUsage | undefined, nanoCores?: number): CPUStats | undefined {
  if (cpu === undefined) return undefined;
  return defined<CPUStats>({
    time: statsTime(nsToMs(cpu.timestamp)),
    usageNanoCores: u64(cpu.usageNanoCores) ?? nanoCores,
    usageCoreNanoSeconds: u64(cpu.usageCoreNanoSeconds),
    psi: psiFromCri(cpu.psi),
  });
}

/** Memory from CRI stats. */
export function memoryFromCri(memory: MemoryUsage | undefined): MemoryStats | undefined {
  if (memory === undefined) return undefined;
  return defined<MemoryStats>({
    time: statsTime(nsToMs(memory.timestamp)),
    availableBytes: u64(memory.availableBytes),
    usageBytes: u64(memory.usageBytes),
    workingSetBytes: u64(memory.workingSetBytes),
    rssBytes: u64(memory.rssBytes),
    pageFaults: u64(memory.pageFaults),
    majorPageFaults: u64(memory.majorPageFaults),
    psi: psiFromCri(memory.psi),
  });
}

/** Swap from CRI stats. */
export function swapFromCri(swap: SwapUsage | undefined): SwapStats | undefined {
  if (swap === undefined) return undefined;
  return defined<SwapStats>({
    time: statsTime(nsToMs(swap.timestamp)),
    swapAvailableBytes: u64(swap.swapAvailableBytes),
    swapUsageBytes: u64(swap.swapUsageBytes),
  });
}

/** Capacity fields of a filesystem plus the usage measured on it. */
export function fsStats(
  timeMs: number,
  capacity: FsCapacity | undefined,
  used: { usedBytes?: number | undefined; inodesUsed?: number | undefined },
): FsStats {
  return defined<FsStats>({
    time: statsTime(timeMs),
    availableBytes: capacity?.availableBytes,
    capacityBytes: capacity?.capacityBytes,
    usedBytes: used.usedBytes,
    inodesFree: capacity?.inodesFree,
    inodes: capacity?.inodes,
    inodesUsed: used.inodesUsed,
  });
}

/** A CRI filesystem usage (writable layer, image filesystem) on a filesystem of known capacity. */
export function fsFromCri(
  usage: FilesystemUsage | undefined,
  capacity: FsCapacity | undefined,
): FsStats | undefined {
  if (usage === undefined) return undefined;
  return fsStats(nsToMs(usage.timestamp), capacity, {
    usedBytes: u64(usage.usedBytes),
    inodesUsed: u64(usage.inodesUsed),
  });
}

function interfaceStats(c: NetDevCounters): InterfaceStats {
  return { name: c.name, rxBytes: c.rxBytes, rxErrors: c.rxErrors, txBytes: c.txBytes, txErrors: c.txErrors };
}

/** Network from `net/dev`: `eth0` inline (empty when absent, as upstream), every interface listed. */
export function networkFromNetDev(timeMs: number, counters: readonly NetDevCounters[]): NetworkStats {
  const def = counters.find((c) => c.name === DEFAULT_INTERFACE_NAME);
  return {
    time: statsTime(timeMs),
    ...(def === undefined ? { name: '' } : interfaceStats(def)),
    interfaces: counters.map(interfaceStats),
  };
}

/** Network from CRI `PodSandboxStats`. */
export function networkFromCri(network: NetworkUsage | undefined): NetworkStats | undefined {
  if (network === undefined) return undefined;
  const iface = (n: NetworkUsage['interfaces'][number]): InterfaceStats =>
    defined<InterfaceStats>({
      name: n.name,
      rxBytes: u64(n.rxBytes),
      rxErrors: u64(n.rxErrors),
      txBytes: u64(n.txBytes),
      txErrors: u64(n.txErrors),
    });
  return {
    time: statsTime(nsToMs(network.timestamp)),
    ...(network.defaultInterface === undefined ? { name: '' } : iface(network.defaultInterface)),
    interfaces: network.interfaces.map(iface),
  };
}

/** Adds CPU and memory of containers (the kubelet's pod fallback when the pod cgroup is unknown). */
export function sumCpuMemory(
  containers: readonly { cpu?: CPUStats; memory?: MemoryStats }[],
  timeMs: number,
): { cpu?: CPUStats; memory?: MemoryStats } {
  let cpuSeen = false;
  let memSeen = false;
  let nano = 0;
  let ns = 0;
  let usage = 0;
  let ws = 0;
  let rss = 0;
  let pf = 0;
  let mpf = 0;
  for (const c of containers) {
    if (c.cpu !== undefined) {
      cpuSeen = true;
      nano += c.cpu.usageNanoCores ?? 0;
      ns += c.cpu.usageCoreNanoSeconds ?? 0;
    }
    if (c.memory !== undefined) {
      memSeen = true;
      usage += c.memory.usageBytes ?? 0;
      ws += c.memory.workingSetBytes ?? 0;
      rss += c.memory.rssBytes ?? 0;
      pf += c.memory.pageFaults ?? 0;
      mpf += c.memory.majorPageFaults ?? 0;
    }
  }
  const time = statsTime(timeMs);
  return {
    ...(cpuSeen ? { cpu: { time, usageNanoCores: nano, usageCoreNanoSeconds: ns } } : {}),
    ...(memSeen
      ? {
          memory: {
            time,
            usageBytes: usage,
            workingSetBytes: ws,
            rssBytes: rss,
            pageFaults: pf,
            majorPageFaults: mpf,
          },
        }
      : {}),
  };
}

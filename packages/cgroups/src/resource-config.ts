/**
 * The values the kubelet writes into its cgroups (upstream `cm/helpers_linux.go`,
 * `ResourceConfigForPod`, `qos_container_manager_linux.go`, `getCgroupConfigInternal`):
 * CPU shares from requests, CFS quota from limits, memory and pids limits, huge page limits,
 * and the cgroup v2 `cpu.weight` conversion the kubelet applies to shares.
 *
 * @module
 */
import { milliValue } from '@nodeagent/core';
import { podLimitsMilli, podQosClass, podRequestsMilli } from '@nodeagent/kubecontainer';
import type { CgroupPod } from './pod-shape.js';

/** Smallest cpu.shares (the kernel's). */
export const MIN_SHARES = 2n;
/** Largest cpu.shares (the kernel's). */
export const MAX_SHARES = 262_144n;
/** Shares of one CPU. */
export const SHARES_PER_CPU = 1024n;
/** Default CFS period, µs (100 ms). */
export const QUOTA_PERIOD_US = 100_000n;
/** Smallest CFS quota, µs (1 ms). */
export const MIN_QUOTA_PERIOD_US = 1_000n;
/** Huge page limit the QoS cgroups get: effectively unbounded (`1 << 62`). */
export const UNBOUNDED_HUGEPAGE_LIMIT = 1n << 62n;

/**
 * What the kubelet sets on one cgroup (upstream `ResourceConfig`); an absent field is left
 * alone. Numbers are bigints: bytes, µs, shares.
 */
export interface ResourceConfig {
  /** cpu.shares (v1); on v2 written as `cpu.weight` through {@link cpuSharesToWeight}. */
  readonly cpuShares?: bigint;
  /** CFS quota, µs; -1 means unlimited. */
  readonly cpuQuota?: bigint;
  /** CFS period, µs. */
  readonly cpuPeriod?: bigint;
  /** Memory limit, bytes. */
  readonly memory?: bigint;
  /** pids.max; a value ≤ 0 writes `max`. */
  readonly pidsLimit?: bigint;
  /** Huge page limits: page size in bytes → limit in bytes. Sizes the machine has but this map lacks get 0. */
  readonly hugePageLimits?: ReadonlyMap<bigint, bigint>;
  /** cpuset.cpus (e.g. `0-3`). */
  readonly cpuSet?: string;
  /** Raw cgroup v2 files to write (e.g. `memory.min`), v2 only. */
  readonly unified?: Readonly<Record<string, string>>;
}

/** cpu.shares for a CPU request in millicores (upstream `MilliCPUToShares`): 2 for 0, clamped to [2, 262144]. */
export function milliCpuToShares(milliCpu: bigint): bigint {
  if (milliCpu === 0n) return MIN_SHARES;
  const shares = (milliCpu * SHARES_PER_CPU) / 1000n;
  if (shares < MIN_SHARES) return MIN_SHARES;
  return shares > MAX_SHARES ? MAX_SHARES : shares;
}

/** CFS quota (µs) for a CPU limit in millicores (upstream `MilliCPUToQuota`): 0 when none, at least 1000. */
export function milliCpuToQuota(milliCpu: bigint, periodUs: bigint = QUOTA_PERIOD_US): bigint {
  if (milliCpu === 0n) return 0n;
  const quota = (milliCpu * periodUs) / 1000n;
  return quota < MIN_QUOTA_PERIOD_US ? MIN_QUOTA_PERIOD_US : quota;
}

/**
 * cgroup v2 `cpu.weight` for v1 shares as the kubelet converts them (upstream `getCPUWeight`,
 * KEP 2254): `1 + ((shares − 2) × 9999) / 262142`, 10000 from 262144 shares up.
 */
export function cpuSharesToWeight(shares: bigint): bigint {
  if (shares >= MAX_SHARES) return 10_000n;
  const s = shares < MIN_SHARES ? MIN_SHARES : shares;
  return 1n + ((s - 2n) * 9_999n) / 262_142n;
}

const HUGEPAGES_PREFIX = 'hugepages-';

const toValue = (milli: bigint): bigint => (milli <= 0n ? milli / 1000n : (milli + 999n) / 1000n);

/** Huge page limits from a resource list in milli-units (upstream `HugePageLimits`): page bytes → bytes. */
export function hugePageLimits(list: ReadonlyMap<string, bigint>): Map<bigint, bigint> {
  const out = new Map<bigint, bigint>();
  for (const [name, milli] of list) {
    if (!name.startsWith(HUGEPAGES_PREFIX)) continue;
    const page = toValue(milliValue(name.slice(HUGEPAGES_PREFIX.length)));
    out.set(page, (out.get(page) ?? 0n) + toValue(milli));
  }
  return out;
}

/** Options of {@link resourceConfigForPod}. */
export interface PodResourceOptions {
  /** Enforce CPU limits with CFS quota (kubelet `cpuCFSQuota`); off writes quota -1. @default true */
  readonly cpuCfsQuota?: boolean;
  /** CFS period, µs (kubelet `cpuCFSQuotaPeriod`). @default 100000 */
  readonly cpuCfsQuotaPeriodUs?: bigint;
  /** pids.max of every pod cgroup (kubelet `podPidsLimit`); ≤ 0 sets none. @default -1 */
  readonly podPidsLimit?: bigint;
}

/**
 * The pod cgroup's values (upstream `ResourceConfigForPod` + `podPidsLimit` from
 * `EnsureExists`): shares from the summed CPU requests; Guaranteed also gets quota, period and
 * the memory limit; Burstable gets quota/period only when every container (and init step) has a
 * CPU limit and memory only when every one has a memory limit; BestEffort gets 2 shares. Pod
 * overhead is included, huge page requests become limits.
 */
export function resourceConfigForPod(pod: CgroupPod, options: PodResourceOptions = {}): ResourceConfig {
  const period = options.cpuCfsQuotaPeriodUs ?? QUOTA_PERIOD_US;
  let cpuLimitsDeclared = true;
  let memoryLimitsDeclared = true;
  const reqs = podRequestsMilli(pod);
  const limits = podLimitsMilli(pod, (step) => {
    if ((step.get('cpu') ?? 0n) === 0n) cpuLimitsDeclared = false;
    if ((step.get('memory') ?? 0n) === 0n) memoryLimitsDeclared = false;
  });
  const cpuShares = milliCpuToShares(reqs.get('cpu') ?? 0n);
  const cpuQuota = (options.cpuCfsQuota ?? true) ? milliCpuToQuota(limits.get('cpu') ?? 0n, period) : -1n;
  const memory = toValue(limits.get('memory') ?? 0n);
  const qos = podQosClass(pod);
  const pids =
    options.podPidsLimit !== undefined && options.podPidsLimit > 0n
      ? { pidsLimit: options.podPidsLimit }
      : {};
  const hugePages = { hugePageLimits: hugePageLimits(reqs) };
  if (qos === 'Guaranteed') {
    return { cpuShares, cpuQuota, cpuPeriod: period, memory, ...hugePages, ...pids };
  }
  if (qos === 'Burstable') {
    return {
      cpuShares,
      ...(cpuLimitsDeclared ? { cpuQuota, cpuPeriod: period } : {}),
      ...(memoryLimitsDeclared ? { memory } : {}),
      ...hugePages,
      ...pids,
    };
  }
  return { cpuShares: MIN_SHARES, ...hugePages, ...pids };
}

/**
 * The QoS cgroups' values (upstream `qosContainerManagerImpl.UpdateCgroups`): burstable gets
 * shares from the summed CPU requests of the active Burstable pods, besteffort always 2; every
 * QoS tier (kubepods itself included) keeps huge pages unbounded.
 */
export function qosResourceConfigs(
  activePods: readonly CgroupPod[],
  hugePageSizesBytes: readonly bigint[],
): {
  readonly guaranteed: ResourceConfig;
  readonly burstable: ResourceConfig;
  readonly besteffort: ResourceConfig;
} {
  let burstableMilli = 0n;
  for (const pod of activePods) {
    if (podQosClass(pod) !== 'Burstable') continue;
    burstableMilli += podRequestsMilli(pod).get('cpu') ?? 0n;
  }
  const unbounded = new Map(hugePageSizesBytes.map((s) => [s, UNBOUNDED_HUGEPAGE_LIMIT] as const));
  return {
    guaranteed: { hugePageLimits: unbounded },
    burstable: { cpuShares: milliCpuToShares(burstableMilli), hugePageLimits: unbounded },
    besteffort: { cpuShares: MIN_SHARES, hugePageLimits: unbounded },
  };
}

/**
 * Node allocatable as the kubelet enforces it on `kubepods` (upstream
 * `getNodeAllocatableAbsoluteImpl`): capacity − system-reserved − kube-reserved per resource,
 * clamped at 0, in milli-units. The hard eviction threshold is NOT subtracted here: it only
 * lowers the allocatable reported in the Node status.
 */
export function nodeAllocatableAbsolute(
  capacity: Readonly<Record<string, string>>,
  systemReserved: Readonly<Record<string, string>> = {},
  kubeReserved: Readonly<Record<string, string>> = {},
): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const [name, q] of Object.entries(capacity)) {
    let v = milliValue(q) - milliValue(systemReserved[name]) - milliValue(kubeReserved[name]);
    if (v < 0n) v = 0n;
    out.set(name, v);
  }
  return out;
}

/**
 * The `kubepods` values for a resource list (upstream `getCgroupConfigInternal`, not
 * compressible-only): memory limit, cpu shares from cpu, pids.max from `pid`, huge page limits.
 */
export function nodeAllocatableResourceConfig(
  list: ReadonlyMap<string, bigint>,
  cpuSet?: string,
): ResourceConfig {
  const cpu = list.get('cpu');
  const memory = list.get('memory');
  const pid = list.get('pid');
  return {
    ...(memory !== undefined ? { memory: toValue(memory) } : {}),
    ...(cpu !== undefined ? { cpuShares: milliCpuToShares(cpu) } : {}),
    ...(pid !== undefined ? { pidsLimit: toValue(pid) } : {}),
    hugePageLimits: hugePageLimits(list),
    ...(cpuSet !== undefined ? { cpuSet } : {}),
  };
}

/** Bytes of a huge page size as the kernel names it in cgroup files (upstream `HugePageUnitSizeFromByteSize`): 2097152 → `2MB`. */
export function hugePageSizeName(bytes: bigint): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let size = bytes;
  let i = 0;
  while (size >= 1024n && size % 1024n === 0n && i < units.length - 1) {
    size /= 1024n;
    i += 1;
  }
  return `${size}${units[i]}`;
}

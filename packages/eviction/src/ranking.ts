/**
 * Ranking of active pods for eviction (upstream `rankMemoryPressure`, `rankDiskPressureFunc`,
 * `rankPIDPressure`): a lexicographic chain of comparators, earlier = evicted first. A pod
 * without stats ranks first in every stats-based comparator. The sort is stable, so pods
 * that tie keep the order of the active-pods list (Go's `sort.Sort` leaves ties unordered).
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podRequests } from '@nodeagent/admission';
import type { FsStats, PodStats } from '@nodeagent/stats';
import type { PodStatsLookup } from './observations.js';
import type { ReclaimedResource, Signal } from './signals.js';

/** Orders pods for one signal; returns a new array, first = first to evict. */
export type RankFunc = (pods: readonly V1Pod[], stats: PodStatsLookup) => V1Pod[];

/** Which filesystem stats count toward a pod's disk usage (upstream `fsStatsType`). */
export type FsStatsType = 'root' | 'logs' | 'localVolumeSource';

type Cmp = (a: V1Pod, b: V1Pod) => number;

/** true before false. */
function cmpBool(a: boolean, b: boolean): number {
  if (a === b) return 0;
  return a ? -1 : 1;
}

function cmpBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function orderedBy(...cmps: Cmp[]): (pods: readonly V1Pod[]) => V1Pod[] {
  return (pods) =>
    [...pods].sort((a, b) => {
      for (const c of cmps) {
        const r = c(a, b);
        if (r !== 0) return r;
      }
      return 0;
    });
}

function uid(pod: V1Pod): string {
  return pod.metadata?.uid ?? '';
}

/** The pod's priority (`spec.priority`, 0 when unset). */
export function podPriority(pod: V1Pod): number {
  return pod.spec?.priority ?? 0;
}

/** Lower priority first (upstream `priority`). */
const priority: Cmp = (a, b) => {
  const pa = podPriority(a);
  const pb = podPriority(b);
  return pa === pb ? 0 : pa > pb ? 1 : -1;
};

/** The pod's request of `resource` in bytes/count (0 for inodes and pids). */
export function podRequest(pod: V1Pod, resource: ReclaimedResource): bigint {
  if (resource === 'inodes' || resource === 'pids') return 0n;
  return podRequests(pod).get(resource) ?? 0n;
}

/** The pod's working set (0 when absent; upstream `memoryUsage`). */
export function podMemoryUsage(stats: PodStats): bigint {
  return BigInt(Math.trunc(stats.memory?.workingSetBytes ?? 0));
}

function usedBytes(fs: FsStats | undefined): bigint {
  return BigInt(Math.trunc(fs?.usedBytes ?? 0));
}
function usedInodes(fs: FsStats | undefined): bigint {
  return BigInt(Math.trunc(fs?.inodesUsed ?? 0));
}

/** Names of the pod's volumes on local disk (upstream `localVolumeNames`). */
export function localVolumeNames(pod: V1Pod): string[] {
  return (pod.spec?.volumes ?? [])
    .filter(
      (v) =>
        v.hostPath !== undefined ||
        (v.emptyDir !== undefined && v.emptyDir.medium !== 'Memory') ||
        v.configMap !== undefined ||
        v.gitRepo !== undefined,
    )
    .map((v) => v.name);
}

/** Disk bytes or inodes a pod uses on the measured filesystems (upstream `podDiskUsage`). */
export function podDiskUsage(
  stats: PodStats,
  pod: V1Pod,
  measure: readonly FsStatsType[],
  resource: 'ephemeral-storage' | 'inodes',
): bigint {
  const of = resource === 'inodes' ? usedInodes : usedBytes;
  let total = 0n;
  for (const c of stats.containers) {
    if (measure.includes('root')) total += of(c.rootfs);
    if (measure.includes('logs')) total += of(c.logs);
  }
  if (measure.includes('localVolumeSource')) {
    for (const name of localVolumeNames(pod)) {
      const v = stats.volume?.find((s) => s.name === name);
      if (v !== undefined) total += of(v);
    }
  }
  return total;
}

function statsCmp(
  stats: PodStatsLookup,
  usage: (s: PodStats, p: V1Pod) => bigint,
  f: (a: bigint, b: bigint) => number,
): Cmp {
  return (a, b) => {
    const sa = stats(uid(a));
    const sb = stats(uid(b));
    if (sa === undefined || sb === undefined) return cmpBool(sa === undefined, sb === undefined);
    return f(usage(sa, a), usage(sb, b));
  };
}

/** Pods using more than they request first. */
function exceedsRequests(
  stats: PodStatsLookup,
  resource: ReclaimedResource,
  usage: (s: PodStats, p: V1Pod) => bigint,
): Cmp {
  return (a, b) => {
    const sa = stats(uid(a));
    const sb = stats(uid(b));
    if (sa === undefined || sb === undefined) return cmpBool(sa === undefined, sb === undefined);
    return cmpBool(usage(sa, a) > podRequest(a, resource), usage(sb, b) > podRequest(b, resource));
  };
}

/** Larger usage above request first. */
function usageAboveRequest(
  stats: PodStatsLookup,
  resource: ReclaimedResource,
  usage: (s: PodStats, p: V1Pod) => bigint,
): Cmp {
  return statsCmp(
    stats,
    (s, p) => usage(s, p) - podRequest(p, resource),
    (a, b) => cmpBig(b, a),
  );
}

/** Memory pressure: exceeds requests, then lower priority, then larger working set above request. */
export const rankMemoryPressure: RankFunc = (pods, stats) => {
  const usage = (s: PodStats): bigint => podMemoryUsage(s);
  return orderedBy(
    exceedsRequests(stats, 'memory', usage),
    priority,
    usageAboveRequest(stats, 'memory', usage),
  )(pods);
};

/** Disk pressure over the measured filesystems: exceeds requests, priority, usage above request. */
export function rankDiskPressureFunc(
  measure: readonly FsStatsType[],
  resource: 'ephemeral-storage' | 'inodes',
): RankFunc {
  return (pods, stats) => {
    const usage = (s: PodStats, p: V1Pod): bigint => podDiskUsage(s, p, measure, resource);
    return orderedBy(
      exceedsRequests(stats, resource, usage),
      priority,
      usageAboveRequest(stats, resource, usage),
    )(pods);
  };
}

/** The pod's process count (0 when absent). */
export function podProcessCount(stats: PodStats): bigint {
  return BigInt(Math.trunc(stats.process_stats?.process_count ?? 0));
}

/** PID pressure: lower priority, then more processes. */
export const rankPIDPressure: RankFunc = (pods, stats) =>
  orderedBy(
    priority,
    statsCmp(
      stats,
      (s) => podProcessCount(s),
      (a, b) => cmpBig(b, a),
    ),
  )(pods);

/**
 * The rank function per signal (upstream `buildSignalToRankFunc`): on one filesystem every
 * disk signal counts rootfs, logs and local volumes; with a dedicated imagefs, nodefs counts
 * logs and local volumes and imagefs/containerfs count rootfs.
 */
export function buildSignalToRankFunc(dedicatedImageFs: boolean): Record<Signal, RankFunc> {
  const all: FsStatsType[] = ['root', 'logs', 'localVolumeSource'];
  const node: FsStatsType[] = dedicatedImageFs ? ['logs', 'localVolumeSource'] : all;
  const image: FsStatsType[] = dedicatedImageFs ? ['root'] : all;
  return {
    'memory.available': rankMemoryPressure,
    'allocatableMemory.available': rankMemoryPressure,
    'pid.available': rankPIDPressure,
    'nodefs.available': rankDiskPressureFunc(node, 'ephemeral-storage'),
    'nodefs.inodesFree': rankDiskPressureFunc(node, 'inodes'),
    'imagefs.available': rankDiskPressureFunc(image, 'ephemeral-storage'),
    'imagefs.inodesFree': rankDiskPressureFunc(image, 'inodes'),
    'containerfs.available': rankDiskPressureFunc(image, 'ephemeral-storage'),
    'containerfs.inodesFree': rankDiskPressureFunc(image, 'inodes'),
  };
}

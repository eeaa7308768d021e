/**
 * cAdvisor's housekeeping: every `intervalMs` (10 s) read the root cgroup, the pods root, its
 * QoS cgroups, every pod cgroup and every container cgroup, keep the last two samples of each
 * (for `usageNanoCores`), and read each pod's network namespace through a process in it.
 * Consumers (the Summary, `/metrics/cadvisor`) read the cache; they never touch cgroupfs.
 *
 * @module
 */
import { type Clock, type Logger, noopLogger, type Timer } from '@nodeagent/core';
import type { CgroupSample } from './cgroup-reader.js';
import type { CgroupLayout, CgroupTree } from './cgroup-tree.js';
import type { StatsErrorRecorder } from './errors.js';
import type { NetDevCounters, ProcFs } from './procfs.js';

/**
 * The longest stretch of synchronous cgroupfs reads before a pass yields to the event loop, ms.
 * A pass at 110 pods reads for 100 ms or more (cgroup v1); cAdvisor does it on its own
 * goroutines, so here it must not hold up the pod workers for longer than this.
 */
const SLICE_MS = 2;

/** Yields to the event loop (`setImmediate`) when the current slice is over. */
function timeSlices(): () => Promise<void> {
  let start = performance.now();
  return async () => {
    if (performance.now() - start < SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    start = performance.now();
  };
}

/** cAdvisor's housekeeping interval. */
export const DEFAULT_HOUSEKEEPING_INTERVAL_MS = 10_000;

/** What the cache holds for one cgroup. */
export interface CgroupInfo {
  /** The cgroup path relative to the hierarchy root, with a leading `/` (cAdvisor's container name). */
  readonly path: string;
  /** The latest sample. */
  readonly latest: CgroupSample;
  /** The sample before it, if any. */
  readonly previous?: CgroupSample;
  /** CPU rate between the two samples, core-ns per s; undefined with one sample. */
  readonly usageNanoCores?: number;
  /** When this cgroup was first seen, ms (cAdvisor's creation time). */
  readonly firstSeenMs: number;
  /** Interfaces of the network namespace of a process in this cgroup (pods and the root only). */
  readonly network?: readonly NetDevCounters[];
}

/** The cache after one housekeeping pass. */
export interface HousekeepingSnapshot {
  /** When the pass started, ms. */
  readonly timeMs: number;
  /** The layout found. */
  readonly layout: CgroupLayout;
  /** Every cgroup read, by path. */
  readonly cgroups: ReadonlyMap<string, CgroupInfo>;
}

/** Options of {@link Housekeeping}. */
export interface HousekeepingOptions {
  /** The hierarchy to read. */
  readonly tree: CgroupTree;
  /** `/proc`, for the root's memory (v2) and network namespaces. */
  readonly proc: ProcFs;
  /** Pods roots to search, in order. */
  readonly podsCgroupRoots: readonly string[];
  /** Extra cgroups to read (system containers such as the kubelet's and the runtime's). */
  readonly extraCgroups?: readonly string[];
  /** Time and the timer. */
  readonly clock: Clock;
  /** Counts what could not be read. */
  readonly errors: StatsErrorRecorder;
  /** @default 10_000 */
  readonly intervalMs?: number;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** Compute a CPU rate the way cAdvisor does from two samples. */
export function cpuRate(previous: CgroupSample | undefined, latest: CgroupSample): number | undefined {
  if (previous?.cpuUsageNs === undefined || latest.cpuUsageNs === undefined) return undefined;
  const dtNs = (latest.timeMs - previous.timeMs) * 1e6;
  if (dtNs <= 0 || latest.cpuUsageNs < previous.cpuUsageNs) return undefined;
  return Math.round(((latest.cpuUsageNs - previous.cpuUsageNs) / dtNs) * 1e9);
}

/** The periodic reader and its cache. */
export class Housekeeping {
  private snapshot: HousekeepingSnapshot | undefined;
  private timer: Timer | undefined;
  private running: Promise<HousekeepingSnapshot> | undefined;
  private readonly log: Logger;

  /** @param options see {@link HousekeepingOptions}. */
  constructor(private readonly options: HousekeepingOptions) {
    this.log = (options.logger ?? noopLogger).child({ component: 'stats-housekeeping' });
  }

  /** The latest pass, if one finished. */
  latest(): HousekeepingSnapshot | undefined {
    return this.snapshot;
  }

  /** Runs a pass now (joins one already running), then every interval. */
  start(): Promise<HousekeepingSnapshot> {
    if (this.timer === undefined) {
      this.timer = this.options.clock
        .setInterval(() => {
          void this.housekeep().catch((err: unknown) => this.log.error({ err }, 'housekeeping failed'));
        }, this.options.intervalMs ?? DEFAULT_HOUSEKEEPING_INTERVAL_MS)
        .unref();
    }
    return this.housekeep();
  }

  /** Stops the timer. */
  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One pass; concurrent callers share it. */
  housekeep(): Promise<HousekeepingSnapshot> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<HousekeepingSnapshot> {
    const { tree, proc, clock, errors } = this.options;
    const timeMs = clock.now();
    const pause = timeSlices();
    const layout = await tree.discover(this.options.podsCgroupRoots, pause);
    const paths: string[] = ['/', ...(this.options.extraCgroups ?? [])];
    if (layout.podsRoot !== undefined) paths.push(layout.podsRoot, ...layout.intermediate);
    const podPaths = new Set<string>();
    for (const pod of layout.pods.values()) {
      paths.push(pod.path);
      podPaths.add(pod.path);
      paths.push(...pod.containers.values());
    }
    const before = this.snapshot?.cgroups;
    const cgroups = new Map<string, CgroupInfo>();
    const meminfo = () => proc.meminfo();
    const readOne = async (path: string): Promise<void> => {
      const result = await tree.read(path, timeMs, path === '/' ? meminfo : undefined);
      if (!result.exists) {
        errors.record('cgroup', path, 'cgroup vanished between list and read');
        return;
      }
      for (const p of result.problems) errors.record('cgroup', `${p.cgroup}/${p.file}`, p.reason);
      let latest = result.sample;
      if (path === '/' && latest.cpuUsageNs === undefined) {
        const ns = await proc.cpuNs();
        if (ns !== undefined) latest = { ...latest, cpuUsageNs: ns };
      }
      const old = before?.get(path);
      // A pass at the same instant as the last one (an on-demand pass right after a timed one)
      // keeps the earlier sample, so the rate survives.
      const previous = old !== undefined && old.latest.timeMs >= latest.timeMs ? old.previous : old?.latest;
      let network: readonly NetDevCounters[] | undefined;
      if (path === '/' || podPaths.has(path)) {
        const pid = path === '/' ? 1 : await tree.firstPid(path);
        if (pid !== undefined) network = await proc.netDev(pid);
      }
      const rate = cpuRate(previous, latest);
      const info: CgroupInfo = {
        path,
        latest,
        firstSeenMs: old?.firstSeenMs ?? timeMs,
        ...(previous === undefined ? {} : { previous }),
        ...(rate === undefined ? {} : { usageNanoCores: rate }),
        ...(network === undefined ? {} : { network }),
      };
      cgroups.set(path, info);
    };
    // Cgroup reads are synchronous: yield to the event loop every slice.
    for (const path of paths) {
      await readOne(path);
      await pause();
    }
    this.snapshot = { timeMs, layout, cgroups };
    return this.snapshot;
  }
}

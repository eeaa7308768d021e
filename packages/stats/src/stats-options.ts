/**
 * Options of {@link createStatsProvider} and the pod lister it reads.
 *
 * @module
 */
import type { Clock, Logger, MetricsOptions } from '@nodeagent/core';
import type { CriClient } from '@nodeagent/cri';
import type { StatfsFunction } from './filesystem.js';
import type { PodVolumeLister } from './volume-stats.js';

/** A pod as the kubelet's pod manager knows it. */
export interface StatsPod {
  /** Pod UID. */
  readonly uid: string;
  /** Pod name. */
  readonly name: string;
  /** Pod namespace. */
  readonly namespace: string;
}

/** The kubelet's pod manager, as far as stats need it. */
export interface PodLister {
  /** The pods bound to this node now. */
  listPods(): readonly StatsPod[];
}

/** Cgroups of the node's system daemons, reported as `node.systemContainers`. */
export interface SystemCgroups {
  /** The kubelet's cgroup (`--kubelet-cgroups`), reported as `kubelet`. */
  readonly kubelet?: string;
  /** The runtime's cgroup (`--runtime-cgroups`), reported as `runtime`. */
  readonly runtime?: string;
  /** Non-kubernetes processes (`--system-cgroups`), reported as `misc`. */
  readonly misc?: string;
}

/** Options of {@link createStatsProvider}. */
export interface StatsProviderOptions {
  /** The node's name (`node.nodeName`). */
  readonly nodeName: string;
  /** The runtime: `ListPodSandbox`, `ListContainers`, `ListContainerStats`, `ListPodSandboxStats`, `ImageFsInfo`. */
  readonly cri: Pick<CriClient, 'runtime' | 'image'>;
  /**
   * The pods the kubelet knows. When given, sandboxes of other pods are left out of the
   * Summary. @default every pod the runtime lists
   */
  readonly podLister?: PodLister;
  /**
   * Embedded mode, for a runtime without cgroups (the fake CRI runtime): no cgroupfs, `/proc`
   * or statfs of the host is read; every pod and container field comes from CRI stats, as the
   * CRI stats provider does when cAdvisor has nothing. @default false
   */
  readonly embedded?: boolean;
  /** Where cgroupfs is mounted; v1 or v2 is detected. @default '/sys/fs/cgroup' */
  readonly cgroupRoot?: string;
  /** The proc mount. @default '/proc' */
  readonly procRoot?: string;
  /** `statfs(2)`. @default fs.promises.statfs */
  readonly statfs?: StatfsFunction;
  /** The kubelet's root directory (`--root-dir`), whose filesystem is nodefs. @default '/var/lib/kubelet' */
  readonly rootDirectory?: string;
  /** Pod log directory (`podLogsDir`). @default '/var/log/pods' */
  readonly podLogsDirectory?: string;
  /**
   * Cgroups below which pod cgroups are searched, the first existing one wins (cgroupfs and
   * systemd drivers' names of the kubelet's `kubepods`). @default ['kubepods', 'kubepods.slice']
   */
  readonly podsCgroupRoots?: readonly string[];
  /** Cgroups of system daemons. @default none */
  readonly systemCgroups?: SystemCgroups;
  /** Housekeeping period, ms (cAdvisor's `--housekeeping_interval`). Minimum: 1000. @default 10_000 */
  readonly housekeepingIntervalMs?: number;
  /**
   * The pods' volumes: measured by an {@link FsResourceAnalyzer} into `pods[].volume` and
   * counted in `ephemeral-storage`. @default none (no volume stats)
   */
  readonly volumes?: PodVolumeLister;
  /** How often each pod's volumes are measured (`--volume-stats-agg-period`), ms, jittered up to twice that. Minimum: 1000. @default 60_000 */
  readonly volumeStatsAggPeriodMs?: number;
  /** Deadline of each CRI stats call, ms. @default 10_000 */
  readonly criTimeoutMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /** Registers `nodeagent_stats_errors_total`. @default none */
  readonly metrics?: MetricsOptions;
}

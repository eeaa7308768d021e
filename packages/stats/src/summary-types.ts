/**
 * The kubelet's Summary API (`/stats/summary`), group `stats`, version `v1alpha1`.
 * Field names and optionality follow `k8s.io/kubelet/pkg/apis/stats/v1alpha1`: every
 * optional Go pointer is an optional property here and is omitted from JSON when absent.
 * Times are RFC 3339 strings as `metav1.Time` marshals them.
 *
 * These types are the contract between the stats provider and its consumers (the
 * eviction manager, the kubelet server, metrics-server and `kubectl top`).
 *
 * @module
 */

/** An RFC 3339 timestamp (`metav1.Time`), e.g. `2026-12-02T03:40:00Z`. */
export type StatsTime = string;

/** Top-level container for node and pod statistics. */
export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}

/** The system container names of `NodeStats.systemContainers`. */
export const SystemContainerKubelet = 'kubelet';
/** The system container tracking the container runtime. */
export const SystemContainerRuntime = 'runtime';
/** The system container tracking non-Kubernetes processes. */
export const SystemContainerMisc = 'misc';
/** The system container tracking user pods (the `kubepods` cgroup). */
export const SystemContainerPods = 'pods';

/** Node-level statistics. */
export interface NodeStats {
  nodeName: string;
  /** Raw containers of system daemons, named by the `SystemContainer*` constants. */
  systemContainers?: ContainerStats[];
  /** When data collection for the node-scoped stats (re)started. */
  startTime: StatsTime;
  cpu?: CPUStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  /** The node's root filesystem (nodefs). */
  fs?: FsStats;
  runtime?: RuntimeStats;
  rlimit?: RlimitStats;
  swap?: SwapStats;
  /** I/O pressure of the node (KEP-4205). */
  io?: IOStats;
}

/** OS process limits. */
export interface RlimitStats {
  time: StatsTime;
  maxpid?: number;
  curproc?: number;
}

/** Filesystems of the container runtime. */
export interface RuntimeStats {
  /** Where images are stored (imagefs); may be the same filesystem as nodefs. */
  imageFs?: FsStats;
  /** Where container writable layers are stored (containerfs); may equal imageFs. */
  containerFs?: FsStats;
}

/** Process counts. */
export interface ProcessStats {
  process_count?: number;
}

/** Pod-level statistics. */
export interface PodStats {
  podRef: PodReference;
  startTime: StatsTime;
  containers: ContainerStats[];
  /** The pod cgroup's CPU (all containers plus pod overhead). */
  cpu?: CPUStats;
  /** The pod cgroup's memory (all containers plus pod overhead). */
  memory?: MemoryStats;
  network?: NetworkStats;
  volume?: VolumeStats[];
  /** Containers' writable layers, logs and emptyDir volumes together. */
  'ephemeral-storage'?: FsStats;
  process_stats?: ProcessStats;
  swap?: SwapStats;
  /** I/O pressure of the pod cgroup (KEP-4205). */
  io?: IOStats;
}

/** Container-level statistics. */
export interface ContainerStats {
  name: string;
  startTime: StatsTime;
  cpu?: CPUStats;
  memory?: MemoryStats;
  accelerators?: AcceleratorStats[];
  /** The container's writable layer. */
  rootfs?: FsStats;
  /** The container's log files. */
  logs?: FsStats;
  userDefinedMetrics?: UserDefinedMetric[];
  swap?: SwapStats;
  /** I/O pressure of the container (KEP-4205). */
  io?: IOStats;
}

/** Identifies a pod. */
export interface PodReference {
  name: string;
  namespace: string;
  uid: string;
}

/** One network interface's counters. */
export interface InterfaceStats {
  name: string;
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

/** Network statistics: the default interface inline, plus every interface. */
export interface NetworkStats extends InterfaceStats {
  time: StatsTime;
  interfaces?: InterfaceStats[];
}

/** CPU usage. */
export interface CPUStats {
  time: StatsTime;
  /** Usage averaged over the sample window, in core-nanoseconds per second. */
  usageNanoCores?: number;
  /** Cumulative usage since the object was created. */
  usageCoreNanoSeconds?: number;
  /** CPU pressure (cgroup v2 `cpu.pressure`, KEP-4205). */
  psi?: PSIStats;
}

/** Memory usage. */
export interface MemoryStats {
  time: StatsTime;
  /** limit − workingSetBytes; omitted without a limit. */
  availableBytes?: number;
  usageBytes?: number;
  /** usage − inactive_file (cAdvisor's working set). */
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
  /** Memory pressure (cgroup v2 `memory.pressure`, KEP-4205). */
  psi?: PSIStats;
}

/** Pressure stall information of one resource: `some` and `full` lines of a `*.pressure` file. */
export interface PSIStats {
  /** Time at least one task stalled. */
  some: PSIData;
  /** Time all non-idle tasks stalled at once. */
  full: PSIData;
}

/** One line of a `*.pressure` file. */
export interface PSIData {
  /** Cumulative stall time, µs. */
  total: number;
  /** Share of time stalled over 10 s, percent. */
  avg10: number;
  /** Share of time stalled over 60 s, percent. */
  avg60: number;
  /** Share of time stalled over 300 s, percent. */
  avg300: number;
}

/** I/O statistics (pressure only). */
export interface IOStats {
  time: StatsTime;
  /** I/O pressure (cgroup v2 `io.pressure`). */
  psi?: PSIStats;
}

/** Swap usage. */
export interface SwapStats {
  time: StatsTime;
  swapAvailableBytes?: number;
  swapUsageBytes?: number;
}

/** An accelerator attached to a container. */
export interface AcceleratorStats {
  make: string;
  model: string;
  id: string;
  memoryTotal: number;
  memoryUsed: number;
  dutyCycle: number;
}

/** A volume's filesystem usage (FsStats inline). */
export interface VolumeStats extends FsStats {
  name?: string;
  pvcRef?: PVCReference;
}

/** Identifies a PersistentVolumeClaim. */
export interface PVCReference {
  name: string;
  namespace: string;
}

/** Filesystem usage. */
export interface FsStats {
  time: StatsTime;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

/** How a user-defined metric is interpreted. */
export type UserDefinedMetricType = 'gauge' | 'cumulative' | 'delta';

/** A metric a container exposes. */
export interface UserDefinedMetric {
  name: string;
  type: UserDefinedMetricType;
  units: string;
  labels?: Record<string, string>;
  time: StatsTime;
  value: number;
}

/** What a {@link SummaryProvider.get} call may leave out. */
export interface SummaryScope {
  /**
   * `false` asks for the node's part only, with `pods` empty: the provider lists no pod or
   * container, makes no `ListContainerStats` call and walks no log directory. Every eviction
   * signal comes from the node's part, so the eviction manager asks for this while it has no
   * pod to rank. Default `true`.
   */
  readonly pods?: boolean;
}

/**
 * Something that produces a Summary: the stats package's provider, or a fake in tests.
 * `updateStats` asks for fresh CPU rates (the kubelet's `/stats/summary?only_cpu_and_memory`
 * path and the eviction manager call it with `true`).
 */
export interface SummaryProvider {
  /** The Summary; `scope` may leave the pods out (default: everything). */
  get(updateStats: boolean, scope?: SummaryScope): Promise<Summary>;
  /**
   * CPU and memory only (upstream `GetCPUAndMemoryStats`: `/stats/summary?only_cpu_and_memory=true`).
   * Optional: without it the kubelet server keeps those fields of `get(false)`.
   */
  getCpuAndMemory?(): Promise<Summary>;
}

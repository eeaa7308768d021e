/**
 * Options of the {@link ContainerManager}, named as the kubelet's configuration fields.
 *
 * @module
 */
import type { Clock, Logger } from '@nodeagent/core';
import type { CgroupFs } from './cgroup-fs.js';
import type { CgroupDriver } from './cgroup-name.js';
import type { CgroupPod } from './pod-shape.js';

/** Values of `enforceNodeAllocatable` (upstream `pods`, `system-reserved`, `kube-reserved`, ...). Only `pods` acts here. */
export type NodeAllocatableEnforcement =
  | 'pods'
  | 'system-reserved'
  | 'kube-reserved'
  | 'none'
  | (string & {});

/** Options of {@link ContainerManager}. */
export interface ContainerManagerOptions {
  /** How cgroup names become paths (kubelet `cgroupDriver`). @default "cgroupfs" */
  readonly cgroupDriver?: CgroupDriver;
  /** The cgroup `kubepods` is created under (kubelet `cgroupRoot`), in cgroupfs form. @default "/" */
  readonly cgroupRoot?: string;
  /** Create the `kubepods` / QoS / pod hierarchy (kubelet `cgroupsPerQOS`); off makes every call a no-op. @default true */
  readonly cgroupsPerQOS?: boolean;
  /** Kubelet `enforceNodeAllocatable`: with `pods`, `kubepods` gets capacity − reserved instead of capacity. @default ["pods"] */
  readonly enforceNodeAllocatable?: readonly NodeAllocatableEnforcement[];
  /** Kubelet `kubeReserved` (`cpu`, `memory`, `pid`, `hugepages-*`). @default {} */
  readonly kubeReserved?: Readonly<Record<string, string>>;
  /** Kubelet `systemReserved`. @default {} */
  readonly systemReserved?: Readonly<Record<string, string>>;
  /**
   * Node capacity: `cpu`, `memory`, `hugepages-<size>` as in the Node status; `pid` is added
   * from the procfs (min of `kernel/pid_max` and `kernel/threads-max`) when absent.
   */
  readonly capacity: Readonly<Record<string, string>>;
  /** pids.max of every pod cgroup (kubelet `podPidsLimit`); ≤ 0 sets none. @default -1 */
  readonly podPidsLimit?: number;
  /** Enforce CPU limits with CFS quota (kubelet `cpuCFSQuota`). @default true */
  readonly cpuCfsQuota?: boolean;
  /** CFS period, µs (kubelet `cpuCFSQuotaPeriod`). @default 100000 */
  readonly cpuCfsQuotaPeriodUs?: number;
  /** The pods the node runs, for the burstable tier's shares (upstream `ActivePodsFunc`). @default () => [] */
  readonly activePods?: () => readonly CgroupPod[];
  /** How often the QoS tiers are recomputed, ms (upstream `periodicQOSCgroupUpdateInterval`). @default 60000 */
  readonly qosUpdatePeriodMs?: number;
  /** Where cgroups are mounted; tests point it at a fake tree. @default "/sys/fs/cgroup" */
  readonly cgroupMountRoot?: string;
  /** The procfs, for the `pid` capacity. @default "/proc" */
  readonly procRoot?: string;
  /** The sysfs, for the machine's huge page sizes (`kernel/mm/hugepages`). @default "/sys" */
  readonly sysRoot?: string;
  /** Filesystem calls (a fake tree in tests). @default the real filesystem */
  readonly fs?: CgroupFs;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

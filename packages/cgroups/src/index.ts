/**
 * The kubelet's container manager cgroups (upstream `pkg/kubelet/cm`): the `kubepods`
 * hierarchy with its `burstable` and `besteffort` tiers on cgroup v1 and v2, named as the
 * cgroupfs or systemd driver names them; one cgroup per pod carrying its summed requests and
 * limits (`ResourceConfigForPod`: cpu.shares/cpu.weight, CFS quota, memory and pids limits,
 * pod overhead); node allocatable enforced on `kubepods`; the cgroup parent the runtime gets;
 * orphaned pod cgroups killed and removed.
 *
 * @example
 * ```ts
 * import { ContainerManager } from '@nodeagent/cgroups';
 *
 * const cm = new ContainerManager({ capacity: { cpu: '4', memory: '16Gi' }, kubeReserved: { memory: '1Gi' } });
 * await cm.start();                       // /sys/fs/cgroup/…/kubepods{,/burstable,/besteffort}
 * cm.ensurePodCgroup(pod);                // /kubepods/burstable/pod<uid> with the pod's limits
 * const parent = cm.podCgroupParent(pod); // → PodSandboxConfig.linux.cgroup_parent
 * await cm.destroyPodCgroup(pod);         // after the pod's containers are gone
 * ```
 *
 * @packageDocumentation
 */
export { type CgroupFs, nodeCgroupFs } from './cgroup-fs.js';
export { type CgroupLayout, detectCgroupLayout } from './cgroup-layout.js';
export { CgroupManager, type CgroupManagerDeps } from './cgroup-manager.js';
export {
  type CgroupDriver,
  type CgroupName,
  cgroupPath,
  expandSlice,
  newCgroupName,
  parseCgroupfs,
  parseCgroupPath,
  parseSystemd,
  toCgroupfs,
  toSystemd,
} from './cgroup-name.js';
export {
  ContainerManager,
  NODE_ALLOCATABLE_CGROUP,
  NoopContainerManager,
  POD_CGROUP_PREFIX,
  type PodCgroups,
  type QosContainersInfo,
} from './container-manager.js';
export type { ContainerManagerOptions, NodeAllocatableEnforcement } from './container-manager-options.js';
export { CgroupError, type CgroupErrorCode, isCgroupError } from './errors.js';
export { readHugePageSizes, readMaxPid } from './machine.js';
export type { CgroupContainer, CgroupPod } from './pod-shape.js';
export {
  cpuSharesToWeight,
  hugePageLimits,
  hugePageSizeName,
  MAX_SHARES,
  MIN_QUOTA_PERIOD_US,
  MIN_SHARES,
  milliCpuToQuota,
  milliCpuToShares,
  nodeAllocatableAbsolute,
  nodeAllocatableResourceConfig,
  type PodResourceOptions,
  QUOTA_PERIOD_US,
  qosResourceConfigs,
  type ResourceConfig,
  resourceConfigForPod,
  SHARES_PER_CPU,
  UNBOUNDED_HUGEPAGE_LIMIT,
} from './resource-config.js';

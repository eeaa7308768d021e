/**
 * @nodeagent/stats — the kubelet's resource statistics: cAdvisor-style housekeeping of cgroup
 * v1/v2, `/proc` and statfs, merged with the CRI stats RPCs by the kubelet's per-field rules,
 * into the Summary API (`/stats/summary`), `/metrics/resource` and `/metrics/cadvisor`.
 *
 * @example
 * ```ts
 * import { createStatsProvider, renderResourceMetrics } from '@nodeagent/stats';
 *
 * const stats = createStatsProvider({ nodeName: 'node-1', cri });
 * await stats.start(); // housekeeping every 10 s
 * const summary = await stats.get(true); // the /stats/summary body
 * const text = renderResourceMetrics(await stats.getCpuAndMemory()); // /metrics/resource
 * await stats.stop();
 * ```
 *
 * @packageDocumentation
 */

export {
  CGROUP_V1_FILES,
  CGROUP_V2_FILES,
  type CgroupReadProblem,
  type CgroupReadResult,
  type CgroupSample,
  type CgroupVersion,
  parsePressure,
  readCgroupV1,
  readCgroupV2,
} from './cgroup-reader.js';
export { type CgroupLayout, CgroupTree, detectCgroupVersion, type PodCgroups } from './cgroup-tree.js';
export {
  StatsErrorRecorder,
  type StatsErrorSource,
  StatsOptionsError,
  StatsUnavailableError,
} from './errors.js';
export {
  capacityOf,
  type DiskUsage,
  defaultStatfs,
  diskUsage,
  type FsCapacity,
  type StatfsFunction,
  type StatfsResult,
} from './filesystem.js';
export {
  type CgroupInfo,
  DEFAULT_HOUSEKEEPING_INTERVAL_MS,
  Housekeeping,
  type HousekeepingOptions,
  type HousekeepingSnapshot,
} from './housekeeping.js';
export { type NetDevCounters, ProcFs } from './procfs.js';
export { formatPromValue } from './prom-text.js';
export { renderCadvisorMetrics } from './render-cadvisor-metrics.js';
export { renderResourceMetrics } from './render-resource-metrics.js';
export type { PodLister, StatsPod, StatsProviderOptions, SystemCgroups } from './stats-options.js';
export {
  type CadvisorContainer,
  type CadvisorFilesystem,
  type CadvisorSnapshot,
  createStatsProvider,
  type StatsProvider,
} from './stats-provider.js';
export * from './summary-types.js';
export {
  DEFAULT_VOLUME_STATS_AGG_PERIOD_MS,
  FsResourceAnalyzer,
  type FsResourceAnalyzerOptions,
  type MeasuredVolume,
  type PodVolumeLister,
  type PodVolumeStats,
  VolumeStatsOptionsError,
} from './volume-stats.js';

/**
 * The kubelet's eviction manager (`pkg/kubelet/eviction`): signals observed from the Summary
 * API (`@nodeagent/stats`), hard and soft thresholds with upstream's syntax and defaults,
 * node-level reclaim (container and image GC) before any pod, ranking per starved resource,
 * one pod evicted per round through an injected killer, MemoryPressure / DiskPressure /
 * PIDPressure for the node status, and admission while under pressure.
 *
 * @example
 * ```ts
 * import { EvictionManager, parseThresholdConfig } from '@nodeagent/eviction';
 *
 * const manager = new EvictionManager({
 *   thresholds: parseThresholdConfig({ evictionHard: { 'memory.available': '100Mi' } }),
 *   summaryProvider,                      // @nodeagent/stats
 *   activePods: () => podManager.activePods(),
 *   podKiller: { killPod: (pod, graceSeconds, status) => podWorkers.kill(pod, graceSeconds, status) },
 * });
 * await manager.start();
 * manager.isUnderMemoryPressure();        // feeds the node's MemoryPressure condition
 * ```
 *
 * @packageDocumentation
 */
export {
  DEFAULT_MONITORING_INTERVAL_MS,
  EvictionManager,
  IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS,
  POD_CLEANUP_POLL_MS,
  POD_CLEANUP_TIMEOUT_MS,
  withContainerFsThresholds,
} from './eviction-manager.js';
export type {
  ContainerGarbageCollector,
  DiskInfoProvider,
  EvictionManagerOptions,
  EvictionStatus,
  ImageGarbageCollector,
  PodKiller,
} from './eviction-manager-options.js';
export {
  EVICTED_REASON,
  evictionMessage,
  OFFENDING_CONTAINERS_KEY,
  OFFENDING_CONTAINERS_USAGE_KEY,
  STARVED_RESOURCE_KEY,
} from './eviction-message.js';
export { EVICTION_METRIC_NAMES } from './metrics.js';
export {
  makeSignalObservations,
  type PodStatsLookup,
  type SignalObservation,
  type SignalObservations,
} from './observations.js';
export { formatQuantity, type QuantityFormat } from './quantity-format.js';
export {
  buildSignalToRankFunc,
  type FsStatsType,
  localVolumeNames,
  podDiskUsage,
  podMemoryUsage,
  podPriority,
  podProcessCount,
  podRequest,
  type RankFunc,
  rankDiskPressureFunc,
  rankMemoryPressure,
  rankPIDPressure,
} from './ranking.js';
export {
  isMemorySignal,
  isSignal,
  type PressureCondition,
  type ReclaimedResource,
  SIGNAL_TO_NODE_CONDITION,
  SIGNAL_TO_RESOURCE,
  SIGNALS,
  type Signal,
} from './signals.js';
export {
  byEvictionPriority,
  mergeThresholds,
  nodeConditions,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
  thresholdsUpdatedStats,
} from './threshold-evaluation.js';
export {
  DEFAULT_EVICTION_HARD,
  DEFAULT_MAX_POD_GRACE_PERIOD_SECONDS,
  DEFAULT_PRESSURE_TRANSITION_PERIOD_MS,
  formatThreshold,
  formatThresholdValue,
  InvalidThresholdError,
  isHardEvictionThreshold,
  parseLangleSeparatedMap,
  parseMapStringString,
  parseThresholdConfig,
  parseThresholdStatement,
  sameThreshold,
  sameThresholdValue,
  type Threshold,
  type ThresholdConfig,
  type ThresholdQuantity,
  type ThresholdValue,
  thresholdQuantity,
} from './thresholds.js';

/**
 * The kubelet's runtime manager in TypeScript: turns a pod spec and the pod's runtime status
 * into CRI calls (sandbox, image pulls, init containers, sidecars, containers), restarts per
 * `restartPolicy` with CrashLoopBackOff, kills gracefully (preStop hooks, grace periods,
 * sidecars last in reverse order) and computes the API `PodStatus`. Everything is read back
 * from the runtime's `io.kubernetes.*` labels, so a restarted agent adopts what it finds.
 * After a sync, {@link KubeRuntimeManager.syncOutcome} says what the pod worker does: throw
 * (a real failure) or requeue when a back-off expires. Test harnesses are in
 * `@nodeagent/kuberuntime/testing`.
 *
 * @example
 * ```ts
 * import { createCriClient } from '@nodeagent/cri';
 * import { KubeRuntimeManager } from '@nodeagent/kuberuntime';
 *
 * const manager = new KubeRuntimeManager({ cri: createCriClient('unix:///run/containerd/containerd.sock') });
 * const pod = { metadata: { name: 'web', namespace: 'default', uid: 'u-1' },
 *   spec: { containers: [{ name: 'web', image: 'busybox:1.36', command: ['sleep', '3600'] }] } };
 * await manager.syncPod(pod, await manager.getPodStatus(pod));
 * console.log(manager.computePodStatus(pod, await manager.getPodStatus(pod)).phase); // "Running"
 * ```
 *
 * @packageDocumentation
 */

export {
  CONTAINER_GC_PERIOD_MS,
  ContainerGC,
  type ContainerGCOptions,
  type ContainerGCPolicy,
  type ContainerGCRuntime,
  type PodStateProvider,
  podUidFromLogsDirectory,
} from './container-gc.js';
export { type ReadContainerLogHistoryOptions, readContainerLogHistory } from './container-log-history.js';
export {
  ContainerLogManager,
  type ContainerLogManagerOptions,
  type ContainerLogRuntime,
  DEFAULT_CONTAINER_LOG_MAX_FILES,
  DEFAULT_CONTAINER_LOG_MAX_SIZE,
  DEFAULT_CONTAINER_LOG_MAX_WORKERS,
  DEFAULT_CONTAINER_LOG_MONITOR_INTERVAL_MS,
  rotatedLogs,
  rotationTimestamp,
} from './container-log-manager.js';
export {
  findTailLineStart,
  type RandomAccessFile,
  randomAccessFile,
  readLastStringFromContainerLog,
  tailCriLogContent,
} from './container-log-tail.js';
export type { DnsOptions } from './dns.js';
export type { EnvSources } from './env.js';
export { ContainerConfigError, SyncErrorReason, SyncStepError } from './errors.js';
export type { RuntimeEventRecorder, RuntimeEventType } from './event-recorder.js';
export {
  criImageFsStats,
  DEFAULT_IMAGE_GC_HIGH_THRESHOLD_PERCENT,
  DEFAULT_IMAGE_GC_LOW_THRESHOLD_PERCENT,
  DEFAULT_IMAGE_MINIMUM_GC_AGE_MS,
  IMAGE_GC_PERIOD_MS,
  type ImageFsStats,
  type ImageFsStatsProvider,
  ImageGCManager,
  type ImageGCManagerOptions,
  type ImageGCPolicy,
  type ImageGCRuntime,
  InvalidDiskCapacityError,
} from './image-gc.js';
export { type HandlerRunnerDeps, LifecycleHookError } from './lifecycle-handlers.js';
export type { MountedPodVolume, PodVolumeLookup } from './mounts.js';
export { DEFAULT_POD_LOGS_ROOT, DEFAULT_PODS_ROOT } from './paths.js';
export {
  type ContainerToKill,
  computePodActions,
  type PodActions,
  type PodActionsOptions,
} from './pod-actions.js';
export { getPhase } from './pod-phase.js';
export { computePodStatus } from './pod-status.js';
export type { PodStatusOptions } from './pod-status-options.js';
export { type CachedReason, ReasonCache } from './reason-cache.js';
export type { CpuCfsOptions } from './resources.js';
export { KubeRuntimeManager } from './runtime-manager.js';
export type { CrashLoopBackOffOptions, KubeRuntimeManagerOptions } from './runtime-manager-options.js';
export { generatePodSandboxConfig, type SandboxConfigOptions } from './sandbox-config.js';
export type { SyncOutcome } from './sync-back-off.js';
export { PodSyncResult, type SyncAction, type SyncResult } from './sync-result.js';

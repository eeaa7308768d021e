/**
 * The kubelet's runtime manager in TypeScript: turns a pod spec and the pod's runtime status
 * into CRI calls (sandbox, image pulls, init containers, sidecars, containers), restarts per
 * `restartPolicy` with CrashLoopBackOff, kills gracefully (preStop hooks, grace periods,
 * sidecars last in reverse order) and computes the API `PodStatus`. Everything is read back
 * from the runtime's `io.kubernetes.*` labels, so a restarted agent adopts what it finds.
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
  type ContainerConfigContext,
  type GeneratedContainerConfig,
  generateContainerConfig,
} from './container-config.js';
export { fnv1a32, formatPod, hashContainer, stableContainerKey } from './container-hash.js';
export { convertContainerStatuses } from './container-statuses.js';
export {
  type DnsOptions,
  MAX_DNS_NAMESERVERS,
  MAX_DNS_SEARCH_LIST_CHARS,
  MAX_DNS_SEARCH_PATHS,
  parseResolvConf,
  podDnsConfig,
} from './dns.js';
export {
  type EnvContext,
  type EnvSources,
  expandCommandAndArgs,
  formatDownwardMap,
  makeEnvironmentVariables,
  podFieldValue,
  resourceFieldValue,
} from './env.js';
export { ContainerConfigError, errorMessage, SyncErrorReason, SyncStepError } from './errors.js';
export { expand } from './expansion.js';
export { goJsonContainerPorts, goJsonLifecycleHandler } from './go-json.js';
export { InvalidHostnameError, podHostnameAndDomain, sandboxHostname, truncateHostname } from './hostname.js';
export {
  applyDefaultImageTag,
  credentialsFor,
  effectivePullPolicy,
  ImagePuller,
  type ImagePullerDeps,
  imageRegistry,
} from './image-puller.js';
export {
  containerSpec,
  type KillContainerOptions,
  type KillDeps,
  killContainer,
  killPod,
  MINIMUM_GRACE_PERIOD_SECONDS,
  terminationGracePeriodSeconds,
} from './kill.js';
export {
  DEFAULT_TERMINATION_MESSAGE_PATH,
  newContainerAnnotations,
  newContainerLabels,
  newPodAnnotations,
  newPodLabels,
  restoreSpecsFromLabels,
} from './labels.js';
export {
  type HandlerRunnerDeps,
  LIFECYCLE_USER_AGENT,
  LifecycleHookError,
  nodeHttpGet,
  runLifecycleHandler,
} from './lifecycle-handlers.js';
export { createRuntimeMetrics, imageSizeBucket, type RuntimeMetrics } from './metrics.js';
export { type HostPathToPrepare, makeMounts } from './mounts.js';
export {
  containerLogPath,
  containerLogsDirectory,
  DEFAULT_POD_LOGS_ROOT,
  DEFAULT_PODS_ROOT,
  emptyDirPath,
  podContainerDirectory,
  podDirectory,
  podLogsDirectory,
} from './paths.js';
export {
  type ContainerKillReason,
  type ContainerToKill,
  computePodActions,
  type PodActions,
  type PodActionsOptions,
} from './pod-actions.js';
export { containersReadyCondition, initializedCondition, readyCondition } from './pod-conditions.js';
export { findStatus, getPhase } from './pod-phase.js';
export { computePodStatus, type PodStatusOptions } from './pod-status.js';
export { InvalidQuantityError, isValidQuantity, milliValue, quantityValue } from './quantity.js';
export { type CachedReason, ReasonCache } from './reason-cache.js';
export {
  BESTEFFORT_OOM_SCORE_ADJ,
  type ContainerResourceOptions,
  type CpuCfsOptions,
  calculateLinuxResources,
  containerLinuxResources,
  containerOomScoreAdjust,
  effectiveRequests,
  GUARANTEED_OOM_SCORE_ADJ,
  isNodeCriticalPod,
  MAX_SHARES,
  MIN_QUOTA_PERIOD_US,
  MIN_SHARES,
  milliCpuToQuota,
  milliCpuToShares,
  type PodResourceTotals,
  podLimits,
  podQosClass,
  podRequests,
  QUOTA_PERIOD_US,
  SHARES_PER_CPU,
  sandboxLinuxResources,
} from './resources.js';
export {
  containerSucceeded,
  isInitContainerFailed,
  isRestartableInitContainer,
  podRestartPolicy,
  shouldContainerBeRestarted,
  shouldRestartOnFailure,
} from './restart-policy.js';
export {
  type CrashLoopBackOffOptions,
  KubeRuntimeManager,
  type KubeRuntimeManagerOptions,
} from './runtime-manager.js';
export { podSandboxChanged, type SandboxChange } from './sandbox-changed.js';
export {
  generatePodSandboxConfig,
  makePortMappings,
  type SandboxConfigOptions,
  sandboxLinuxConfig,
  sysctlToDots,
  toRuntimeProtocol,
} from './sandbox-config.js';
export {
  containerSecurityContext,
  DEFAULT_MASKED_PATHS,
  DEFAULT_READONLY_PATHS,
  hasPrivilegedContainer,
  namespacesForPod,
  networkNamespaceForPod,
  podSupplementalGroups,
  type SeccompOptions,
  seccompProfile,
} from './security-context.js';
export { PodSyncResult, type SyncAction, type SyncResult } from './sync-result.js';
export {
  MAX_TERMINATION_MESSAGE_BYTES,
  MAX_TERMINATION_MESSAGE_LOG_BYTES,
  MAX_TERMINATION_MESSAGE_LOG_LINES,
  readTerminationMessage,
} from './termination-message.js';
export { TerminationOrdering } from './termination-ordering.js';

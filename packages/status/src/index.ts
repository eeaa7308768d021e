/**
 * The kubelet's status side as small pieces: a {@link PodStatusManager} that keeps the API's
 * pod statuses equal to what the agent computed (patching only real differences, with the
 * pod's UID as precondition), a {@link NodeStatusManager} that registers the Node and posts
 * its conditions, capacity and allocatable on the kubelet's cadence, and the {@link NodeLease}
 * heartbeat. Peers come in through small interfaces: {@link StatusApi} (any REST client),
 * {@link MirrorPodTranslator} (static pods) and {@link NodePressureProvider} (eviction).
 *
 * @example
 * ```ts
 * import { NodeLease, NodeStatusManager, PodStatusManager } from '@nodeagent/status';
 *
 * const node = new NodeStatusManager({ api, nodeName: 'edge-1', kubeReserved: { cpu: '100m' } });
 * await node.start();                       // registered, first status posted
 * const lease = new NodeLease({ api, nodeName: 'edge-1', nodeUid: () => node.nodeUid });
 * await lease.start();                      // renewed every 10 s
 * const pods = new PodStatusManager({ api });
 * await pods.start();
 * pods.setPodStatus(pod, { phase: 'Running' }); // patched within milliseconds
 * ```
 *
 * @packageDocumentation
 */

// Defined in @nodeagent/core, where kuberuntime reads them too; still exported from here.
export {
  POD_CONDITIONS_BY_KUBELET,
  podConditionByKubelet,
  podConditionSharedByKubelet,
} from '@nodeagent/core';
export {
  allocatableReservation,
  DEFAULT_EVICTION_HARD,
  DEFAULT_MAX_PODS,
  hugePageResourceName,
  InvalidReservationError,
  nodeAllocatable,
  nodeCapacity,
  parseReservation,
  type Reservations,
  type ResourceList,
} from './allocatable.js';
export { apiErrorCode, type PatchKind, type StatusApi } from './api.js';
export { type MachineInfo, type MachineInfoSources, parseMemTotal, readMachineInfo } from './machine-info.js';
export type { StatusMetrics } from './metrics.js';
export {
  aggregateMessage,
  NODE_CONDITION_EVENTS,
  NODE_CONDITION_TYPES,
  type NodePressureProvider,
  noNodePressure,
  pressureCondition,
  type RuntimeConditionLike,
  type RuntimeReadiness,
  readyCondition,
  runtimeReadinessErrors,
} from './node-conditions.js';
export {
  DEFAULT_LEASE_DURATION_SECONDS,
  LEASE_MAX_BACKOFF_MS,
  LEASE_MAX_UPDATE_RETRIES,
  LEASE_RENEW_INTERVAL_FRACTION,
  LEASE_RENEW_JITTER,
  NODE_LEASE_NAMESPACE,
  NodeLease,
  type NodeLeaseOptions,
} from './node-lease.js';
export {
  DEFAULT_NODE_STATUS_MAX_IMAGES,
  defaultLabelsToReconcile,
  defaultNodeLabels,
  InvalidNodeFlagError,
  MAX_NAMES_PER_IMAGE,
  type NodeImage,
  nodeAddresses,
  nodeImages,
  nodeSystemInfo,
  parseNodeLabels,
  parseTaints,
} from './node-object.js';
export { computeNodeStatus, type NodeStatusInputs, nodeStatusChanged } from './node-status-compute.js';
export {
  DEFAULT_KUBELET_VERSION,
  FAST_STATUS_UPDATE_PERIOD_MS,
  NODE_READY_GRACE_PERIOD_MS,
  NODE_STATUS_UPDATE_RETRY,
  NodeStatusManager,
} from './node-status-manager.js';
export type { NodeStatusManagerOptions } from './node-status-manager-options.js';
export { isPodPhaseTerminal, isPodStatusByKubeletEqual, mergePodStatus } from './pod-conditions.js';
export { PodStatusManager, type SyncBatchResult } from './pod-status-manager.js';
export {
  type MirrorPodTranslator,
  noMirrorPods,
  type PodStatusManagerOptions,
} from './pod-status-manager-options.js';
export { MAX_POD_TERMINATION_MESSAGE_LENGTH, normalizePodStatus } from './pod-status-normalize.js';
export { type PodStatusPatch, podStatusPatch, twoWayMergePatch } from './pod-status-patch.js';
export {
  canBeDeleted,
  illegalContainerTransition,
  MIRROR_POD_ANNOTATION,
  terminatedStatus,
} from './pod-status-rules.js';
export {
  formatBinary,
  formatMilli,
  InvalidQuantityError,
  parseMilli,
  parseValue,
} from './quantity.js';
export { microTime, rfc3339Seconds, truncateTime } from './time.js';

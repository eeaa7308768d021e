/**
 * The kubelet's pod admission: before a pod is handed to the pod workers, each
 * {@link PodAdmitHandler} may refuse it with upstream's one-word reason and message. Included:
 * the predicates ({@link PredicateAdmitHandler}: resources fit against the Node's allocatable
 * and the pods already admitted, node selector and required affinity, node name, host ports,
 * NoExecute taints, node OS), the sysctl allow-list ({@link SysctlAllowlist}) and admission
 * under node pressure ({@link NodePressureAdmitHandler}, fed by the eviction manager).
 *
 * @example
 * ```ts
 * const admitter = new PodAdmitter({
 *   handlers: [new SysctlAllowlist(), new PredicateAdmitHandler({ node: () => node })],
 * });
 * const result = admitter.admit(pod);
 * if (!result.admit) console.log(result.reason, result.message); // OutOfcpu Node didn't have enough resource: cpu, ...
 * ```
 *
 * @packageDocumentation
 */
export {
  ADMITTED,
  type NodeGetter,
  type PodAdmitAttributes,
  type PodAdmitHandler,
  type PodAdmitResult,
} from './admit-handler.js';
export { type InsufficientResource, insufficientResourceMessage, insufficientResources } from './fit.js';
export { requiredNodeAffinityMatches } from './node-affinity.js';
export { type HostPortUse, NodeInfo, podHostPorts } from './node-info.js';
export {
  isCriticalPod,
  NodePressureAdmitHandler,
  type NodePressureCondition,
  type NodePressureSource,
  SYSTEM_CRITICAL_PRIORITY,
} from './node-pressure.js';
export { PodAdmitter, type PodAdmitterOptions, rejectedPodStatus } from './pod-admitter.js';
export {
  outOfResourceReason,
  PREDICATE_REASONS,
  PredicateAdmitHandler,
  type PredicateAdmitHandlerOptions,
  type PredicateName,
} from './predicate-admit-handler.js';
export {
  amountOf,
  isExtendedResourceName,
  isScalarResourceName,
  nodeAllocatable,
  podRequests,
  type ResourceAmounts,
} from './resource-requests.js';
export {
  normalizeSysctlName,
  SAFE_SYSCTLS,
  SysctlAllowlist,
  type SysctlNamespace,
  sysctlNamespace,
} from './sysctl-allowlist.js';
export { findMatchingUntoleratedTaint, toleratesTaint } from './taints.js';

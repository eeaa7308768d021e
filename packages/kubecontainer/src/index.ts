/**
 * The kubelet's runtime pod model (upstream `pkg/kubelet/container`): what the runtime knows
 * about a pod ({@link PodStatus}, {@link ContainerRuntimeStatus}), what a relist sees
 * ({@link RuntimePod}), the `io.kubernetes.*` label and annotation keys the kubelet writes on
 * sandboxes and containers, the newest-first order of statuses, the container rules the runtime manager and the prober share
 * (`$(VAR)` expansion, sidecars, kill grace periods), and the conversion from CRI
 * messages ({@link criPodStatusSource}, {@link criRuntimeLister}). `@nodeagent/pleg` caches
 * this model and `@nodeagent/kuberuntime` plans from it; both import it from here. It also holds
 * the path-safety rules for laying pod files out on the node: kube-apiserver's name and path
 * checks ({@link isDns1123Label}, {@link validateLocalDescendingPath}, …) and
 * {@link safeMakeDir}, which never follows a symlink out of a volume.
 *
 * @example
 * ```ts
 * import { createCriClient } from '@nodeagent/cri';
 * import { criPodStatusSource, criRuntimeLister } from '@nodeagent/kubecontainer';
 *
 * const cri = createCriClient('unix:///run/containerd/containerd.sock');
 * for (const pod of await criRuntimeLister(cri).listPods()) {
 *   const status = await criPodStatusSource(cri).getPodStatus(pod.id, pod.name, pod.namespace);
 *   console.log(pod.namespace, pod.name, status.ips, status.containerStatuses.map((c) => c.state));
 * }
 * ```
 *
 * @packageDocumentation
 */

export {
  type ContainerKillReason,
  isRestartableInitContainer,
  MINIMUM_GRACE_PERIOD_SECONDS,
  terminationGracePeriodSeconds,
} from './container-rules.js';
export {
  nsToMs,
  podStatusFromContainerEvent,
  sandboxIps,
  sandboxToContainerState,
  sandboxToRuntimeContainer,
  toContainerRuntimeStatus,
  toRuntimeContainer,
  toRuntimeContainerState,
} from './cri-convert.js';
export {
  type CriPodStatusRuntime,
  type CriPodStatusSourceOptions,
  criPodStatusSource,
  type TerminationMessageReader,
} from './cri-pod-status-source.js';
export { expand, expandContainerCommandOnlyStatic } from './expansion.js';
export {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_PORTS_ANNOTATION,
  CONTAINER_PRESTOP_HANDLER_ANNOTATION,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION,
  CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION,
  formatContainerHash,
  KUBERNETES_CONTAINER_NAME_LABEL,
  KUBERNETES_POD_NAME_LABEL,
  KUBERNETES_POD_NAMESPACE_LABEL,
  KUBERNETES_POD_UID_LABEL,
  type LabelledPodInfo,
  POD_DELETION_GRACE_PERIOD_ANNOTATION,
  POD_TERMINATION_GRACE_PERIOD_ANNOTATION,
  parseContainerHash,
  parseRestartCount,
  podInfoFromLabels,
} from './labels.js';
export {
  DNS1123_LABEL_ERROR_MESSAGE,
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_ERROR_MESSAGE,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  formatFieldError,
  isDns1123Label,
  isDns1123Subdomain,
  PATH_COMPONENT_MAX_BYTES,
  type PathFieldError,
  validateLocalDescendingPath,
  validatePathComponent,
  validatePathNoBacksteps,
} from './path-validation.js';
export { effectiveRequests, podQosClass, type QosContainer, type QosPod } from './pod-qos.js';
export {
  aggregateContainerResources,
  podLimitsMilli,
  podRequestsMilli,
  type ResourceContainer,
  type ResourceMilli,
  type ResourcePod,
} from './pod-resources.js';
export {
  type ContainerRuntimeStatus,
  emptyPodStatus,
  findContainerStatusByName,
  type KnownRuntimeIds,
  type PodStatus,
  type PodStatusSource,
  type RuntimeContainer,
  type RuntimeContainerState,
  type RuntimePod,
  runningContainerStatuses,
} from './pod-status.js';
export {
  type CriListerRuntime,
  type CriRuntimeListerOptions,
  criRuntimeLister,
  type RuntimeLister,
} from './runtime-lister.js';
export { safeMakeDir, UnsafePathError } from './safe-path.js';
export { sortContainerStatusesByCreationTime } from './status-order.js';

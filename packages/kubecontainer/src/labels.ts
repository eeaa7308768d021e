/**
 * The `io.kubernetes.*` label and annotation keys the kubelet puts on CRI sandboxes and
 * containers (upstream `pkg/kubelet/types/labels.go` and `pkg/kubelet/kuberuntime/labels.go`).
 * `@nodeagent/pleg` reads the pod identity from them; `@nodeagent/kuberuntime` writes them.
 *
 * @module
 */

/** Label on sandboxes and containers: the pod's name. */
export const KUBERNETES_POD_NAME_LABEL = 'io.kubernetes.pod.name';
/** Label on sandboxes and containers: the pod's namespace. */
export const KUBERNETES_POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
/** Label on sandboxes and containers: the pod's UID. */
export const KUBERNETES_POD_UID_LABEL = 'io.kubernetes.pod.uid';
/** Label on containers: the container's name in the pod spec. */
export const KUBERNETES_CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';

/** Annotation on containers: the container spec hash (an unsigned 64-bit hash in lowercase hexadecimal, no prefix). */
export const CONTAINER_HASH_ANNOTATION = 'io.kubernetes.container.hash';
/** Annotation on containers: how many times the kubelet restarted this container (decimal). */
export const CONTAINER_RESTART_COUNT_ANNOTATION = 'io.kubernetes.container.restartCount';
/** Annotation on containers: the container's `terminationMessagePath`. */
export const CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION = 'io.kubernetes.container.terminationMessagePath';
/** Annotation on containers: the container's `terminationMessagePolicy` (`File` or `FallbackToLogsOnError`). */
export const CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION =
  'io.kubernetes.container.terminationMessagePolicy';
/** Annotation on containers: the pod's `deletionGracePeriodSeconds`, when set. */
export const POD_DELETION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.deletionGracePeriod';
/** Annotation on containers: the pod's `terminationGracePeriodSeconds`, when set. */
export const POD_TERMINATION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.terminationGracePeriod';
/** Annotation on containers: the container's ports as JSON (list of `ContainerPort`). */
export const CONTAINER_PORTS_ANNOTATION = 'io.kubernetes.container.ports';
/** Annotation on containers: the container's `lifecycle.preStop` handler as JSON. */
export const CONTAINER_PRESTOP_HANDLER_ANNOTATION = 'io.kubernetes.container.preStopHandler';

/** The pod identity carried by kubelet labels; a missing label is `''`. */
export interface LabelledPodInfo {
  /** Pod UID (`io.kubernetes.pod.uid`). */
  readonly uid: string;
  /** Pod name (`io.kubernetes.pod.name`). */
  readonly name: string;
  /** Pod namespace (`io.kubernetes.pod.namespace`). */
  readonly namespace: string;
}

/** Reads the pod identity from a sandbox's or container's labels. */
export function podInfoFromLabels(labels: Readonly<Record<string, string>>): LabelledPodInfo {
  return {
    uid: labels[KUBERNETES_POD_UID_LABEL] ?? '',
    name: labels[KUBERNETES_POD_NAME_LABEL] ?? '',
    namespace: labels[KUBERNETES_POD_NAMESPACE_LABEL] ?? '',
  };
}

/**
 * Parses the container hash annotation (hexadecimal, as the kubelet writes it) as an unsigned
 * 64-bit integer. A missing or malformed annotation gives `0n` (upstream logs and uses 0).
 */
export function parseContainerHash(annotations: Readonly<Record<string, string>>): bigint {
  const raw = annotations[CONTAINER_HASH_ANNOTATION];
  if (raw === undefined || !/^[0-9a-fA-F]{1,16}$/.test(raw)) return 0n;
  return BigInt(`0x${raw}`);
}

/** Formats a container hash for {@link CONTAINER_HASH_ANNOTATION} (lowercase hex, as the kubelet). */
export function formatContainerHash(hash: bigint): string {
  return BigInt.asUintN(64, hash).toString(16);
}

/** Parses the restart-count annotation; missing or malformed gives 0 (as upstream). */
export function parseRestartCount(annotations: Readonly<Record<string, string>>): number {
  const raw = annotations[CONTAINER_RESTART_COUNT_ANNOTATION];
  if (raw === undefined || !/^[0-9]+$/.test(raw)) return 0;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : 0;
}

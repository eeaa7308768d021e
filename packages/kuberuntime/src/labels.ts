/**
 * The `io.kubernetes.*` labels and annotations the kubelet puts on sandboxes and containers
 * (upstream `kuberuntime/labels.go`), and reading them back to restore enough of a pod and a
 * container to kill it after an agent restart (`restoreSpecsFromContainerLabels`).
 *
 * @module
 */
import type { V1Container, V1ContainerPort, V1LifecycleHandler, V1Pod } from '@kubernetes/client-node';
import {
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
  POD_DELETION_GRACE_PERIOD_ANNOTATION,
  POD_TERMINATION_GRACE_PERIOD_ANNOTATION,
} from '@nodeagent/kubecontainer';
import { hashContainer } from './container-hash.js';
import { goJsonContainerPorts, goJsonLifecycleHandler } from './go-json.js';

/** Default `terminationMessagePath` (API default). */
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';

/** Sandbox labels: the pod's labels plus its name, namespace and UID (upstream `newPodLabels`). */
export function newPodLabels(pod: V1Pod): Record<string, string> {
  return {
    ...(pod.metadata?.labels ?? {}),
    [KUBERNETES_POD_NAME_LABEL]: pod.metadata?.name ?? '',
    [KUBERNETES_POD_NAMESPACE_LABEL]: pod.metadata?.namespace ?? '',
    [KUBERNETES_POD_UID_LABEL]: pod.metadata?.uid ?? '',
  };
}

/** Sandbox annotations: the pod's annotations (upstream `newPodAnnotations`). */
export function newPodAnnotations(pod: V1Pod): Record<string, string> {
  return { ...(pod.metadata?.annotations ?? {}) };
}

/** Container labels: pod name, namespace, UID and container name (upstream `newContainerLabels`). */
export function newContainerLabels(container: V1Container, pod: V1Pod): Record<string, string> {
  return {
    [KUBERNETES_POD_NAME_LABEL]: pod.metadata?.name ?? '',
    [KUBERNETES_POD_NAMESPACE_LABEL]: pod.metadata?.namespace ?? '',
    [KUBERNETES_POD_UID_LABEL]: pod.metadata?.uid ?? '',
    [KUBERNETES_CONTAINER_NAME_LABEL]: container.name,
  };
}

/**
 * Container annotations (upstream `newContainerAnnotations`): spec hash, restart count,
 * termination message path / policy, pod grace periods when set, the preStop handler and the
 * ports as Go-style JSON.
 */
export function newContainerAnnotations(
  container: V1Container,
  pod: V1Pod,
  restartCount: number,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const out: Record<string, string> = { ...extra };
  out[CONTAINER_HASH_ANNOTATION] = formatContainerHash(hashContainer(container));
  out[CONTAINER_RESTART_COUNT_ANNOTATION] = String(restartCount);
  out[CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION] =
    container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH;
  out[CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION] = container.terminationMessagePolicy ?? 'File';
  const deletionGrace = pod.metadata?.deletionGracePeriodSeconds;
  if (deletionGrace != null) out[POD_DELETION_GRACE_PERIOD_ANNOTATION] = String(deletionGrace);
  const terminationGrace = pod.spec?.terminationGracePeriodSeconds;
  if (terminationGrace != null) out[POD_TERMINATION_GRACE_PERIOD_ANNOTATION] = String(terminationGrace);
  const preStop = container.lifecycle?.preStop;
  if (preStop != null) out[CONTAINER_PRESTOP_HANDLER_ANNOTATION] = goJsonLifecycleHandler(preStop);
  if (container.ports !== undefined && container.ports.length > 0) {
    out[CONTAINER_PORTS_ANNOTATION] = goJsonContainerPorts(container.ports);
  }
  return out;
}

function intOrUndefined(text: string | undefined): number | undefined {
  if (text === undefined || !/^-?[0-9]+$/.test(text)) return undefined;
  return Number(text);
}

/**
 * Rebuilds the parts of a pod and container the kill path needs from a container's CRI labels
 * and annotations (upstream `restoreSpecsFromContainerLabels`): identity, grace periods, the
 * preStop handler and the ports. Malformed JSON annotations are dropped (logged by the caller).
 */
export function restoreSpecsFromLabels(
  labels: Readonly<Record<string, string>>,
  annotations: Readonly<Record<string, string>>,
): { pod: V1Pod; container: V1Container } {
  const pod: V1Pod = {
    metadata: {
      name: labels[KUBERNETES_POD_NAME_LABEL] ?? '',
      namespace: labels[KUBERNETES_POD_NAMESPACE_LABEL] ?? '',
      uid: labels[KUBERNETES_POD_UID_LABEL] ?? '',
    },
    spec: { containers: [] },
  };
  const deletionGrace = intOrUndefined(annotations[POD_DELETION_GRACE_PERIOD_ANNOTATION]);
  if (deletionGrace !== undefined && pod.metadata) pod.metadata.deletionGracePeriodSeconds = deletionGrace;
  const terminationGrace = intOrUndefined(annotations[POD_TERMINATION_GRACE_PERIOD_ANNOTATION]);
  if (terminationGrace !== undefined && pod.spec) pod.spec.terminationGracePeriodSeconds = terminationGrace;
  const container: V1Container = { name: labels[KUBERNETES_CONTAINER_NAME_LABEL] ?? '' };
  const tmp = annotations[CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION];
  if (tmp !== undefined) container.terminationMessagePath = tmp;
  const preStop = parseJson<V1LifecycleHandler>(annotations[CONTAINER_PRESTOP_HANDLER_ANNOTATION]);
  if (preStop !== undefined) container.lifecycle = { preStop };
  const ports = parseJson<V1ContainerPort[]>(annotations[CONTAINER_PORTS_ANNOTATION]);
  if (Array.isArray(ports)) container.ports = ports;
  pod.spec?.containers.push(container);
  return { pod, container };
}

function parseJson<T>(text: string | undefined): T | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/**
 * restartPolicy rules (upstream `kubecontainer.ShouldContainerBeRestarted`, pod-level
 * `shouldRestartOnFailure`; sidecar detection is `isRestartableInitContainer` of
 * `@nodeagent/kubecontainer`).
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import {
  type ContainerRuntimeStatus,
  findContainerStatusByName,
  type PodStatus,
} from '@nodeagent/kubecontainer';

/** The pod's restartPolicy (`Always` when unset, the API default). */
export function podRestartPolicy(pod: V1Pod): 'Always' | 'OnFailure' | 'Never' {
  const p = pod.spec?.restartPolicy;
  return p === 'Never' || p === 'OnFailure' ? p : 'Always';
}

/** Whether failed containers are restarted at all (policy is not `Never`). */
export function shouldRestartOnFailure(pod: V1Pod): boolean {
  return podRestartPolicy(pod) !== 'Never';
}

/** Whether the container's newest status is an exit with code 0. */
export function containerSucceeded(container: V1Container, status: PodStatus): boolean {
  const s = findContainerStatusByName(status, container.name);
  return s !== undefined && s.state === 'exited' && s.exitCode === 0;
}

/**
 * Whether a container that is not running should be (re)started: never once the pod is being
 * deleted; always when it never ran or is `created`/`unknown`; after an exit per the
 * container's own restartPolicy (sidecars: `Always`), else the pod's.
 */
export function shouldContainerBeRestarted(container: V1Container, pod: V1Pod, status: PodStatus): boolean {
  if (pod.metadata?.deletionTimestamp != null) return false;
  const s = findContainerStatusByName(status, container.name);
  if (s === undefined) return true;
  if (s.state === 'running') return false;
  if (s.state === 'unknown' || s.state === 'created') return true;
  const policy = container.restartPolicy === 'Always' ? 'Always' : podRestartPolicy(pod);
  if (policy === 'Never') return false;
  if (policy === 'OnFailure') return s.exitCode !== 0;
  return true;
}

/** Whether an init container's status counts as failed (upstream `isInitContainerFailed`). */
export function isInitContainerFailed(status: ContainerRuntimeStatus): boolean {
  if (status.reason.includes('OOMKilled')) return true;
  if (status.state === 'exited' && status.exitCode !== 0) return true;
  return status.state === 'unknown';
}

/**
 * The pod phase from its API container statuses (upstream `getPhase`, sidecar-aware).
 *
 * @module
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { isRestartableInitContainer } from '@nodeagent/kubecontainer';

/** The status of container `name`, if any. */
export function findStatus(
  statuses: readonly V1ContainerStatus[],
  name: string,
): V1ContainerStatus | undefined {
  return statuses.find((s) => s.name === name);
}

/** The pod phase (upstream `getPhase`, sidecar-aware). */
export function getPhase(
  pod: V1Pod,
  info: readonly V1ContainerStatus[],
  podIsTerminal: boolean,
  podHasInitialized: boolean,
): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  const spec = pod.spec;
  const policy = spec?.restartPolicy ?? 'Always';
  let pendingInit = 0;
  let pendingSidecars = 0;
  let failedInit = 0;
  for (const c of spec?.initContainers ?? []) {
    if (isRestartableInitContainer(c)) continue;
    const s = findStatus(info, c.name);
    if (s === undefined || s.state?.running != null) pendingInit++;
    else if (s.state?.terminated != null) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state?.waiting != null) {
      if (s.lastState?.terminated != null) {
        if (s.lastState.terminated.exitCode !== 0) failedInit++;
      } else pendingInit++;
    } else pendingInit++;
  }
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of spec?.initContainers ?? []) {
    if (!isRestartableInitContainer(c)) continue;
    const s = findStatus(info, c.name);
    if (s === undefined) unknown++;
    else if (s.state?.running != null) {
      if (s.started !== true) pendingSidecars++;
      running++;
    } else if (s.state?.terminated != null) {
      // terminated sidecars do not count
    } else if (s.state?.waiting != null) {
      if (s.lastState?.terminated == null) pendingSidecars++;
    } else {
      pendingSidecars++;
      unknown++;
    }
  }
  for (const c of spec?.containers ?? []) {
    const s = findStatus(info, c.name);
    if (s === undefined) unknown++;
    else if (s.state?.running != null) running++;
    else if (s.state?.terminated != null) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting != null) {
      if (s.lastState?.terminated != null) stopped++;
      else waiting++;
    } else unknown++;
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  if (pendingInit > 0 || (pendingSidecars > 0 && !podHasInitialized) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    const staticPod = (pod.metadata?.annotations?.['kubernetes.io/config.source'] ?? 'api') !== 'api';
    if (podIsTerminal && !staticPod) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

/**
 * Where the kubelet keeps a pod's files on the node: logs under
 * `<podLogsRoot>/<ns>_<name>_<uid>/<container>/<restartCount>.log`, volumes and per-container
 * files under `<podsRoot>/<uid>/` (upstream `BuildPodLogsDirectory`, `getPodDir`).
 *
 * @module
 */
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { validatePathComponent } from '@nodeagent/kubecontainer';
import { ContainerConfigError } from './errors.js';

/** `value` as one path component; the last line of defence behind the field validation. */
function component(value: string, what: string): string {
  const bad = validatePathComponent(value);
  if (bad.length > 0) throw new ContainerConfigError(`${what} ${JSON.stringify(value)} ${bad.join(', ')}`);
  return value;
}

/** Default root of pod log directories (kubelet `podLogsDir`). */
export const DEFAULT_POD_LOGS_ROOT = '/var/log/pods';
/** Default root of pod directories (`<kubelet root-dir>/pods`). */
export const DEFAULT_PODS_ROOT = '/var/lib/kubelet/pods';

/** `<root>/<namespace>_<name>_<uid>`. @throws ContainerConfigError when that is not one path component */
export function podLogsDirectory(root: string, namespace: string, name: string, uid: string): string {
  return join(root, component(`${namespace}_${name}_${uid}`, 'pod log directory'));
}

/** `<root>/<namespace>_<name>_<uid>/<container>`. */
export function containerLogsDirectory(root: string, pod: V1Pod, containerName: string): string {
  const m = pod.metadata;
  return join(
    podLogsDirectory(root, m?.namespace ?? '', m?.name ?? '', m?.uid ?? ''),
    component(containerName, 'container name'),
  );
}

/** `<container>/<restartCount>.log`, relative to the sandbox's log directory. */
export function containerLogPath(containerName: string, restartCount: number): string {
  return join(containerName, `${restartCount}.log`);
}

/** `<podsRoot>/<uid>`. */
export function podDirectory(podsRoot: string, uid: string): string {
  return join(podsRoot, component(uid, 'pod UID'));
}

/** `<podsRoot>/<uid>/volumes/kubernetes.io~empty-dir/<volume>`. */
export function emptyDirPath(podsRoot: string, uid: string, volume: string): string {
  return join(
    podDirectory(podsRoot, uid),
    'volumes',
    'kubernetes.io~empty-dir',
    component(volume, 'volume name'),
  );
}

/** `<podsRoot>/<uid>/containers/<container>`. */
export function podContainerDirectory(podsRoot: string, uid: string, containerName: string): string {
  return join(podDirectory(podsRoot, uid), 'containers', component(containerName, 'container name'));
}

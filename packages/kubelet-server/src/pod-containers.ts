/**
 * Finding a pod's containers: the spec of a container by name (upstream
 * `GetContainerSpec`), the container ID whose log `kubectl logs` reads (upstream
 * `validateContainerLogStatus`), and the running container or ready sandbox from the runtime.
 *
 * @module
 */
import { ContainerState, PodSandboxState } from '@nodeagent/cri';
import type {
  KubeletPod,
  KubeletPodContainer,
  KubeletPodContainerStatus,
  KubeletServerRuntime,
} from './kubelet-server-options.js';

/** A request the kubelet refuses with an HTTP status and a plain-text message, as upstream writes it. */
export class KubeletRequestError extends Error {
  override readonly name = 'KubeletRequestError';
  /** @param code HTTP status. @param message the body. */
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The spec of container `name` (regular, init or ephemeral). */
export function containerSpec(pod: KubeletPod, name: string): KubeletPodContainer | undefined {
  const s = pod.spec;
  return [...(s?.containers ?? []), ...(s?.initContainers ?? []), ...(s?.ephemeralContainers ?? [])].find(
    (c) => c.name === name,
  );
}

function statusOf(pod: KubeletPod, name: string): KubeletPodContainerStatus | undefined {
  const s = pod.status;
  return [
    ...(s?.containerStatuses ?? []),
    ...(s?.initContainerStatuses ?? []),
    ...(s?.ephemeralContainerStatuses ?? []),
  ].find((c) => c.name === name);
}

/** `containerd://abc` → `abc`. */
export function runtimeIdOf(containerID: string): string {
  const at = containerID.indexOf('://');
  return at < 0 ? containerID : containerID.slice(at + 3);
}

/**
 * The runtime ID of the container instance whose log to read, from the pod status.
 *
 * @throws {@link KubeletRequestError} (400) with upstream's messages when there is none.
 */
export function logContainerId(pod: KubeletPod, containerName: string, previous: boolean): string {
  const podName = pod.metadata?.name ?? '';
  const status = statusOf(pod, containerName);
  if (status === undefined) {
    throw new KubeletRequestError(400, `container "${containerName}" in pod "${podName}" is not available`);
  }
  let id: string | undefined;
  if (previous) {
    id = status.lastState?.terminated?.containerID;
    if (!id) {
      throw new KubeletRequestError(
        400,
        `previous terminated container "${containerName}" in pod "${podName}" not found`,
      );
    }
  } else if (status.state?.running !== undefined) {
    id = status.containerID;
  } else if (status.state?.terminated !== undefined) {
    id = status.state.terminated.containerID || status.containerID;
  } else {
    id = status.lastState?.terminated?.containerID;
    if (!id) {
      const reason = status.state?.waiting?.reason ?? '';
      throw new KubeletRequestError(
        400,
        `container "${containerName}" in pod "${podName}" is waiting to start: ${reason || 'unknown reason'}`,
      );
    }
  }
  if (!id) {
    throw new KubeletRequestError(400, `container "${containerName}" in pod "${podName}" is not available`);
  }
  return runtimeIdOf(id);
}

/** The running container `name` of the pod with `uid`, from the runtime. */
export async function runningContainerId(
  runtime: KubeletServerRuntime,
  uid: string,
  name: string,
): Promise<string> {
  const { containers } = await runtime.listContainers({
    filter: {
      state: { state: ContainerState.CONTAINER_RUNNING },
      labelSelector: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': name },
    },
  });
  const found = containers[0];
  if (found === undefined) throw new KubeletRequestError(404, `container not found ("${name}")`);
  return found.id;
}

/** The ready sandbox of the pod with `uid`. */
export async function readySandboxId(
  runtime: KubeletServerRuntime,
  uid: string,
  podName: string,
): Promise<string> {
  const { items } = await runtime.listPodSandbox({
    filter: {
      state: { state: PodSandboxState.SANDBOX_READY },
      labelSelector: { 'io.kubernetes.pod.uid': uid },
    },
  });
  const found = items[0];
  if (found === undefined) throw new KubeletRequestError(404, `pod not found ("${podName}")`);
  return found.id;
}

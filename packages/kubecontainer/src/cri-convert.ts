/**
 * Conversions from CRI messages to the kubelet's runtime model (upstream
 * `kuberuntime_container.go` `toKubeContainerStatus`, `toKubeContainer`, `sandboxToKubeContainer`,
 * and the evented PLEG's `GeneratePodStatus`).
 *
 * @module
 */
import {
  type Container,
  type ContainerEventResponse,
  ContainerState,
  type ContainerStatus,
  type PodSandbox,
  PodSandboxState,
  type PodSandboxStatus,
} from '@nodeagent/cri';
import {
  KUBERNETES_CONTAINER_NAME_LABEL,
  parseContainerHash,
  parseRestartCount,
  podInfoFromLabels,
} from './labels.js';
import type {
  ContainerRuntimeStatus,
  PodStatus,
  RuntimeContainer,
  RuntimeContainerState,
  RuntimePod,
} from './pod-status.js';
import { byCreatedDesc, sortContainerStatusesByCreationTime } from './status-order.js';

/** Nanoseconds since the epoch (CRI int64) to milliseconds since the epoch. */
export function nsToMs(ns: bigint): number {
  return Number(ns) / 1e6;
}

/** Maps a CRI container state to the kubelet's (upstream `toKubeContainerState`). */
export function toRuntimeContainerState(state: ContainerState): RuntimeContainerState {
  switch (state) {
    case ContainerState.CONTAINER_CREATED:
      return 'created';
    case ContainerState.CONTAINER_RUNNING:
      return 'running';
    case ContainerState.CONTAINER_EXITED:
      return 'exited';
    default:
      return 'unknown';
  }
}

/** Maps a sandbox state to a container state (upstream `SandboxToContainerState`). */
export function sandboxToContainerState(state: PodSandboxState): RuntimeContainerState {
  switch (state) {
    case PodSandboxState.SANDBOX_READY:
      return 'running';
    case PodSandboxState.SANDBOX_NOTREADY:
      return 'exited';
    default:
      return 'unknown';
  }
}

/** A CRI container as a relist entry, from its list item or its `ContainerStatus`. */
export function toRuntimeContainer(c: Container | ContainerStatus): RuntimeContainer {
  return {
    id: c.id,
    name: c.metadata?.name ?? c.labels[KUBERNETES_CONTAINER_NAME_LABEL] ?? '',
    image: c.image?.image ?? '',
    imageRef: c.imageRef,
    hash: parseContainerHash(c.annotations),
    state: toRuntimeContainerState(c.state),
    createdAt: nsToMs(c.createdAt),
  };
}

/** A listed CRI sandbox as a relist entry (sandboxes are containers to PLEG). */
export function sandboxToRuntimeContainer(s: PodSandbox | PodSandboxStatus): RuntimeContainer {
  return {
    id: s.id,
    name: s.metadata?.name ?? '',
    image: '',
    imageRef: '',
    hash: 0n,
    state: sandboxToContainerState(s.state),
    createdAt: nsToMs(s.createdAt),
  };
}

/**
 * A CRI container status in the kubelet's model (upstream `toKubeContainerStatus`): the start
 * time only once the container left CREATED; exit data only when EXITED.
 */
export function toContainerRuntimeStatus(s: ContainerStatus): ContainerRuntimeStatus {
  const state = toRuntimeContainerState(s.state);
  const exited = state === 'exited';
  return {
    id: s.id,
    name: s.labels[KUBERNETES_CONTAINER_NAME_LABEL] ?? s.metadata?.name ?? '',
    state,
    createdAt: nsToMs(s.createdAt),
    startedAt: state === 'created' ? 0 : nsToMs(s.startedAt),
    finishedAt: exited ? nsToMs(s.finishedAt) : 0,
    exitCode: exited ? s.exitCode : 0,
    image: s.image?.image ?? '',
    imageRef: s.imageRef,
    imageId: s.imageId !== '' ? s.imageId : s.imageRef,
    imageRuntimeHandler: s.image?.runtimeHandler ?? '',
    hash: parseContainerHash(s.annotations),
    restartCount: parseRestartCount(s.annotations),
    reason: exited ? s.reason : '',
    message: exited ? s.message : '',
    resources: s.resources,
    user: s.user,
    mounts: s.mounts,
    logPath: s.logPath,
    labels: s.labels,
    annotations: s.annotations,
  };
}

/**
 * The pod IPs of a sandbox status, primary first (upstream `determinePodSandboxIPs`); none
 * when the runtime does not report the network.
 */
export function sandboxIps(status: PodSandboxStatus): string[] {
  const network = status.network;
  if (network === undefined || network.ip === '') return [];
  return [network.ip, ...network.additionalIps.map((p) => p.ip).filter((ip) => ip !== '')];
}

/**
 * The pod status a CRI container event carries (upstream `GeneratePodStatus`): its sandbox
 * status (the only sandbox listed), the statuses of the sandbox's containers (newest first) and
 * the sandbox's IPs; stamped with the event's `created_at`. `undefined` when the event has no
 * sandbox status or metadata.
 */
export function podStatusFromContainerEvent(event: ContainerEventResponse): PodStatus | undefined {
  const sandbox = event.podSandboxStatus;
  const metadata = sandbox?.metadata;
  if (sandbox === undefined || metadata === undefined) return undefined;
  return {
    id: metadata.uid,
    name: metadata.name,
    namespace: metadata.namespace,
    ips: sandboxIps(sandbox),
    containerStatuses: sortContainerStatusesByCreationTime(
      event.containersStatuses.map(toContainerRuntimeStatus),
    ),
    sandboxStatuses: [sandbox],
    timestamp: nsToMs(event.createdAt),
  };
}

interface MutablePod {
  id: string;
  name: string;
  namespace: string;
  createdAt: number;
  readonly containers: RuntimeContainer[];
  readonly sandboxes: RuntimeContainer[];
}

/**
 * Groups listed sandboxes and containers into pods as upstream's `GetPods` does: sandboxes by
 * their metadata UID, containers by the `io.kubernetes.pod.uid` label; items without metadata
 * are skipped. Pods come newest first.
 */
export function runtimePodsFromLists(
  sandboxItems: readonly (PodSandbox | PodSandboxStatus)[],
  containerItems: readonly (Container | ContainerStatus)[],
): RuntimePod[] {
  const pods = new Map<string, MutablePod>();
  for (const s of sandboxItems) {
    if (s.metadata === undefined) continue;
    const id = s.metadata.uid !== '' ? s.metadata.uid : podInfoFromLabels(s.labels).uid;
    let pod = pods.get(id);
    if (pod === undefined) {
      pod = {
        id,
        name: s.metadata.name,
        namespace: s.metadata.namespace,
        createdAt: 0,
        containers: [],
        sandboxes: [],
      };
      pods.set(id, pod);
    }
    const converted = sandboxToRuntimeContainer(s);
    pod.sandboxes.push(converted);
    if (converted.createdAt > pod.createdAt) pod.createdAt = converted.createdAt;
  }
  for (const c of containerItems) {
    if (c.metadata === undefined) continue;
    const info = podInfoFromLabels(c.labels);
    let pod = pods.get(info.uid);
    if (pod === undefined) {
      pod = {
        id: info.uid,
        name: info.name,
        namespace: info.namespace,
        createdAt: 0,
        containers: [],
        sandboxes: [],
      };
      pods.set(info.uid, pod);
    }
    pod.containers.push(toRuntimeContainer(c));
  }
  return [...pods.values()].sort(byCreatedDesc);
}

/**
 * The fake's records rendered as CRI messages (statuses, list items, events).
 *
 * @module
 */
import type {
  Container,
  ContainerEventResponse,
  ContainerEventType,
  ContainerStatus,
  Image,
  PodSandbox,
  PodSandboxMetadata,
  PodSandboxStatus,
} from '../gen/runtime/v1/api.js';
import type { StoredImage } from './image-store.js';
import type { ContainerRecord, SandboxRecord } from './records.js';

function sandboxMetadata(sandbox: SandboxRecord): PodSandboxMetadata | undefined {
  const m = sandbox.config.metadata;
  return m === undefined ? undefined : { ...m };
}

/** `PodSandboxStatus` of a sandbox. */
export function toSandboxStatus(sandbox: SandboxRecord): PodSandboxStatus {
  const options = sandbox.config.linux?.securityContext?.namespaceOptions;
  return {
    id: sandbox.id,
    metadata: sandboxMetadata(sandbox),
    state: sandbox.state,
    createdAt: sandbox.createdAtNs,
    network: { ip: sandbox.ip, additionalIps: [] },
    // The kubelet compares these options with the pod's to decide whether the sandbox
    // changed; without them it would recreate every sandbox.
    linux: { namespaces: { options: options === undefined ? undefined : { ...options } } },
    labels: { ...sandbox.config.labels },
    annotations: { ...sandbox.config.annotations },
    runtimeHandler: sandbox.runtimeHandler,
  };
}

/** `PodSandbox` list item of a sandbox. */
export function toSandboxItem(sandbox: SandboxRecord): PodSandbox {
  return {
    id: sandbox.id,
    metadata: sandboxMetadata(sandbox),
    state: sandbox.state,
    createdAt: sandbox.createdAtNs,
    labels: { ...sandbox.config.labels },
    annotations: { ...sandbox.config.annotations },
    runtimeHandler: sandbox.runtimeHandler,
  };
}

/** `ContainerStatus` of a container. */
export function toContainerStatus(c: ContainerRecord): ContainerStatus {
  return {
    id: c.id,
    metadata: c.config.metadata === undefined ? undefined : { ...c.config.metadata },
    state: c.state,
    createdAt: c.createdAtNs,
    startedAt: c.startedAtNs,
    finishedAt: c.finishedAtNs,
    exitCode: c.exitCode,
    image: { ...c.image },
    imageRef: c.imageId,
    reason: c.reason,
    message: c.message,
    labels: { ...c.config.labels },
    annotations: { ...c.config.annotations },
    mounts: c.config.mounts.map((m) => ({ ...m })),
    logPath: c.logPath,
    resources: c.resources,
    imageId: c.imageId,
    user: undefined,
    stopSignal: c.config.stopSignal,
  };
}

/** `Container` list item of a container. */
export function toContainerItem(c: ContainerRecord): Container {
  return {
    id: c.id,
    podSandboxId: c.sandboxId,
    metadata: c.config.metadata === undefined ? undefined : { ...c.config.metadata },
    image: { ...c.image },
    imageRef: c.imageId,
    state: c.state,
    createdAt: c.createdAtNs,
    labels: { ...c.config.labels },
    annotations: { ...c.config.annotations },
    imageId: c.imageId,
  };
}

/** `Image` of a stored image. */
export function toImage(image: StoredImage): Image {
  // As containerd's getUserFromImage: the part before ':' (user:group), a number is the uid.
  const user = image.user.split(':')[0] ?? '';
  const numericUser = /^\d+$/.test(user);
  return {
    id: image.id,
    repoTags: [...image.repoTags],
    repoDigests: [...image.repoDigests],
    size: BigInt(image.sizeBytes),
    uid: numericUser ? { value: BigInt(user) } : undefined,
    username: numericUser ? '' : user,
    spec: { image: image.id, annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: '' },
    pinned: image.pinned,
  };
}

/**
 * A container event as containerd sends it: the status of the sandbox and of all its
 * (remaining) containers at the time of the event.
 */
export function toContainerEvent(
  containerId: string,
  type: ContainerEventType,
  atNs: bigint,
  sandbox: SandboxRecord | undefined,
  containers: readonly ContainerRecord[],
): ContainerEventResponse {
  return {
    containerId,
    containerEventType: type,
    createdAt: atNs,
    podSandboxStatus: sandbox === undefined ? undefined : toSandboxStatus(sandbox),
    containersStatuses: containers.map(toContainerStatus),
  };
}

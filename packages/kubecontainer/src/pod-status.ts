/**
 * The kubelet's runtime view of a pod (upstream `kubecontainer.PodStatus`, `kubecontainer.Pod`):
 * the model `@nodeagent/pleg` caches and `@nodeagent/kuberuntime` plans from.
 *
 * @module
 */
import type { ContainerResources, ContainerUser, Mount, PodSandboxStatus } from '@nodeagent/cri';

/**
 * A container's state as the kubelet sees it (upstream `kubecontainer.State`). The CRI
 * `CONTAINER_CREATED` / `RUNNING` / `EXITED` / `UNKNOWN` map one to one.
 */
export type RuntimeContainerState = 'created' | 'running' | 'exited' | 'unknown';

/**
 * One container's status from the runtime (upstream `kubecontainer.Status`). Times are ms since
 * the epoch (0 = not set): `startedAt` is set once the container left `created`, `finishedAt`,
 * `exitCode`, `reason` and `message` only when it `exited` (as upstream).
 */
export interface ContainerRuntimeStatus {
  /** CRI container ID. */
  readonly id: string;
  /** Container name in the pod spec (the `io.kubernetes.container.name` label, else the CRI metadata name). */
  readonly name: string;
  /** Lifecycle state. */
  readonly state: RuntimeContainerState;
  /** Creation time, ms since the epoch. */
  readonly createdAt: number;
  /** Start time, ms since the epoch; 0 while `created`. */
  readonly startedAt: number;
  /** Finish time, ms since the epoch; 0 unless `exited`. */
  readonly finishedAt: number;
  /** Exit code; 0 unless `exited`. */
  readonly exitCode: number;
  /** Image as requested (`image.image` of the CRI status). */
  readonly image: string;
  /** Digested reference of the image in use (CRI `image_ref`). */
  readonly imageRef: string;
  /** Node-local image ID (CRI `image_id`, falling back to `image_ref` for older runtimes). */
  readonly imageId: string;
  /** Runtime handler the image was pulled for (CRI `image.runtime_handler`). */
  readonly imageRuntimeHandler: string;
  /** Container spec hash from the `io.kubernetes.container.hash` annotation; `0n` when absent. */
  readonly hash: bigint;
  /** Restart count from the `io.kubernetes.container.restartCount` annotation; 0 when absent. */
  readonly restartCount: number;
  /** CamelCase reason (e.g. `Completed`, `Error`, `OOMKilled`); `''` unless `exited`. */
  readonly reason: string;
  /** Message, with the termination message appended when a reader is configured; `''` unless `exited`. */
  readonly message: string;
  /** Resources currently applied, as the runtime reports them. */
  readonly resources: ContainerResources | undefined;
  /** Identity of the container's first process, when reported. */
  readonly user: ContainerUser | undefined;
  /** Mounts in use. */
  readonly mounts: readonly Mount[];
  /** Host path of the container's log file. */
  readonly logPath: string;
  /** CRI labels (the kubelet's `io.kubernetes.*` identity labels among them). */
  readonly labels: Readonly<Record<string, string>>;
  /** CRI annotations (hash, restart count, grace periods, preStop handler, ports...). */
  readonly annotations: Readonly<Record<string, string>>;
}

/**
 * Everything the runtime knows about one pod (upstream `kubecontainer.PodStatus`): what the
 * pod status cache holds and what pod sync decisions are made from.
 */
export interface PodStatus {
  /** Pod UID. */
  readonly id: string;
  /** Pod name. */
  readonly name: string;
  /** Pod namespace. */
  readonly namespace: string;
  /** Pod IPs (primary first) of the newest sandbox while it is ready. */
  readonly ips: readonly string[];
  /** Statuses of all the pod's containers, newest first (by creation time). */
  readonly containerStatuses: readonly ContainerRuntimeStatus[];
  /** CRI statuses of all the pod's sandboxes, newest first. */
  readonly sandboxStatuses: readonly PodSandboxStatus[];
  /** When this status was taken, ms since the epoch. */
  readonly timestamp: number;
}

/**
 * A container or sandbox in a relist (upstream `kubecontainer.Container`). Sandboxes appear as
 * containers with the state `running` (READY) or `exited` (NOTREADY).
 */
export interface RuntimeContainer {
  /** CRI container (or sandbox) ID. */
  readonly id: string;
  /** Container name (sandboxes: the pod name from the sandbox metadata). */
  readonly name: string;
  /** Image as requested; `''` for sandboxes. */
  readonly image: string;
  /** Digested image reference (CRI `image_ref`); `''` for sandboxes. */
  readonly imageRef: string;
  /** Container spec hash from the annotation; `0n` for sandboxes. */
  readonly hash: bigint;
  /** State at listing time. */
  readonly state: RuntimeContainerState;
  /** Creation time, ms since the epoch. */
  readonly createdAt: number;
}

/**
 * A pod as one relist sees it (upstream `kubecontainer.Pod`): grouped by pod UID (sandbox
 * metadata UID, container `io.kubernetes.pod.uid` label).
 */
export interface RuntimePod {
  /** Pod UID. */
  readonly id: string;
  /** Pod name. */
  readonly name: string;
  /** Pod namespace. */
  readonly namespace: string;
  /** Creation time of the pod's newest sandbox, ms since the epoch; 0 when it has none. */
  readonly createdAt: number;
  /** The pod's containers. */
  readonly containers: readonly RuntimeContainer[];
  /** The pod's sandboxes. */
  readonly sandboxes: readonly RuntimeContainer[];
}

/**
 * Reads one pod's full status from the runtime (upstream `Runtime.GetPodStatus`). PLEG calls it
 * for pods that changed; `@nodeagent/kuberuntime` reuses the same implementation.
 */
export interface PodStatusSource {
  /**
   * The pod's current status. A pod the runtime does not know yields an empty status (no
   * sandboxes, no containers), not an error.
   */
  getPodStatus(uid: string, name: string, namespace: string, signal?: AbortSignal): Promise<PodStatus>;
  /**
   * The pod as a relist lists it (`RuntimeLister.listPod`; `undefined` when the runtime has
   * nothing of it) and its status, from the same runtime reads: a single-pod relist that lists
   * and inspects the pod makes one round of list calls instead of two. `listedAt` is the clock
   * time at which the lists had returned; every status is at least as new as the lists.
   * The status reads of `known` IDs (those the caller already knows, e.g. a sandbox and
   * container it just made) may go out with the lists: an ID the lists do not show is dropped,
   * and a read whose state differs from the listed one is made again. Optional.
   */
  listPodAndGetStatus?(
    uid: string,
    name: string,
    namespace: string,
    signal?: AbortSignal,
    known?: KnownRuntimeIds,
  ): Promise<{ readonly pod: RuntimePod | undefined; readonly status: PodStatus; readonly listedAt: number }>;
  /**
   * The pod and its status read from the given sandboxes and containers alone, with no list
   * calls (what an evented PLEG takes from a runtime event): IDs the runtime no longer has are
   * dropped, and `pod` is `undefined` when none is left. Anything of the pod not named in `ids`
   * is missing from the answer. `readAt` is the clock time at which every read had returned.
   * Optional.
   */
  getPodAndStatusByIds?(
    uid: string,
    name: string,
    namespace: string,
    ids: KnownRuntimeIds,
    signal?: AbortSignal,
  ): Promise<{ readonly pod: RuntimePod | undefined; readonly status: PodStatus; readonly readAt: number }>;
}

/** Sandbox and container IDs of one pod that a caller already knows (a hint, never the truth). */
export interface KnownRuntimeIds {
  /** Pod sandbox IDs. @default [] */
  readonly sandboxIds?: readonly string[];
  /** Container IDs. @default [] */
  readonly containerIds?: readonly string[];
}

/** An empty status for a pod the runtime has nothing of (what a cache miss returns). */
export function emptyPodStatus(uid: string, name = '', namespace = '', timestamp = 0): PodStatus {
  return { id: uid, name, namespace, ips: [], containerStatuses: [], sandboxStatuses: [], timestamp };
}

/** The newest status of the container named `name`, if any (upstream `FindContainerStatusByName`). */
export function findContainerStatusByName(
  status: PodStatus,
  name: string,
): ContainerRuntimeStatus | undefined {
  return status.containerStatuses.find((c) => c.name === name);
}

/** The statuses of the pod's running containers (upstream `GetRunningContainerStatuses`). */
export function runningContainerStatuses(status: PodStatus): ContainerRuntimeStatus[] {
  return status.containerStatuses.filter((c) => c.state === 'running');
}

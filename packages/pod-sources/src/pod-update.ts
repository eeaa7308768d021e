/**
 * The vocabulary of pod config (upstream `pkg/kubelet/types/pod_update.go`): source names,
 * the operations the merge emits, and the annotations the kubelet puts on pods it received.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { API_SERVER_SOURCE, CONFIG_SOURCE_ANNOTATION_KEY } from '@nodeagent/pod-workers';

/** The API server source. */
export const API_SOURCE = API_SERVER_SOURCE;
/** The static pod manifest directory (`--pod-manifest-path`). */
export const FILE_SOURCE = 'file';
/** The static pod URL (`--manifest-url`). */
export const HTTP_SOURCE = 'http';

/** `kubernetes.io/config.hash`: the static pod's UID (the hash of its manifest). */
export const CONFIG_HASH_ANNOTATION = 'kubernetes.io/config.hash';
/** `kubernetes.io/config.source`: the source a pod came from (`api`, `file`, `http`). */
export const CONFIG_SOURCE_ANNOTATION = CONFIG_SOURCE_ANNOTATION_KEY;
/** `kubernetes.io/config.seen`: when the agent first saw the pod. */
export const CONFIG_SEEN_ANNOTATION = 'kubernetes.io/config.seen';
/** `kubernetes.io/config.mirror`: on a mirror pod, the config hash of its static pod. */
export const CONFIG_MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/** The annotations the agent sets itself; ignored when comparing two versions of a pod. */
export const LOCAL_ANNOTATIONS: readonly string[] = Object.freeze([
  CONFIG_SOURCE_ANNOTATION,
  CONFIG_MIRROR_ANNOTATION,
  CONFIG_SEEN_ANNOTATION,
]);

/**
 * What happened to the pods of an update:
 * - `ADD`: new pods (an empty ADD also marks a source seen);
 * - `UPDATE`: pods whose spec, labels or annotations changed;
 * - `DELETE`: pods the API server is deleting gracefully (`deletionTimestamp` set);
 * - `REMOVE`: pods gone from their source;
 * - `RECONCILE`: pods of which only the status changed.
 */
export type PodOperation = 'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE' | 'RECONCILE';

/** One merged notification. */
export interface PodUpdate {
  /** What happened. */
  readonly op: PodOperation;
  /** The pods it happened to (empty only for the ADD that marks a source seen). */
  readonly pods: readonly V1Pod[];
  /** The source the pods belong to. */
  readonly source: string;
}

/** What a source sends into the merge: a full snapshot (`SET`) or an incremental change. */
export interface SourceUpdate {
  /** `SET` replaces everything the source had; the others change single pods. */
  readonly op: 'SET' | 'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE';
  /** The pods. */
  readonly pods: readonly V1Pod[];
}

/** Whether the pod is a mirror pod (an API copy of a static pod). */
export function isMirrorPod(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION] !== undefined;
}

/** `<name>_<namespace>`, the kubelet's pod full name. */
export function podFullName(pod: V1Pod): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}`;
}

/**
 * How the workers name and classify pods: UID, full name (`<name>_<namespace>`), static
 * or not (the kubelet's `kubetypes.IsStaticPod`).
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { RunningPod } from './types.js';

/** The annotation the kubelet sets to say where a pod came from (`api`, `file`, `http`). */
export const CONFIG_SOURCE_ANNOTATION_KEY = 'kubernetes.io/config.source';

/** The config source value of pods from the API server. */
export const API_SERVER_SOURCE = 'api';

/** `<name>_<namespace>`, the kubelet's `BuildPodFullName`. */
export function buildPodFullName(name: string, namespace: string): string {
  return `${name}_${namespace}`;
}

/**
 * Whether `pod` is a static pod: its config source annotation is set and is not `api`.
 * A pod without the annotation is not static (as `kubetypes.IsStaticPod`).
 */
export function isStaticPod(pod: V1Pod | undefined): boolean {
  const source = pod?.metadata?.annotations?.[CONFIG_SOURCE_ANNOTATION_KEY];
  return source !== undefined && source !== API_SERVER_SOURCE;
}

/** The placeholder API pod of a runtime-only pod (`kubecontainer.Pod.ToAPIPod`): metadata only. */
export function runningPodToApiPod(runningPod: RunningPod): V1Pod {
  return { metadata: { uid: runningPod.id, name: runningPod.name, namespace: runningPod.namespace } };
}

/** Whether the pod's phase is terminal (`Succeeded` or `Failed`). */
export function isPodPhaseTerminal(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/**
 * The adapter the kubelet's pieces take: a function of (pod, container or none, type,
 * reason, message), the shape of `@nodeagent/prober`'s `ProbeEventRecorder` and
 * `@nodeagent/kuberuntime`'s `RuntimeEventRecorder`, over an {@link EventRecorder}.
 *
 * @module
 */
import type { EventType } from './event.js';
import { containerReference, podReference, type ReferencedPod } from './object-reference.js';
import type { EventRecorder } from './recorder.js';

/** Records an event about a container of `pod` (`fieldPath` `spec.containers{name}`), or about the pod when `container` is undefined. */
export type PodEventRecorder = (
  pod: ReferencedPod,
  container: { readonly name: string } | undefined,
  type: EventType,
  reason: string,
  message: string,
) => void;

/**
 * A {@link PodEventRecorder} over `recorder`. A container the pod's spec does not list makes
 * no event (it is counted as `invalid`), as upstream skips an event it cannot reference.
 *
 * @example
 * ```ts
 * new ProbeManager({ ..., recorder: podEventRecorder(recorder) });
 * new KubeRuntimeManager({ ..., recorder: podEventRecorder(recorder) });
 * ```
 */
export function podEventRecorder(recorder: Pick<EventRecorder, 'event'>): PodEventRecorder {
  return (pod, container, type, reason, message) =>
    recorder.event(
      () => (container === undefined ? podReference(pod) : containerReference(pod, container.name)),
      type,
      reason,
      message,
    );
}

/**
 * Where the runtime manager reports the kubelet's pod and container events (`Pulling`,
 * `Pulled`, `Created`, `Started`, `Killing`, `BackOff`, `Failed`, …): an injected recorder,
 * e.g. `podEventRecorder(recorder)` of `@nodeagent/events`.
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodeagent/core';

/** An event's type, as the API spells it. */
export type RuntimeEventType = 'Normal' | 'Warning';

/**
 * Records an event about a container of `pod` (upstream `recordContainerEvent`, the
 * container's reference has `fieldPath` `spec.containers{name}`), or about the pod itself
 * when `container` is undefined (`SandboxChanged`, `FailedCreatePodSandBox`). It must not
 * block; one that throws is logged and otherwise ignored.
 */
export type RuntimeEventRecorder = (
  pod: V1Pod,
  container: V1Container | undefined,
  type: RuntimeEventType,
  reason: string,
  message: string,
) => void;

/** A recorder that never throws into the runtime manager (a failing one is logged). @internal */
export function safeRecorder(recorder: RuntimeEventRecorder | undefined, log: Logger): RuntimeEventRecorder {
  if (recorder === undefined) return () => {};
  return (pod, container, type, reason, message) => {
    try {
      recorder(pod, container, type, reason, message);
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err), reason }, 'event recorder failed');
    }
  };
}

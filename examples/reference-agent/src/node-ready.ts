/**
 * The node `Ready` condition (upstream `nodestatus.ReadyCondition`): True with
 * `KubeletReady` when the runtime answers its Status call with RuntimeReady and
 * NetworkReady true and PLEG is healthy; otherwise False with `KubeletNotReady` and the
 * kubelet's messages joined by ", ".
 *
 * @module
 */
import type { V1NodeCondition } from '@kubernetes/client-node';
import type { RuntimeCondition } from '@nodeagent/cri';
import type { PlegHealth } from '@nodeagent/pleg';

/** What the Ready condition is computed from. */
export interface ReadyInputs {
  /** The runtime's Status conditions, or the error of the Status call. */
  readonly runtime: { readonly conditions: readonly RuntimeCondition[] } | { readonly error: string };
  /** PLEG health. */
  readonly pleg: PlegHealth;
}

function conditionText(c: RuntimeCondition): string {
  return `${c.type}=${c.status} reason:${c.reason} message:${c.message}`;
}

/** The reasons the node is not ready (empty when it is), in the kubelet's words. */
export function notReadyReasons(inputs: ReadyInputs): string[] {
  const reasons: string[] = [];
  const runtime = inputs.runtime;
  if ('error' in runtime) {
    reasons.push(`container runtime is down: ${runtime.error}`);
  } else {
    const find = (type: string) => runtime.conditions.find((c) => c.type === type);
    const runtimeReady = find('RuntimeReady');
    if (runtimeReady?.status !== true) {
      reasons.push(
        `container runtime not ready: ${runtimeReady ? conditionText(runtimeReady) : 'RuntimeReady missing'}`,
      );
    }
    const network = find('NetworkReady');
    if (network?.status !== true) {
      reasons.push(
        `container runtime network not ready: ${network ? conditionText(network) : 'NetworkReady missing'}`,
      );
    }
  }
  if (!inputs.pleg.ok) reasons.push(`PLEG is not healthy: ${inputs.pleg.message}`);
  return reasons;
}

/**
 * The Ready condition at `now` (ISO time). `lastTransitionTime` is kept from `previous`
 * unless the status flips; `lastHeartbeatTime` is always `now`.
 */
export function readyCondition(
  inputs: ReadyInputs,
  previous: V1NodeCondition | undefined,
  now: string,
): V1NodeCondition {
  const reasons = notReadyReasons(inputs);
  const status = reasons.length === 0 ? 'True' : 'False';
  const transition =
    previous !== undefined && previous.status === status && previous.lastTransitionTime !== undefined
      ? previous.lastTransitionTime
      : (now as unknown as Date);
  return {
    type: 'Ready',
    status,
    reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady',
    message: status === 'True' ? 'kubelet is posting ready status' : reasons.join(', '),
    // Plain API JSON (RFC 3339 strings); client-node's types say Date.
    lastHeartbeatTime: now as unknown as Date,
    lastTransitionTime: transition,
  };
}

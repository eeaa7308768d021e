/**
 * A pod's QoS class (upstream `ComputePodQOS`) and the requests it is computed over: what
 * the runtime manager (OOM scores), admission (pressure) and eviction (ranking) share.
 *
 * @module
 */
import { milliValue } from '@nodeagent/core';

/** The part of a container the QoS class reads (a `V1Container` fits). */
export interface QosContainer {
  /** Requests and limits by resource name. */
  readonly resources?: {
    readonly requests?: Readonly<Record<string, string>>;
    readonly limits?: Readonly<Record<string, string>>;
  };
}

/** The part of a pod the QoS class reads (a `V1Pod` fits). */
export interface QosPod {
  /** The containers. */
  readonly spec?: {
    readonly containers?: readonly QosContainer[];
    readonly initContainers?: readonly QosContainer[];
  };
  /** A class already computed (`status.qosClass`) wins. */
  readonly status?: { readonly qosClass?: string };
}

/** Requests as the API server defaults them: a limit without a request is also the request. */
export function effectiveRequests(container: QosContainer): Record<string, string> {
  const requests: Record<string, string> = { ...(container.resources?.requests ?? {}) };
  for (const [name, value] of Object.entries(container.resources?.limits ?? {})) {
    if (requests[name] === undefined) requests[name] = value;
  }
  return requests;
}

/** QoS class of a pod (upstream `ComputePodQOS`, over API-defaulted requests); `status.qosClass` wins. */
export function podQosClass(pod: QosPod): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const fromStatus = pod.status?.qosClass;
  if (fromStatus === 'Guaranteed' || fromStatus === 'Burstable' || fromStatus === 'BestEffort')
    return fromStatus;
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let guaranteed = true;
  const all = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  for (const c of all) {
    for (const [name, q] of Object.entries(effectiveRequests(c))) {
      if (name !== 'cpu' && name !== 'memory') continue;
      const v = milliValue(q);
      if (v > 0n) requests.set(name, (requests.get(name) ?? 0n) + v);
    }
    const found = new Set<string>();
    for (const [name, q] of Object.entries(c.resources?.limits ?? {})) {
      if (name !== 'cpu' && name !== 'memory') continue;
      const v = milliValue(q);
      if (v > 0n) {
        found.add(name);
        limits.set(name, (limits.get(name) ?? 0n) + v);
      }
    }
    if (!found.has('cpu') || !found.has('memory')) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      if (limits.get(name) !== req) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

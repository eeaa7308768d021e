/**
 * A pod's total requests and limits per resource (upstream component-helpers
 * `PodRequests` / `PodLimits`, without pod-level resources): app containers and sidecars add
 * up, an ordinary init container runs beside the sidecars declared before it, the largest init
 * step wins when it is larger, and the RuntimeClass overhead is added (to every request, to
 * non-zero limits only). Amounts are exact milli-units (`milliValue`), for any resource name.
 *
 * @module
 */
import { milliValue } from '@nodeagent/core';
import { effectiveRequests, type QosContainer } from './pod-qos.js';

/** The part of a container the totals read (a `V1Container` fits). */
export interface ResourceContainer extends QosContainer {
  /** `Always` on an init container makes it a sidecar (KEP-753). */
  readonly restartPolicy?: string;
}

/** The part of a pod the totals read (a `V1Pod` fits). */
export interface ResourcePod {
  /** Containers and overhead. */
  readonly spec?: {
    readonly containers?: readonly ResourceContainer[];
    readonly initContainers?: readonly ResourceContainer[];
    /** RuntimeClass pod overhead (`spec.overhead`). */
    readonly overhead?: Readonly<Record<string, string>>;
  };
}

/** Resource name → amount in milli-units (`cpu` in millicores × … : `100m` → 100n, `1Mi` → 1048576000n). */
export type ResourceMilli = Map<string, bigint>;

function addInto(into: ResourceMilli, from: ReadonlyMap<string, bigint>): void {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0n) + v);
}

function maxInto(into: ResourceMilli, from: ReadonlyMap<string, bigint>): void {
  for (const [k, v] of from) if (!into.has(k) || v > (into.get(k) ?? 0n)) into.set(k, v);
}

function toMilli(list: Readonly<Record<string, string>> | undefined): ResourceMilli {
  const out: ResourceMilli = new Map();
  for (const [name, q] of Object.entries(list ?? {})) out.set(name, milliValue(q));
  return out;
}

/**
 * Sum of the app containers and sidecars, or the largest init step when larger (upstream
 * `aggregateContainerResourcesByFn`); `onStep` sees each app container's list and each init
 * step's (an init container plus the earlier sidecars, or the sidecars so far for a sidecar).
 */
export function aggregateContainerResources(
  pod: ResourcePod,
  pick: (c: ResourceContainer) => Readonly<Record<string, string>> | undefined,
  onStep?: (step: ReadonlyMap<string, bigint>) => void,
): ResourceMilli {
  const result: ResourceMilli = new Map();
  for (const c of pod.spec?.containers ?? []) {
    const own = toMilli(pick(c));
    onStep?.(own);
    addInto(result, own);
  }
  const sidecars: ResourceMilli = new Map();
  const initMax: ResourceMilli = new Map();
  for (const c of pod.spec?.initContainers ?? []) {
    const own = toMilli(pick(c));
    let step: ResourceMilli;
    if (c.restartPolicy === 'Always') {
      addInto(result, own);
      addInto(sidecars, own);
      step = new Map(sidecars);
    } else {
      step = new Map(own);
      addInto(step, sidecars);
    }
    onStep?.(step);
    maxInto(initMax, step);
  }
  maxInto(result, initMax);
  return result;
}

/** The pod's requests with overhead (upstream `PodRequests`), API-defaulted (a limit without a request counts). */
export function podRequestsMilli(pod: ResourcePod): ResourceMilli {
  const reqs = aggregateContainerResources(pod, (c) => effectiveRequests(c));
  addInto(reqs, toMilli(pod.spec?.overhead));
  return reqs;
}

/** The pod's limits; overhead is added to non-zero limits only (upstream `PodLimits`). */
export function podLimitsMilli(
  pod: ResourcePod,
  onStep?: (step: ReadonlyMap<string, bigint>) => void,
): ResourceMilli {
  const limits = aggregateContainerResources(pod, (c) => c.resources?.limits, onStep);
  for (const [name, q] of Object.entries(pod.spec?.overhead ?? {})) {
    const v = limits.get(name);
    if (v !== undefined && v !== 0n) limits.set(name, v + milliValue(q));
  }
  return limits;
}

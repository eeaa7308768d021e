/**
 * Pod and node resource amounts as the scheduler's `NodeInfo` counts them: cpu in millicores,
 * every other resource in its integer value (bytes for memory and ephemeral-storage). A pod's
 * request is max(sum of containers + restartable init containers, the largest init step) plus
 * its overhead (upstream `resourcehelper.PodRequests`).
 *
 * @module
 */
import type { V1Container, V1Node, V1Pod } from '@kubernetes/client-node';
import { milliValue, quantityValue } from '@nodeagent/core';

/** Amounts by resource name (`cpu` in millicores, the rest in units). */
export type ResourceAmounts = Map<string, bigint>;

/**
 * Whether the name is an extended resource (`example.com/gpu`): not native (native = no `/`,
 * or a `kubernetes.io/` prefix) and not a `requests.` quota name (upstream `IsExtendedResourceName`).
 */
export function isExtendedResourceName(name: string): boolean {
  const native = !name.includes('/') || name.includes('kubernetes.io/');
  return !native && !name.startsWith('requests.');
}

/** Whether the scheduler counts the name as a scalar resource: extended, hugepages-*, attachable-volumes-*. */
export function isScalarResourceName(name: string): boolean {
  return (
    isExtendedResourceName(name) ||
    name.startsWith('hugepages-') ||
    name.startsWith('attachable-volumes-') ||
    (name.includes('/') && name.includes('kubernetes.io/'))
  );
}

/** One quantity in the unit the predicates compare (millicores for cpu). */
export function amountOf(name: string, quantity: string | number | undefined): bigint {
  return name === 'cpu' ? milliValue(quantity) : quantityValue(quantity);
}

function toAmounts(list: Record<string, string | number> | undefined): ResourceAmounts {
  const out: ResourceAmounts = new Map();
  for (const [name, q] of Object.entries(list ?? {})) out.set(name, amountOf(name, q));
  return out;
}

function addInto(into: ResourceAmounts, from: ReadonlyMap<string, bigint>): void {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0n) + v);
}

function maxInto(into: ResourceAmounts, from: ReadonlyMap<string, bigint>): void {
  for (const [k, v] of from) if (v > (into.get(k) ?? 0n)) into.set(k, v);
}

function containerRequests(c: V1Container): ResourceAmounts {
  return toAmounts(c.resources?.requests as Record<string, string> | undefined);
}

/** The pod's effective requests (containers, sidecars, init containers, overhead). */
export function podRequests(pod: V1Pod): ResourceAmounts {
  const reqs: ResourceAmounts = new Map();
  for (const c of pod.spec?.containers ?? []) addInto(reqs, containerRequests(c));
  const sidecars: ResourceAmounts = new Map();
  const initMax: ResourceAmounts = new Map();
  for (const c of pod.spec?.initContainers ?? []) {
    const r = containerRequests(c);
    if (c.restartPolicy === 'Always') {
      // A sidecar keeps running: it adds to the main containers and to every later init step.
      addInto(sidecars, r);
      maxInto(initMax, sidecars);
    } else {
      const step = new Map(r);
      addInto(step, sidecars);
      maxInto(initMax, step);
    }
  }
  addInto(reqs, sidecars);
  maxInto(reqs, initMax);
  addInto(reqs, toAmounts(pod.spec?.overhead as Record<string, string> | undefined));
  return reqs;
}

/** The node's allocatable (`status.allocatable`, falling back to `status.capacity`). */
export function nodeAllocatable(node: V1Node): ResourceAmounts {
  return toAmounts((node.status?.allocatable ?? node.status?.capacity) as Record<string, string> | undefined);
}

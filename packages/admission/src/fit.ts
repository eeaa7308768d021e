/**
 * Resources fit (the scheduler's `noderesources.Fits`, which the kubelet reuses): pod count
 * first, then cpu, memory, ephemeral-storage and the scalar resources, each as requested
 * against allocatable minus what the admitted pods request.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { NodeInfo } from './node-info.js';
import { isExtendedResourceName, isScalarResourceName, podRequests } from './resource-requests.js';

/** One resource the node is short of, in the predicate's units (cpu in millicores). */
export interface InsufficientResource {
  /** `pods`, `cpu`, `memory`, `ephemeral-storage` or a scalar resource name. */
  readonly resourceName: string;
  /** The pod's request. */
  readonly requested: bigint;
  /** What the admitted pods already request. */
  readonly used: bigint;
  /** The node's allocatable. */
  readonly capacity: bigint;
}

/** Upstream `InsufficientResourceError.Error()`. */
export function insufficientResourceMessage(r: InsufficientResource): string {
  return `Node didn't have enough resource: ${r.resourceName}, requested: ${r.requested}, used: ${r.used}, capacity: ${r.capacity}`;
}

/**
 * Every resource the pod does not fit in, in upstream's order. Requests of extended resources
 * the node does not advertise at all are ignored, as the kubelet does (cluster-level resources).
 */
export function insufficientResources(pod: V1Pod, nodeInfo: NodeInfo): InsufficientResource[] {
  const out: InsufficientResource[] = [];
  const alloc = nodeInfo.allocatable;
  const used = nodeInfo.requested;
  const allowedPods = alloc.get('pods') ?? 0n;
  const podCount = BigInt(nodeInfo.pods.length);
  if (podCount + 1n > allowedPods) {
    out.push({ resourceName: 'pods', requested: 1n, used: podCount, capacity: allowedPods });
  }
  const request = podRequests(pod);
  for (const name of [...request.keys()]) {
    if (isExtendedResourceName(name) && !alloc.has(name)) request.delete(name);
  }
  for (const name of ['cpu', 'memory', 'ephemeral-storage']) {
    const want = request.get(name) ?? 0n;
    const have = alloc.get(name) ?? 0n;
    const taken = used.get(name) ?? 0n;
    if (want > 0n && want > have - taken) {
      out.push({ resourceName: name, requested: want, used: taken, capacity: have });
    }
  }
  const scalars = [...request.keys()].filter(isScalarResourceName).sort();
  for (const name of scalars) {
    const want = request.get(name) ?? 0n;
    if (want === 0n) continue;
    const have = alloc.get(name) ?? 0n;
    const taken = used.get(name) ?? 0n;
    if (want > have - taken) out.push({ resourceName: name, requested: want, used: taken, capacity: have });
  }
  return out;
}

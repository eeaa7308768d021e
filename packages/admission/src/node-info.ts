/**
 * The node as admission sees it (the scheduler's `NodeInfo`): the Node object, the pods
 * already admitted, what they request in total and the host ports they hold.
 *
 * @module
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { nodeAllocatable, podRequests, type ResourceAmounts } from './resource-requests.js';

/** A host port in use: protocol, host IP (`0.0.0.0` when unset) and port. */
export interface HostPortUse {
  /** `TCP`, `UDP` or `SCTP`. */
  readonly protocol: string;
  /** The host IP the port binds; `0.0.0.0` means every address. */
  readonly hostIP: string;
  /** The host port. */
  readonly hostPort: number;
}

/** The host ports a pod asks for (containers and init containers with `hostPort` > 0). */
export function podHostPorts(pod: V1Pod): HostPortUse[] {
  const out: HostPortUse[] = [];
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    for (const p of c.ports ?? []) {
      if (p.hostPort === undefined || p.hostPort <= 0) continue;
      out.push({
        protocol: p.protocol ?? 'TCP',
        hostIP: p.hostIP === undefined || p.hostIP === '' ? '0.0.0.0' : p.hostIP,
        hostPort: p.hostPort,
      });
    }
  }
  return out;
}

/** Node facts plus the admitted pods' totals. */
export class NodeInfo {
  /** The Node object. */
  readonly node: V1Node;
  /** The admitted pods. */
  readonly pods: readonly V1Pod[];
  /** Allocatable by resource (cpu in millicores). */
  readonly allocatable: ResourceAmounts;
  /** Sum of the admitted pods' requests. */
  readonly requested: ResourceAmounts;
  /** Host ports held by the admitted pods. */
  readonly usedPorts: readonly HostPortUse[];

  /**
   * @param node the Node object (allocatable, labels, taints).
   * @param pods the pods already admitted.
   */
  constructor(node: V1Node, pods: readonly V1Pod[]) {
    this.node = node;
    this.pods = pods;
    this.allocatable = nodeAllocatable(node);
    const requested: ResourceAmounts = new Map();
    const ports: HostPortUse[] = [];
    for (const pod of pods) {
      for (const [k, v] of podRequests(pod)) requested.set(k, (requested.get(k) ?? 0n) + v);
      ports.push(...podHostPorts(pod));
    }
    this.requested = requested;
    this.usedPorts = ports;
  }
}

/**
 * Computing a node status (the kubelet's `nodestatus` setters run over the last known Node),
 * kept pure: the manager gathers the inputs (readiness, pressure, images) and posts the result.
 * Also upstream's `nodeStatusHasChanged`: the status without heartbeats.
 *
 * @module
 */
import type {
  V1ContainerImage,
  V1NodeAddress,
  V1NodeCondition,
  V1NodeStatus,
  V1NodeSystemInfo,
} from '@kubernetes/client-node';
import { nodeAllocatable, type Reservations, type ResourceList } from './allocatable.js';
import { NODE_CONDITION_TYPES, pressureCondition, readyCondition } from './node-conditions.js';
import { compactJson, stableJson } from './pod-status-normalize.js';

/** Everything a node status is computed from. */
export interface NodeStatusInputs {
  /** The status the Node has now (conditions others own are kept, transitions continue from it). */
  readonly original: V1NodeStatus | undefined;
  /** RFC 3339 time of this computation (heartbeats). */
  readonly now: string;
  /** Capacity from the machine. */
  readonly capacity: ResourceList;
  /** Reservations taken out of allocatable. */
  readonly reservations: Reservations;
  /** The not-ready reasons (empty: Ready). */
  readonly readinessErrors: readonly string[];
  /** Memory, disk and PID pressure. */
  readonly pressure: { readonly memory: boolean; readonly disk: boolean; readonly pid: boolean };
  /** `status.images`; `undefined` keeps the Node's (the listing failed). */
  readonly images: readonly V1ContainerImage[] | undefined;
  /** `status.addresses`. */
  readonly addresses: readonly V1NodeAddress[];
  /** `daemonEndpoints.kubeletEndpoint.Port`. */
  readonly kubeletPort: number;
  /** `status.nodeInfo`. */
  readonly nodeInfo: V1NodeSystemInfo;
}

/** The node status for `inputs`; the kubelet's four conditions replace or join the Node's. */
export function computeNodeStatus(i: NodeStatusInputs): V1NodeStatus {
  const errors = [...i.readinessErrors];
  const missing = ['cpu', 'memory', 'pods'].filter((r) => i.capacity[r] === undefined);
  if (missing.length > 0) errors.push(`missing node capacity for resources: ${missing.join(', ')}`);
  const original = i.original ?? {};
  const previous = new Map((original.conditions ?? []).map((c) => [c.type, c]));
  const mine: Record<(typeof NODE_CONDITION_TYPES)[number], V1NodeCondition> = {
    MemoryPressure: pressureCondition(
      'MemoryPressure',
      i.pressure.memory,
      previous.get('MemoryPressure'),
      i.now,
    ),
    DiskPressure: pressureCondition('DiskPressure', i.pressure.disk, previous.get('DiskPressure'), i.now),
    PIDPressure: pressureCondition('PIDPressure', i.pressure.pid, previous.get('PIDPressure'), i.now),
    Ready: readyCondition(errors, previous.get('Ready'), i.now),
  };
  const conditions = (original.conditions ?? []).map((c) => mine[c.type as keyof typeof mine] ?? c);
  for (const type of NODE_CONDITION_TYPES) if (!previous.has(type)) conditions.push(mine[type]);
  const images = i.images ?? original.images ?? [];
  const status: V1NodeStatus = {
    ...original,
    capacity: { ...(original.capacity ?? {}), ...i.capacity },
    allocatable: { ...(original.allocatable ?? {}), ...nodeAllocatable(i.capacity, i.reservations) },
    conditions,
    addresses: [...i.addresses],
    daemonEndpoints: { kubeletEndpoint: { Port: i.kubeletPort } },
    nodeInfo: i.nodeInfo,
  };
  if (images.length > 0) status.images = [...images];
  else delete status.images;
  return status;
}

function comparable(status: V1NodeStatus): string {
  const conditions = [...(status.conditions ?? [])]
    .map((c) => ({ ...c, lastHeartbeatTime: undefined }))
    .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  return stableJson(compactJson({ ...status, conditions }));
}

/** Upstream `nodeStatusHasChanged`: any difference except the conditions' heartbeats. */
export function nodeStatusChanged(original: V1NodeStatus | undefined, status: V1NodeStatus): boolean {
  return comparable(original ?? {}) !== comparable(status);
}

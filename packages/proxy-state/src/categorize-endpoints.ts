/**
 * kube-proxy's `CategorizeEndpoints`: which endpoints Cluster-policy and Local-policy traffic
 * may use, after topology hints and the serving+terminating fallback.
 *
 * @module
 */
import type { CategorizedEndpoints, Endpoint, ServicePortInfo, TopologyMode } from './types.js';

/** The node facts categorisation depends on. */
export interface CategorizeNode {
  /** This node's name (matched against node hints). */
  readonly name: string;
  /** This node's `topology.kubernetes.io/zone` label, `''` when missing. */
  readonly zone: string;
}

/** Options for {@link categorizeEndpoints}. */
export interface CategorizeOptions {
  /**
   * Honour node hints (`trafficDistribution: PreferSameNode`), kube-proxy's
   * `PreferSameTrafficDistribution` feature gate.
   * @default true
   */
  readonly preferSameTrafficDistribution?: boolean;
}

/** The two service-port facts categorisation depends on (a {@link ServicePortInfo} satisfies it). */
export type ServicePortPolicy = Pick<ServicePortInfo, 'usesClusterEndpoints' | 'usesLocalEndpoints'>;

const NONE: readonly Endpoint[] = Object.freeze([]);

/**
 * Picks the topology mode from the hints of the *ready* endpoints: PreferSameNode when every
 * ready endpoint has node hints and one names this node (if enabled), else PreferSameZone when
 * every ready endpoint has zone hints and one names this node's zone, else none.
 */
export function topologyModeFromHints(
  endpoints: readonly Endpoint[],
  node: CategorizeNode,
  options: CategorizeOptions = {},
): TopologyMode {
  let hasEndpointForNode = false;
  let allHaveNodeHints = true;
  let hasEndpointForZone = false;
  let allHaveZoneHints = true;
  for (const ep of endpoints) {
    if (!ep.ready) continue;
    if (ep.nodeHints.length === 0) allHaveNodeHints = false;
    else if (ep.nodeHints.includes(node.name)) hasEndpointForNode = true;
    if (ep.zoneHints.length === 0) allHaveZoneHints = false;
    else if (ep.zoneHints.includes(node.zone)) hasEndpointForZone = true;
  }
  if ((options.preferSameTrafficDistribution ?? true) && allHaveNodeHints && hasEndpointForNode) {
    return 'PreferSameNode';
  }
  if (allHaveZoneHints && hasEndpointForZone) return 'PreferSameZone';
  return '';
}

function availableForTopology(ep: Endpoint, mode: TopologyMode, node: CategorizeNode): boolean {
  if (mode === 'PreferSameNode') return ep.nodeHints.includes(node.name);
  if (mode === 'PreferSameZone') return ep.zoneHints.includes(node.zone);
  return true;
}

/** Merges two lists sorted by endpoint string into one sorted list without duplicates. */
function mergeSorted(a: readonly Endpoint[], b: readonly Endpoint[]): readonly Endpoint[] {
  const out: Endpoint[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && x.endpoint < y.endpoint)) {
      out.push(x!);
      i++;
    } else if (x === undefined || y.endpoint < x.endpoint) {
      out.push(y);
      j++;
    } else {
      out.push(y); // same endpoint string: the local list's entry, as upstream's map merge keeps it
      i++;
      j++;
    }
  }
  return out;
}

/**
 * Categorises a service port's endpoints (sorted by endpoint string, as snapshots hold them):
 *
 * - Cluster policy in use → `clusterEndpoints` = ready endpoints available for the topology
 *   mode; if none, every serving+terminating endpoint (topology ignored).
 * - Local policy in use → `localEndpoints` = local ready endpoints, else local serving+terminating.
 * - `allReachableEndpoints` = their union; `hasAnyEndpoints` = any ready or serving+terminating
 *   endpoint exists anywhere.
 */
export function categorizeEndpoints(
  endpoints: readonly Endpoint[],
  svc: ServicePortPolicy,
  node: CategorizeNode,
  options: CategorizeOptions = {},
): CategorizedEndpoints {
  let topologyMode: TopologyMode = '';
  let useServingTerminating = false;
  let clusterEndpoints: readonly Endpoint[] = NONE;
  let localEndpoints: readonly Endpoint[] = NONE;
  let hasAnyEndpoints = false;

  if (svc.usesClusterEndpoints) {
    topologyMode = topologyModeFromHints(endpoints, node, options);
    clusterEndpoints = endpoints.filter((ep) => ep.ready && availableForTopology(ep, topologyMode, node));
    // Topology was already dropped if it left nothing ready, so this means nothing is ready anywhere.
    if (clusterEndpoints.length === 0)
      clusterEndpoints = endpoints.filter((ep) => ep.serving && ep.terminating);
    if (clusterEndpoints.length > 0) hasAnyEndpoints = true;
  }
  if (!svc.usesLocalEndpoints) {
    return {
      clusterEndpoints,
      localEndpoints,
      allReachableEndpoints: clusterEndpoints,
      hasAnyEndpoints,
      topologyMode,
    };
  }

  let hasLocalReady = false;
  let hasLocalServingTerminating = false;
  for (const ep of endpoints) {
    if (ep.ready) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalReady = true;
    } else if (ep.serving && ep.terminating) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalServingTerminating = true;
    }
  }
  if (hasLocalReady) localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.ready);
  else if (hasLocalServingTerminating) {
    useServingTerminating = true;
    localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.serving && ep.terminating);
  }

  if (!svc.usesClusterEndpoints) {
    return {
      clusterEndpoints,
      localEndpoints,
      allReachableEndpoints: localEndpoints,
      hasAnyEndpoints,
      topologyMode,
    };
  }
  // Without topology, clusterEndpoints holds every ready endpoint, a superset of ready local ones.
  const allReachableEndpoints =
    topologyMode === '' && !useServingTerminating
      ? clusterEndpoints
      : mergeSorted(clusterEndpoints, localEndpoints);
  return { clusterEndpoints, localEndpoints, allReachableEndpoints, hasAnyEndpoints, topologyMode };
}

/**
 * The snapshot model the renderers (iptables, nftables, IPVS) consume: service ports,
 * endpoints and the node, per IP family, all immutable plain data.
 *
 * @module
 */

import type { IPFamily } from '@nodeagent/core';

/** An IP family: 4 for IPv4, 6 for IPv6 (core's). Dual-stack services appear in both snapshots. */
export type { IPFamily };

/** An IP family as the Kubernetes API (`ipFamilies`) and kube-proxy's metric labels spell it. */
export type IPFamilyName = 'IPv4' | 'IPv6';

/** The API spelling of `family`: `'IPv4'` or `'IPv6'`. */
export function ipFamilyName(family: IPFamily): IPFamilyName {
  return family === 4 ? 'IPv4' : 'IPv6';
}

/** The L4 protocols a Service port or EndpointSlice port may carry (upper case, as the API spells them). */
export type Protocol = 'TCP' | 'UDP' | 'SCTP';

/**
 * The identity of one service port, as kube-proxy's `ServicePortName`: the protocol is part of
 * the identity but not of the printed name (see {@link servicePortNameString}).
 */
export interface ServicePortName {
  /** The Service's namespace. */
  readonly namespace: string;
  /** The Service's name. */
  readonly name: string;
  /** The port's name; `''` when the port is unnamed. */
  readonly port: string;
  /** The port's protocol. */
  readonly protocol: Protocol;
}

/**
 * The topology mode chosen for a service port from its endpoints' hints:
 * `''` when topology is not used (every ready endpoint is a candidate).
 */
export type TopologyMode = '' | 'PreferSameZone' | 'PreferSameNode';

/**
 * One service port of one IP family, with everything the renderers need (kube-proxy's
 * `BaseServicePortInfo`). IPs and CIDRs are normalised (`172.30.0.041` → `172.30.0.41`,
 * `203.0.113.000/025` → `203.0.113.0/25`) and only hold addresses of this snapshot's family.
 */
export interface ServicePortInfo {
  /** The service port's identity. */
  readonly name: ServicePortName;
  /** `servicePortNameString(name)`: `ns/svc:port`, or `ns/svc` for an unnamed port; used in rule comments and chain hashes. */
  readonly nameString: string;
  /** The Service's namespaced name `ns/svc`: the unit of {@link ProxySnapshot.changedServices}. */
  readonly serviceKey: string;
  /** The family of every address in this record. */
  readonly ipFamily: IPFamily;
  /** The Service type (`ExternalName` services never reach a snapshot). */
  readonly type: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  /** The cluster IP of this family (never `None`: headless services are not in snapshots). */
  readonly clusterIP: string;
  /** The service port number (1–65535). */
  readonly port: number;
  /** The protocol (same as `name.protocol`). */
  readonly protocol: Protocol;
  /** The node port, or 0 when the port has none. */
  readonly nodePort: number;
  /** The target port as written in the Service (number or named container port); informational. */
  readonly targetPort: number | string;
  /** True when `sessionAffinity: ClientIP`. */
  readonly sessionAffinityClientIP: boolean;
  /** ClientIP affinity timeout in seconds (`sessionAffinityConfig.clientIP.timeoutSeconds`), 10800 when unset; 0 when affinity is off. */
  readonly stickyMaxAgeSeconds: number;
  /** `spec.externalIPs` of this family, normalised, in spec order. */
  readonly externalIPs: readonly string[];
  /**
   * `status.loadBalancer.ingress[].ip` of this family whose `ipMode` is `VIP` or unset, in status
   * order. Ingresses with `ipMode: Proxy` are left out (the load balancer delivers to the node).
   */
  readonly loadBalancerVIPs: readonly string[];
  /** `spec.loadBalancerSourceRanges` of this family, trimmed and normalised to network CIDRs. */
  readonly loadBalancerSourceRanges: readonly string[];
  /** `externalTrafficPolicy: Local` on an externally reachable Service type (kube-proxy's `ExternalPolicyLocal`). */
  readonly externalPolicyLocal: boolean;
  /** `internalTrafficPolicy: Local`. */
  readonly internalPolicyLocal: boolean;
  /** `spec.healthCheckNodePort` when the Service is a LoadBalancer with external policy Local, else 0. */
  readonly healthCheckNodePort: number;
  /** `spec.trafficDistribution` as written (`PreferClose`, `PreferSameZone`, `PreferSameNode`), or null. kube-proxy only acts on the hints the EndpointSlice controller derives from it. */
  readonly trafficDistribution: string | null;
  /** NodePort ≠ 0, or any load-balancer VIP or external IP (kube-proxy's `ExternallyAccessible()`). */
  readonly externallyAccessible: boolean;
  /** Cluster-wide endpoints are needed: internal policy Cluster, or externally accessible (for short-circuiting). */
  readonly usesClusterEndpoints: boolean;
  /** Node-local endpoints are needed: internal policy Local, or external policy Local and externally accessible. */
  readonly usesLocalEndpoints: boolean;
}

/** One endpoint of one service port (kube-proxy's `BaseEndpointInfo`). */
export interface Endpoint {
  /** The endpoint IP, normalised. */
  readonly ip: string;
  /** The endpoint port. */
  readonly port: number;
  /** `ip:port`, with IPv6 bracketed (`[fd00::1]:80`): the sort key and what DNAT targets. */
  readonly endpoint: string;
  /** `conditions.ready`, true when unset. */
  readonly ready: boolean;
  /** `conditions.serving`, true when unset. */
  readonly serving: boolean;
  /** `conditions.terminating`, false when unset. */
  readonly terminating: boolean;
  /** True when `nodeName` is this proxy's node. */
  readonly isLocal: boolean;
  /** `nodeName`, or null. */
  readonly nodeName: string | null;
  /** `zone`, or null. */
  readonly zone: string | null;
  /** `hints.forZones[].name`, sorted; empty when the endpoint has no zone hints. */
  readonly zoneHints: readonly string[];
  /** `hints.forNodes[].name`, sorted; empty when the endpoint has no node hints. */
  readonly nodeHints: readonly string[];
}

/** The endpoints of one service port sorted into the sets the renderers program (kube-proxy's `CategorizeEndpoints`). */
export interface CategorizedEndpoints {
  /** Endpoints for Cluster-policy traffic (topology applied, serving+terminating fallback); empty when the port uses no Cluster policy. */
  readonly clusterEndpoints: readonly Endpoint[];
  /** Local endpoints for Local-policy traffic (ready, else serving+terminating); empty when the port uses no Local policy. */
  readonly localEndpoints: readonly Endpoint[];
  /** The union of both, sorted by endpoint string: the endpoints that get a per-endpoint chain. */
  readonly allReachableEndpoints: readonly Endpoint[];
  /** True when any endpoint anywhere is ready, or serving and terminating (decides REJECT vs DROP). */
  readonly hasAnyEndpoints: boolean;
  /** The topology mode that was applied to `clusterEndpoints`. */
  readonly topologyMode: TopologyMode;
}

/** The node this proxy runs on, as seen by one snapshot. */
export interface NodeInfo {
  /** The node name (compared with `endpoint.nodeName` for `isLocal`). */
  readonly name: string;
  /** The node's IPs of this snapshot's family; the first is the primary. */
  readonly ips: readonly string[];
  /** The `topology.kubernetes.io/zone` label, `''` when missing. */
  readonly zone: string;
  /** All node labels. */
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * An immutable view of everything to program for one IP family. Maps iterate in a
 * deterministic order (sorted by `nameString`, which is unique per family).
 */
export interface ProxySnapshot {
  /** The family of every address in this snapshot. */
  readonly ipFamily: IPFamily;
  /** Increases by one on every checkout (first checkout: 1). */
  readonly generation: number;
  /** The node. */
  readonly node: NodeInfo;
  /** Service ports, keyed by {@link ServicePortInfo.nameString}. */
  readonly services: ReadonlyMap<string, ServicePortInfo>;
  /**
   * Endpoints per service port, same keys as `services` (every service key is present, possibly
   * with an empty list), sorted by endpoint string; only endpoints whose slice port matches the
   * service port's name and protocol.
   */
  readonly endpoints: ReadonlyMap<string, readonly Endpoint[]>;
  /**
   * Namespaced names (`ns/svc`) whose service ports or endpoints of this family changed since the
   * previous checkout, including services that were deleted. All ports of a listed service must
   * be rewritten by a partial sync.
   */
  readonly changedServices: ReadonlySet<string>;
  /**
   * True when something that affects every service changed since the previous checkout (node
   * topology labels, node IPs, or this is the first checkout): renderers should do a full sync.
   */
  readonly fullSyncRequired: boolean;
  /** Sum of endpoint counts over all service ports (kube-proxy's large-cluster-mode input). */
  readonly totalEndpoints: number;
  /** Categorised endpoints of a service port (memoised); an unknown key yields empty sets. */
  categorize(nameString: string): CategorizedEndpoints;
}

/** What `ProxyState.checkout()` returns: one snapshot per family plus the change counters. */
export interface ProxyCheckout {
  /** The IPv4 snapshot. */
  readonly v4: ProxySnapshot;
  /** The IPv6 snapshot. */
  readonly v6: ProxySnapshot;
  /**
   * Per changed service (`ns/svc`), the `endpoints.kubernetes.io/last-change-trigger-time`
   * annotations of the EndpointSlices applied by this checkout (for
   * `network_programming_duration_seconds`), sorted.
   */
  readonly lastChangeTriggerTimes: ReadonlyMap<string, readonly string[]>;
}

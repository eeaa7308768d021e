/**
 * The renderer's input: one service port with its already-categorised endpoints, in the
 * shape kube-proxy's iptables proxier works from (`ServicePort` + `CategorizeEndpoints`
 * output), and the validation that turns API strings into normalised rule arguments.
 *
 * @module
 */
import { cidrValueContains, joinHostPort, parseCIDRValue, parseIPValue } from '@nodeagent/core';
import {
  checkEndpoint,
  checkServicePortFields,
  InvalidServicePortError,
  type IPFamilyName,
} from '@nodeagent/proxy-state';

/** Rule arguments keep `::ffff:a.b.c.d` as an IPv6 address (as kube-proxy's iptables proxier writes it). */
const KEEP_V4_MAPPED = { keepV4Mapped: true } as const;

/** Layer-4 protocol of a service port. */
export type L4Protocol = 'TCP' | 'UDP' | 'SCTP';

/** An endpoint the service port can send traffic to. */
export interface IptablesEndpoint {
  /** Endpoint IP (same family as the ruleset). */
  readonly ip: string;
  /** Target port. */
  readonly port: number;
}

/**
 * One service port and its categorised endpoints (see `categorizeEndpoints` in
 * `@nodeagent/proxy-state`): what the renderer needs to write every rule kube-proxy writes.
 */
export interface IptablesServicePort {
  /** Service namespace. */
  readonly namespace: string;
  /** Service name. */
  readonly name: string;
  /** Port name; `''` for an unnamed port. */
  readonly portName: string;
  /** Protocol of the port. */
  readonly protocol: L4Protocol;
  /** Cluster IP of this ruleset's family. */
  readonly clusterIP: string;
  /** Service port number. */
  readonly port: number;
  /** Node port, or 0 / undefined for none. */
  readonly nodePort?: number;
  /** External IPs of this family. */
  readonly externalIPs?: readonly string[];
  /** Load-balancer ingress IPs of this family (excluding `ipMode: Proxy` ingresses). */
  readonly loadBalancerVIPs?: readonly string[];
  /** `loadBalancerSourceRanges` of this family. */
  readonly loadBalancerSourceRanges?: readonly string[];
  /** Health-check node port (externalTrafficPolicy Local), or 0 / undefined. */
  readonly healthCheckNodePort?: number;
  /** ClientIP session affinity timeout in seconds; undefined when affinity is None. */
  readonly sessionAffinityTimeoutSeconds?: number;
  /** `externalTrafficPolicy: Local`. */
  readonly externalPolicyLocal?: boolean;
  /** `internalTrafficPolicy: Local`. */
  readonly internalPolicyLocal?: boolean;
  /** Endpoints for "Cluster" traffic policy (topology-filtered, terminating fallback applied). */
  readonly clusterEndpoints: readonly IptablesEndpoint[];
  /** Endpoints on this node for "Local" traffic policy. */
  readonly localEndpoints: readonly IptablesEndpoint[];
  /** True if the service has any usable endpoint on any node. */
  readonly hasEndpoints: boolean;
  /**
   * Number of endpoints of this port before categorisation (counts towards kube-proxy's
   * large-cluster threshold). Defaults to the larger of the two endpoint lists.
   */
  readonly totalEndpoints?: number;
}

/** `ns/name:port` (`ns/name` for an unnamed port), as kube-proxy's `ServicePortName.String()`. */
export function servicePortNameString(
  sp: Pick<IptablesServicePort, 'namespace' | 'name' | 'portName'>,
): string {
  const base = `${sp.namespace}/${sp.name}`;
  return sp.portName ? `${base}:${sp.portName}` : base;
}

/** A validated, normalised endpoint. */
export interface NormalizedEndpoint {
  /** Normalised IP. */
  readonly ip: string;
  /** Port. */
  readonly port: number;
  /** `ip:port` (`[ip]:port` for IPv6). */
  readonly hostPort: string;
}

/** A validated, normalised service port, ready to be rendered. */
export interface NormalizedServicePort {
  /** The input it came from. */
  readonly source: IptablesServicePort;
  /** `ns/name:port`. */
  readonly nameString: string;
  /** `ns/name`: the partial-sync key (all ports of a service are rewritten together). */
  readonly serviceKey: string;
  /** Lower-case protocol (`tcp`). */
  readonly proto: string;
  /** Normalised cluster IP. */
  readonly clusterIP: string;
  /** Service port. */
  readonly port: number;
  /** Node port or 0. */
  readonly nodePort: number;
  /** Normalised external IPs. */
  readonly externalIPs: readonly string[];
  /** Normalised LB VIPs. */
  readonly loadBalancerVIPs: readonly string[];
  /** Normalised source ranges. */
  readonly sourceRanges: readonly string[];
  /** True if a source range contains the node IP. */
  readonly sourceRangesContainNodeIP: boolean;
  /** Health-check node port or 0. */
  readonly healthCheckNodePort: number;
  /** Affinity timeout, undefined for none. */
  readonly affinitySeconds: number | undefined;
  /** eTP Local. */
  readonly externalPolicyLocal: boolean;
  /** iTP Local. */
  readonly internalPolicyLocal: boolean;
  /** Cluster endpoints. */
  readonly clusterEndpoints: readonly NormalizedEndpoint[];
  /** Local endpoints. */
  readonly localEndpoints: readonly NormalizedEndpoint[];
  /** Any usable endpoint anywhere. */
  readonly hasEndpoints: boolean;
}

const PROTOCOLS: Readonly<Record<string, string>> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

/**
 * Validates (with proxy-state's one service port check) and normalises a service port for a
 * ruleset of `family`.
 * @throws InvalidServicePortError naming the bad field.
 */
export function normalizeServicePort(
  sp: IptablesServicePort,
  family: IPFamilyName,
  nodeIP: string | undefined,
): NormalizedServicePort {
  const nameString = servicePortNameString(sp);
  const fam = family === 'IPv4' ? 4 : 6;
  const trim = (list: readonly string[] | undefined) => (list ?? []).map((x) => String(x).trim());
  const checked = checkServicePortFields(
    nameString,
    {
      protocol: sp.protocol,
      port: sp.port,
      nodePort: sp.nodePort,
      healthCheckNodePort: sp.healthCheckNodePort,
      affinitySeconds: sp.sessionAffinityTimeoutSeconds,
      clusterIP: String(sp.clusterIP).trim(),
      externalIPs: trim(sp.externalIPs),
      loadBalancerVIPs: trim(sp.loadBalancerVIPs),
      loadBalancerSourceRanges: trim(sp.loadBalancerSourceRanges),
    },
    fam,
    KEEP_V4_MAPPED,
  );
  const proto = PROTOCOLS[sp.protocol]!;
  const nodePort = sp.nodePort ?? 0;
  const healthCheckNodePort = sp.healthCheckNodePort ?? 0;
  const affinity = sp.sessionAffinityTimeoutSeconds;
  const node = nodeIP === undefined ? null : parseIPValue(nodeIP.trim(), KEEP_V4_MAPPED);
  const sourceRanges = checked.loadBalancerSourceRanges;
  const sourceRangesContainNodeIP =
    node !== null && sourceRanges.some((c) => cidrValueContains(parseCIDRValue(c, KEEP_V4_MAPPED)!, node));
  const endpoint = (e: IptablesEndpoint): NormalizedEndpoint => {
    const r = checkEndpoint(String(e.ip).trim(), e.port, fam, KEEP_V4_MAPPED);
    if ('problem' in r) throw new InvalidServicePortError(nameString, r.problem);
    return { ip: r.ip, port: e.port, hostPort: joinHostPort(r.ip, e.port) };
  };
  return {
    source: sp,
    nameString,
    serviceKey: `${sp.namespace}/${sp.name}`,
    proto,
    clusterIP: checked.clusterIP,
    port: sp.port,
    nodePort,
    externalIPs: checked.externalIPs,
    loadBalancerVIPs: checked.loadBalancerVIPs,
    sourceRanges,
    sourceRangesContainNodeIP,
    healthCheckNodePort,
    affinitySeconds: affinity,
    externalPolicyLocal: sp.externalPolicyLocal === true,
    internalPolicyLocal: sp.internalPolicyLocal === true,
    clusterEndpoints: sortEndpoints(sp.clusterEndpoints.map(endpoint)),
    localEndpoints: sortEndpoints(sp.localEndpoints.map(endpoint)),
    hasEndpoints: sp.hasEndpoints,
  };
}

/** kube-proxy orders endpoints by their `ip:port` string. */
function sortEndpoints(eps: NormalizedEndpoint[]): NormalizedEndpoint[] {
  return eps.sort((a, b) => (a.hostPort < b.hostPort ? -1 : a.hostPort > b.hostPort ? 1 : 0));
}

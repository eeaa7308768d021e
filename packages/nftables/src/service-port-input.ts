/**
 * Validation and derived facts of one service port, shared by both layouts: the policy
 * flags kube-proxy computes (`hasInternalEndpoints`, `hasExternalEndpoints`, ...).
 *
 * @module
 */
import { cidrValueContains, parseIPValue } from '@nodeagent/core';
import {
  type CategorizedEndpoints,
  type Endpoint,
  InvalidServicePortError,
  isValidPort,
  type ServicePortInfo,
} from '@nodeagent/proxy-state';
import { SAFE_NAME_PART } from './chain-names.js';
import { cidrOrHostValue } from './ip.js';
import type { ResolvedNftOptions } from './render-options.js';

/** Everything the per-port renderers need, derived once. */
export interface PortFacts {
  readonly info: ServicePortInfo;
  /** `tcp`, `udp` or `sctp`. */
  readonly proto: string;
  readonly clusterEndpoints: readonly Endpoint[];
  readonly localEndpoints: readonly Endpoint[];
  readonly allEndpoints: readonly Endpoint[];
  readonly hasEndpoints: boolean;
  readonly hasInternalEndpoints: boolean;
  readonly hasExternalEndpoints: boolean;
  /** The verdict for traffic that finds no endpoint: `goto reject-chain` (none at all) or `drop` (none local). */
  readonly noEndpointVerdict: string;
  /** Whether the LoadBalancer firewall applies. */
  readonly usesFirewall: boolean;
}

const PROTOS = new Set(['TCP', 'UDP', 'SCTP']);

/** Validates `info`/`cat` for a table of family `o.family` and derives the policy flags. @throws InvalidServicePortError */
export function portFacts(
  info: ServicePortInfo,
  cat: CategorizedEndpoints,
  o: ResolvedNftOptions,
): PortFacts {
  const problems: string[] = [];
  const fam = o.family === 'ip6' ? 6 : 4;
  for (const [what, v] of [
    ['namespace', info.name.namespace],
    ['name', info.name.name],
    ['port name', info.name.port],
  ] as const) {
    if (!SAFE_NAME_PART.test(v) || (what !== 'port name' && v === '')) {
      problems.push(`${what} ${JSON.stringify(v)} has characters that cannot appear in an nft chain name`);
    }
  }
  if (!PROTOS.has(info.protocol))
    problems.push(`protocol ${JSON.stringify(info.protocol)} is not TCP, UDP or SCTP`);
  if (!isValidPort(info.port, false)) problems.push(`port ${info.port} is out of range`);
  if (!isValidPort(info.nodePort, true)) problems.push(`nodePort ${info.nodePort} is out of range`);
  const addrOk = (ip: string, what: string) => {
    if (parseIPValue(ip)?.family !== fam)
      problems.push(`${what} ${JSON.stringify(ip)} is not an IPv${fam} address`);
  };
  addrOk(info.clusterIP, 'clusterIP');
  for (const ip of info.externalIPs) addrOk(ip, 'externalIP');
  for (const ip of info.loadBalancerVIPs) addrOk(ip, 'loadBalancer IP');
  for (const c of info.loadBalancerSourceRanges) {
    const n = cidrOrHostValue(c);
    if (n === null || n.family !== fam)
      problems.push(`source range ${JSON.stringify(c)} is not an IPv${fam} CIDR`);
  }
  for (const e of cat.allReachableEndpoints) {
    addrOk(e.ip, 'endpoint');
    if (!isValidPort(e.port, false)) problems.push(`endpoint port ${e.port} is out of range`);
  }
  if (problems.length > 0) throw new InvalidServicePortError(info.nameString, problems);

  const hasEndpoints = cat.hasAnyEndpoints;
  const hasInternalEndpoints = hasEndpoints && (!info.internalPolicyLocal || cat.localEndpoints.length > 0);
  const hasExternalEndpoints = hasEndpoints && (!info.externalPolicyLocal || cat.localEndpoints.length > 0);
  return {
    info,
    proto: info.protocol.toLowerCase(),
    clusterEndpoints: cat.clusterEndpoints,
    localEndpoints: cat.localEndpoints,
    allEndpoints: cat.allReachableEndpoints,
    hasEndpoints,
    hasInternalEndpoints,
    hasExternalEndpoints,
    noEndpointVerdict: hasEndpoints ? 'drop' : 'goto reject-chain',
    usesFirewall:
      hasEndpoints && info.loadBalancerVIPs.length > 0 && info.loadBalancerSourceRanges.length > 0,
  };
}

/** The source-range list of a firewall: the ranges, plus the LB IPs when a range holds the node IP. */
export function firewallSources(f: PortFacts, nodeIP: string | undefined): string[] {
  const sources = [...f.info.loadBalancerSourceRanges];
  const node = nodeIP === undefined ? null : parseIPValue(nodeIP);
  const holdsNode = (c: string) => {
    const n = cidrOrHostValue(c);
    return node !== null && n !== null && cidrValueContains(n, node);
  };
  if (sources.some(holdsNode)) {
    sources.push(...f.info.loadBalancerVIPs);
  }
  return sources;
}

/**
 * Validation and derived facts of one service port, shared by both layouts: the policy
 * flags kube-proxy computes (`hasInternalEndpoints`, `hasExternalEndpoints`, ...).
 *
 * @module
 */
import { cidrValueContains, parseCIDROrHostValue, parseIPValue } from '@nodeagent/core';
import {
  type CategorizedEndpoints,
  checkEndpoint,
  checkServicePort,
  type Endpoint,
  InvalidServicePortError,
  type ServicePortInfo,
} from '@nodeagent/proxy-state';
import { SAFE_NAME_PART } from './chain-names.js';
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

/**
 * Checks `info`/`cat` for a table of family `o.family` (proxy-state's one service port check,
 * plus the names nft chain names can hold) and derives the policy flags.
 * @throws InvalidServicePortError
 */
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
  try {
    checkServicePort(info, fam);
  } catch (e) {
    if (!(e instanceof InvalidServicePortError)) throw e;
    problems.push(...e.problems);
  }
  for (const e of cat.allReachableEndpoints) {
    const r = checkEndpoint(e.ip, e.port, fam);
    if ('problem' in r) problems.push(r.problem);
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
    const n = parseCIDROrHostValue(c);
    return node !== null && n !== null && cidrValueContains(n, node);
  };
  if (sources.some(holdsNode)) {
    sources.push(...f.info.loadBalancerVIPs);
  }
  return sources;
}

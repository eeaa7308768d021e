/**
 * The rules one service port contributes, exactly as kube-proxy writes them: its dispatch and
 * filter rules in the shared chains, and its own SVC / SVL / EXT / FW / SEP chains.
 *
 * @module
 */

import {
  InvalidServicePortError,
  iptablesCommentArg,
  isCleanIptablesComment,
  quoteIptablesComment,
} from '@nodeagent/proxy-state';
import { EXT_PREFIX, endpointChainName, FW_PREFIX, SVC_PREFIX, SVL_PREFIX } from './chain-names.js';
import type { ResolvedRenderOptions } from './render-options.js';
import type { NormalizedEndpoint, NormalizedServicePort } from './service-port.js';

/** Caches the per-port renderer uses (chain-name hashes, probability strings). */
export interface RenderContext {
  /** kube-proxy's 16-character hash of `nameString + proto`. */
  hash(nameString: string, proto: string): string;
  /** kube-proxy's probability string for `1/n`. */
  probability(n: number): string;
}

/** The rules one service port contributes. */
export interface ServicePortRules {
  /** `ns/name:port`. */
  readonly nameString: string;
  /** `ns/name`: the partial-sync unit. */
  readonly serviceKey: string;
  /**
   * Rules in shared filter chains (KUBE-SERVICES, KUBE-EXTERNAL-SERVICES, KUBE-NODEPORTS,
   * KUBE-PROXY-FIREWALL) as restore lines, each ending in a newline.
   */
  readonly filterRules: string;
  /** Rules in the shared nat chains KUBE-SERVICES and KUBE-NODEPORTS, newline-terminated lines. */
  readonly dispatchRules: string;
  /**
   * The service port's own nat chains (SVC/SVL/EXT/FW/SEP) in kube-proxy's write order, or
   * undefined when this render skipped them (partial render of an unchanged service).
   */
  readonly chains: readonly string[] | undefined;
  /** Rules of the own chains as newline-terminated lines (undefined when skipped). */
  readonly chainRules: string | undefined;
  /** Number of rules in `chainRules` (0 when skipped). */
  readonly chainRuleCount: number;
  /** Internal traffic is dropped: iTP Local without local endpoints. */
  readonly noLocalEndpointsInternal: boolean;
  /** External traffic is dropped: eTP Local without local endpoints. */
  readonly noLocalEndpointsExternal: boolean;
}

/**
 * The rules of one service port, in kube-proxy's order: shared-chain rules always, its own
 * chains when `writeChains`.
 * @throws InvalidServicePortError for inconsistent categorised endpoints.
 */
export function renderServicePortRules(
  sp: NormalizedServicePort,
  o: ResolvedRenderOptions,
  ctx: RenderContext,
  writeChains: boolean,
  largeClusterMode: boolean,
): ServicePortRules {
  const name = sp.nameString;
  const p = sp.proto;
  const hash = ctx.hash(name, p);
  const svcChain = SVC_PREFIX + hash;
  const svlChain = SVL_PREFIX + hash;
  const extChain = EXT_PREFIX + hash;
  const fwChain = FW_PREFIX + hash;

  const externallyAccessible =
    sp.nodePort !== 0 || sp.externalIPs.length > 0 || sp.loadBalancerVIPs.length > 0;
  // Externally reachable ports need Cluster endpoints even with eTP Local: pod and node
  // traffic to external destinations is short-circuited to the Cluster chain.
  const usesClusterEndpoints = !sp.internalPolicyLocal || externallyAccessible;
  const usesLocalEndpoints = sp.internalPolicyLocal || (externallyAccessible && sp.externalPolicyLocal);
  const clusterEps = usesClusterEndpoints ? sp.clusterEndpoints : [];
  const localEps = usesLocalEndpoints ? sp.localEndpoints : [];
  const hasEndpoints = sp.hasEndpoints;
  if (usesClusterEndpoints && hasEndpoints && clusterEps.length === 0) {
    // categorizeEndpoints never yields this (its fallback keeps Cluster endpoints non-empty);
    // rendering it would leave jumps to a Cluster chain that is not written.
    throw new InvalidServicePortError(name, 'hasEndpoints is true but clusterEndpoints is empty');
  }
  const usesSvc = clusterEps.length > 0;
  const usesSvl = localEps.length > 0;

  const internalChain = sp.internalPolicyLocal ? svlChain : svcChain;
  const hasInternal = hasEndpoints && !(sp.internalPolicyLocal && localEps.length === 0);
  const externalPolicyChain = sp.externalPolicyLocal ? svlChain : svcChain;
  const hasExternal = hasEndpoints && !(sp.externalPolicyLocal && localEps.length === 0);
  const usesExt = hasEndpoints && externallyAccessible;
  const usesFw = hasEndpoints && sp.loadBalancerVIPs.length > 0 && sp.sourceRanges.length > 0;
  const lbChain = usesFw ? fwChain : extChain;

  let internalTarget = '';
  let internalComment = '';
  let externalTarget = '';
  let externalComment = '';
  if (!hasEndpoints) {
    internalTarget = externalTarget = 'REJECT';
    internalComment = externalComment = quoteIptablesComment(`${name} has no endpoints`);
  } else {
    if (!hasInternal) {
      internalTarget = 'DROP';
      internalComment = quoteIptablesComment(`${name} has no local endpoints`);
    }
    if (!hasExternal) {
      externalTarget = 'DROP';
      externalComment = quoteIptablesComment(`${name} has no local endpoints`);
    }
  }

  const pp = `-m ${p} -p ${p}`;
  const filter: string[] = [];
  const dispatch: string[] = [];
  const cipMatch = `${pp} -d ${sp.clusterIP} --dport ${sp.port}`;
  const clusterIPComment = quoteIptablesComment(`${name} cluster IP`);

  if (hasInternal) {
    dispatch.push(
      `-A KUBE-SERVICES -m comment --comment ${clusterIPComment} ${cipMatch} -j ${internalChain}`,
    );
  } else {
    filter.push(`-A KUBE-SERVICES -m comment --comment ${internalComment} ${cipMatch} -j ${internalTarget}`);
  }

  if (sp.externalIPs.length > 0) {
    const c = quoteIptablesComment(`${name} external IP`);
    for (const ip of sp.externalIPs) {
      const m = `${pp} -d ${ip} --dport ${sp.port}`;
      if (hasEndpoints) dispatch.push(`-A KUBE-SERVICES -m comment --comment ${c} ${m} -j ${extChain}`);
      if (!hasExternal) {
        filter.push(
          `-A KUBE-EXTERNAL-SERVICES -m comment --comment ${externalComment} ${m} -j ${externalTarget}`,
        );
      }
    }
  }

  if (sp.loadBalancerVIPs.length > 0) {
    const c = quoteIptablesComment(`${name} loadbalancer IP`);
    const fwc = usesFw ? quoteIptablesComment(`${name} traffic not accepted by ${fwChain}`) : '';
    for (const ip of sp.loadBalancerVIPs) {
      const m = `${pp} -d ${ip} --dport ${sp.port}`;
      if (hasEndpoints) dispatch.push(`-A KUBE-SERVICES -m comment --comment ${c} ${m} -j ${lbChain}`);
      if (usesFw) filter.push(`-A KUBE-PROXY-FIREWALL -m comment --comment ${fwc} ${m} -j DROP`);
    }
    if (!hasExternal) {
      for (const ip of sp.loadBalancerVIPs) {
        filter.push(
          `-A KUBE-EXTERNAL-SERVICES -m comment --comment ${externalComment} ${pp} -d ${ip} --dport ${sp.port} -j ${externalTarget}`,
        );
      }
    }
  }

  if (sp.nodePort !== 0) {
    const bare = iptablesCommentArg(name);
    if (hasEndpoints) {
      if (o.localhostNodePorts && o.nfacctLocalhostNodePorts) {
        dispatch.push(
          `-A KUBE-NODEPORTS -m comment --comment ${bare} ${pp} -d 127.0.0.0/8 --dport ${sp.nodePort} -m nfacct --nfacct-name localhost_nps_accepted_pkts -j ${extChain}`,
        );
      }
      dispatch.push(
        `-A KUBE-NODEPORTS -m comment --comment ${bare} ${pp} --dport ${sp.nodePort} -j ${extChain}`,
      );
    }
    if (!hasExternal) {
      filter.push(
        `-A KUBE-EXTERNAL-SERVICES -m comment --comment ${externalComment} -m addrtype --dst-type LOCAL ${pp} --dport ${sp.nodePort} -j ${externalTarget}`,
      );
    }
  }

  if (sp.healthCheckNodePort !== 0) {
    filter.push(
      `-A KUBE-NODEPORTS -m comment --comment ${quoteIptablesComment(`${name} health check node port`)} -m tcp -p tcp --dport ${sp.healthCheckNodePort} -j ACCEPT`,
    );
  }

  const base = {
    nameString: name,
    serviceKey: sp.serviceKey,
    filterRules: lines(filter),
    dispatchRules: lines(dispatch),
    noLocalEndpointsInternal: hasEndpoints && !hasInternal,
    noLocalEndpointsExternal: hasEndpoints && !hasExternal,
  };
  if (!writeChains) return { ...base, chains: undefined, chainRules: undefined, chainRuleCount: 0 };

  const chains: string[] = [];
  const rules: string[] = [];

  if (hasInternal) {
    if (o.masqueradeAll) {
      rules.push(
        `-A ${internalChain} -m comment --comment ${clusterIPComment} ${cipMatch} -j KUBE-MARK-MASQ`,
      );
    } else if (o.ifNotLocal !== undefined) {
      rules.push(
        `-A ${internalChain} -m comment --comment ${clusterIPComment} ${cipMatch} ${o.ifNotLocal} -j KUBE-MARK-MASQ`,
      );
    }
  }

  if (usesExt) {
    chains.push(extChain);
    if (!sp.externalPolicyLocal) {
      rules.push(
        `-A ${extChain} -m comment --comment ${quoteIptablesComment(`masquerade traffic for ${name} external destinations`)} -j KUBE-MARK-MASQ`,
      );
    } else {
      if (o.ifLocal !== undefined) {
        rules.push(
          `-A ${extChain} -m comment --comment ${quoteIptablesComment(`pod traffic for ${name} external destinations`)} ${o.ifLocal} -j ${svcChain}`,
        );
      }
      rules.push(
        `-A ${extChain} -m comment --comment ${quoteIptablesComment(`masquerade LOCAL traffic for ${name} external destinations`)} -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
        `-A ${extChain} -m comment --comment ${quoteIptablesComment(`route LOCAL traffic for ${name} external destinations`)} -m addrtype --src-type LOCAL -j ${svcChain}`,
      );
    }
    if (hasExternal) rules.push(`-A ${extChain} -j ${externalPolicyChain}`);
  }

  if (usesFw) {
    chains.push(fwChain);
    const head = `-A ${fwChain} -m comment --comment ${quoteIptablesComment(`${name} loadbalancer IP`)}`;
    for (const cidr of sp.sourceRanges) rules.push(`${head} -s ${cidr} -j ${extChain}`);
    if (sp.sourceRangesContainNodeIP) {
      for (const ip of sp.loadBalancerVIPs) rules.push(`${head} -s ${ip} -j ${extChain}`);
    }
    rules.push(
      `-A ${fwChain} -m comment --comment ${quoteIptablesComment(`other traffic to ${name} will be dropped by KUBE-PROXY-FIREWALL`)}`,
    );
  }

  const sepNames = new Map<string, string>();
  const sepOf = (ep: NormalizedEndpoint): string => {
    let c = sepNames.get(ep.hostPort);
    if (c === undefined) {
      c = endpointChainName(name, p, ep.hostPort);
      sepNames.set(ep.hostPort, c);
    }
    return c;
  };

  if (usesSvc) {
    chains.push(svcChain);
    writeEndpointRules(rules, ctx, name, sp, svcChain, clusterEps, sepOf, largeClusterMode);
  }
  if (usesSvl) {
    chains.push(svlChain);
    writeEndpointRules(rules, ctx, name, sp, svlChain, localEps, sepOf, largeClusterMode);
  }

  // allLocallyReachable: the union of the chains' endpoints (kube-proxy uses a map; we sort).
  let reachable: readonly NormalizedEndpoint[];
  if (!usesLocalEndpoints) reachable = clusterEps;
  else if (!usesClusterEndpoints) reachable = localEps;
  else {
    const byKey = new Map<string, NormalizedEndpoint>();
    for (const ep of clusterEps) byKey.set(ep.hostPort, ep);
    for (const ep of localEps) byKey.set(ep.hostPort, ep);
    reachable = [...byKey.values()].sort((a, b) => compareStrings(a.hostPort, b.hostPort));
  }
  const svcComment = largeClusterMode ? '' : ` -m comment --comment ${iptablesCommentArg(name)}`;
  for (const ep of reachable) {
    const sep = sepOf(ep);
    chains.push(sep);
    rules.push(`-A ${sep}${svcComment} -s ${ep.ip} -j KUBE-MARK-MASQ`);
    const recent = sp.affinitySeconds !== undefined ? ` -m recent --name ${sep} --set` : '';
    rules.push(`-A ${sep}${svcComment}${recent} ${pp} -j DNAT --to-destination ${ep.hostPort}`);
  }
  return { ...base, chains, chainRules: lines(rules), chainRuleCount: rules.length };
}

function writeEndpointRules(
  rules: string[],
  ctx: RenderContext,
  name: string,
  sp: NormalizedServicePort,
  chain: string,
  endpoints: readonly NormalizedEndpoint[],
  sepOf: (ep: NormalizedEndpoint) => string,
  largeClusterMode: boolean,
): void {
  // Endpoint strings are always safe; only the name may need escaping, so check it once.
  const clean = isCleanIptablesComment(`${name} -> [ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535`);
  const comment = (ep: NormalizedEndpoint): string =>
    largeClusterMode
      ? ''
      : ` -m comment --comment ${clean ? `"${name} -> ${ep.hostPort}"` : quoteIptablesComment(`${name} -> ${ep.hostPort}`)}`;
  if (sp.affinitySeconds !== undefined) {
    for (const ep of endpoints) {
      const sep = sepOf(ep);
      rules.push(
        `-A ${chain}${comment(ep)} -m recent --name ${sep} --rcheck --seconds ${sp.affinitySeconds} --reap -j ${sep}`,
      );
    }
  }
  const n = endpoints.length;
  for (let i = 0; i < n; i++) {
    const ep = endpoints[i]!;
    const stat = i < n - 1 ? ` -m statistic --mode random --probability ${ctx.probability(n - i)}` : '';
    rules.push(`-A ${chain}${comment(ep)}${stat} -j ${sepOf(ep)}`);
  }
}

/**
 * Newline-terminated lines as one flat string. (`join('\n') + '\n'` would be a cons string:
 * every restore payload concatenating 10,000 of them then pays for flattening nested ropes.)
 */
function lines(l: readonly string[]): string {
  if (l.length === 0) return '';
  let n = 0;
  const parts = new Array<string>(l.length + 1);
  for (const x of l) parts[n++] = x;
  parts[n] = '';
  return parts.join('\n');
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * One service port in kube-proxy's nftables layout: service/local/external/firewall/endpoint
 * chains, affinity sets, and the elements of the shared verdict maps.
 *
 * @module
 */
import { joinHostPort } from '@nodeagent/core';
import type { Endpoint } from '@nodeagent/proxy-state';
import { endpointChainNameBase, hashAndTruncate, servicePortChainNameBase } from './chain-names.js';
import type { ChainSpec, ElementSpec, PortRender, SetSpec } from './model.js';
import { addrType, NFT } from './render-base.js';
import type { ResolvedNftOptions } from './render-options.js';
import { firewallSources, type PortFacts } from './service-port-input.js';

/** `dnat to` target of an endpoint: `ip:port`, IPv6 bracketed. */
export function dnatTarget(e: Endpoint): string {
  return joinHostPort(e.ip, e.port);
}

/**
 * The cluster-IP masquerade rule, or undefined when none applies. With `dest` it is
 * kube-proxy's rule (matching the cluster IP); without, the optimized layout's form for a
 * chain that only cluster-IP traffic reaches.
 */
export function internalMasqRule(
  o: ResolvedNftOptions,
  dest?: { readonly clusterIP: string; readonly proto: string; readonly port: number },
): string | undefined {
  const d = dest ? `${o.ipKw} daddr ${dest.clusterIP} ` : '';
  if (o.masqueradeAll)
    return dest
      ? `${d}${dest.proto} dport ${dest.port} jump ${NFT.markForMasquerade}`
      : `jump ${NFT.markForMasquerade}`;
  if (o.ifNotLocal !== undefined) return `${d}${o.ifNotLocal} jump ${NFT.markForMasquerade}`;
  return undefined;
}

/** Renders one port in kube-proxy's layout. */
export function renderPortKubeProxy(f: PortFacts, o: ResolvedNftOptions): PortRender {
  const info = f.info;
  const ip = o.ipKw;
  const parts = info.name;
  // One hash for the four per-service chains and one per endpoint (chain and affinity set share
  // it): the same names as serviceChainName() ... affinitySetName(), computed once.
  const portHash = hashAndTruncate(servicePortChainNameBase(parts));
  const svcChain = `service-${portHash}`;
  const localChain = `local-${portHash}`;
  const extChain = `external-${portHash}`;
  const fwChain = `firewall-${portHash}`;
  const epHashes = new Map<string, string>();
  const epHash = (e: Endpoint): string => {
    let h = epHashes.get(e.endpoint);
    if (h === undefined) {
      h = hashAndTruncate(endpointChainNameBase(parts, e.endpoint));
      epHashes.set(e.endpoint, h);
    }
    return h;
  };
  const clusterChainUsed = info.usesClusterEndpoints && f.clusterEndpoints.length > 0;
  const localChainUsed = info.usesLocalEndpoints && f.localEndpoints.length > 0;
  const internalChain = info.internalPolicyLocal ? localChain : svcChain;
  const externalPolicyChain = info.externalPolicyLocal ? localChain : svcChain;
  const chains: ChainSpec[] = [];
  const sets: SetSpec[] = [];
  const elements: ElementSpec[] = [];
  const affinity = info.sessionAffinityClientIP;
  const masq = internalMasqRule(o, { clusterIP: info.clusterIP, proto: f.proto, port: info.port });
  // A goto into a chain that is not written would make nft reject the whole transaction.
  const internalOk = f.hasInternalEndpoints && (info.internalPolicyLocal ? localChainUsed : clusterChainUsed);

  const lbRules = (eps: readonly Endpoint[]): string[] => {
    const rules: string[] = [];
    if (affinity) {
      for (const e of eps) {
        const h = epHash(e);
        rules.push(`${ip} saddr @affinity-${h} goto endpoint-${h}`);
      }
    }
    let arms = '';
    for (let i = 0; i < eps.length; i++)
      arms += `${i > 0 ? ' , ' : ''}${i} : goto endpoint-${epHash(eps[i]!)}`;
    rules.push(`numgen random mod ${eps.length} vmap { ${arms} }`);
    return rules;
  };
  if (clusterChainUsed) {
    const rules = internalChain === svcChain && internalOk && masq ? [masq] : [];
    chains.push({ name: svcChain, rules: [...rules, ...lbRules(f.clusterEndpoints)] });
  }
  if (localChainUsed) {
    const rules = internalChain === localChain && internalOk && masq ? [masq] : [];
    chains.push({ name: localChain, rules: [...rules, ...lbRules(f.localEndpoints)] });
  }
  const extUsed = f.hasEndpoints && info.externallyAccessible;
  if (extUsed) {
    const rules: string[] = [];
    const toCluster = clusterChainUsed ? `goto ${svcChain}` : undefined;
    if (!info.externalPolicyLocal) {
      rules.push(`jump ${NFT.markForMasquerade}`);
    } else {
      if (o.ifLocal !== undefined && toCluster)
        rules.push(`${o.ifLocal} ${toCluster} comment "short-circuit pod traffic"`);
      rules.push(`fib saddr type local jump ${NFT.markForMasquerade} comment "masquerade local traffic"`);
      if (toCluster) rules.push(`fib saddr type local ${toCluster} comment "short-circuit local traffic"`);
    }
    const policyChainUsed = externalPolicyChain === svcChain ? clusterChainUsed : localChainUsed;
    if (f.hasExternalEndpoints && policyChainUsed) rules.push(`goto ${externalPolicyChain}`);
    chains.push({ name: extChain, rules });
  }
  if (f.usesFirewall) {
    chains.push({
      name: fwChain,
      rules: [`${ip} saddr != { ${firewallSources(f, o.nodeIP).join(', ')} } drop`],
    });
  }
  for (const e of f.allEndpoints) {
    const h = epHash(e);
    const epChain = `endpoint-${h}`;
    const rules = [`${ip} saddr ${e.ip} jump ${NFT.markForMasquerade}`];
    if (affinity) {
      const set = `affinity-${h}`;
      sets.push({
        name: set,
        kind: 'set',
        type: `type ${addrType(o)}`,
        flags: 'dynamic,timeout',
        timeoutSeconds: info.stickyMaxAgeSeconds,
      });
      rules.push(`update @${set} { ${ip} saddr }`);
    }
    rules.push(`meta l4proto ${f.proto} dnat to ${dnatTarget(e)}`);
    chains.push({ name: epChain, rules });
  }

  // Shared map elements.
  const tupleKey = (addr: string) => `${addr} . ${f.proto} . ${info.port}`;
  const noEp = (set: string, key: string) =>
    elements.push({ set, key, comment: info.nameString, value: f.noEndpointVerdict });
  elements.push({ set: NFT.clusterIPs, key: info.clusterIP });
  if (internalOk)
    elements.push({ set: NFT.serviceIPs, key: tupleKey(info.clusterIP), value: `goto ${internalChain}` });
  else noEp(NFT.noEndpointServices, tupleKey(info.clusterIP));
  for (const eip of info.externalIPs) {
    if (extUsed) elements.push({ set: NFT.serviceIPs, key: tupleKey(eip), value: `goto ${extChain}` });
    if (!f.hasExternalEndpoints) noEp(NFT.noEndpointServices, tupleKey(eip));
  }
  for (const lb of info.loadBalancerVIPs) {
    if (extUsed) elements.push({ set: NFT.serviceIPs, key: tupleKey(lb), value: `goto ${extChain}` });
    if (f.usesFirewall) elements.push({ set: NFT.firewallIPs, key: tupleKey(lb), value: `goto ${fwChain}` });
    if (!f.hasExternalEndpoints) noEp(NFT.noEndpointServices, tupleKey(lb));
  }
  if (info.nodePort !== 0) {
    const key = `${f.proto} . ${info.nodePort}`;
    if (extUsed) elements.push({ set: NFT.serviceNodePorts, key, value: `goto ${extChain}` });
    if (!f.hasExternalEndpoints) noEp(NFT.noEndpointNodePorts, key);
  }
  return { key: info.nameString, serviceKey: info.serviceKey, chains, sets, elements };
}

/**
 * One service port in the optimized layout: no per-service chains and no anonymous sets
 * (except for session affinity, which keeps kube-proxy's per-endpoint chains and sets);
 * instead elements in a few named maps that a fixed set of chains consults:
 *
 * - `service-ips` / `service-nodeports` send a packet to one of six policy chains
 *   (`cluster-ip-cluster`, `cluster-ip-local`, `external-vip-cluster`, `external-vip-local`,
 *   `external-nodeport-cluster`, `external-nodeport-local`);
 * - those look the destination up in `*-lb` verdict maps to reach the shared chain for the
 *   endpoint count N (`lb-vip-cluster-N`, ...), which DNATs through
 *   `dnat to ip daddr . tcp dport . numgen random mod N map @*-endpoints-tcp` (one map per
 *   protocol: nft 1.0.6 cannot read back a map whose typeof uses `th dport` in its data);
 * - hairpin masquerade is one postrouting rule over the `hairpin` set (`endpointIP . endpointIP`),
 *   LoadBalancer source ranges one `firewall` chain over the `firewall-allow` interval set.
 *
 * @module
 */
import { cidrValueContains, parseCIDROrHostValue } from '@nodeagent/core';
import type { Endpoint } from '@nodeagent/proxy-state';
import type { ElementSpec, PortRender } from './model.js';
import { NFT } from './render-base.js';
import type { ResolvedNftOptions } from './render-options.js';
import { renderPortKubeProxy } from './render-port-kube-proxy.js';
import { firewallSources, type PortFacts } from './service-port-input.js';

/** Names of the optimized layout's shared objects. */
export const OPT = {
  clusterIPCluster: 'cluster-ip-cluster',
  clusterIPLocal: 'cluster-ip-local',
  externalVipCluster: 'external-vip-cluster',
  externalVipLocal: 'external-vip-local',
  externalNodePortCluster: 'external-nodeport-cluster',
  externalNodePortLocal: 'external-nodeport-local',
  firewall: 'firewall',
  vipClusterLb: 'vip-cluster-lb',
  vipLocalLb: 'vip-local-lb',
  nodePortClusterLb: 'nodeport-cluster-lb',
  nodePortLocalLb: 'nodeport-local-lb',
  vipClusterEndpoints: 'vip-cluster-endpoints',
  vipLocalEndpoints: 'vip-local-endpoints',
  nodePortClusterEndpoints: 'nodeport-cluster-endpoints',
  nodePortLocalEndpoints: 'nodeport-local-endpoints',
  hairpin: 'hairpin',
  firewallAllow: 'firewall-allow',
} as const;

/** The four endpoint-selection kinds: destination kind × endpoint list. */
export type LbKind = 'vip-cluster' | 'vip-local' | 'nodeport-cluster' | 'nodeport-local';

/** `lb-<kind>-<N>`: the shared chain choosing among N endpoints. */
export function lbChainName(kind: LbKind, n: number): string {
  return `lb-${kind}-${n}`;
}

/** Parses an `lb-<kind>-<N>` chain name. */
export function parseLbChainName(name: string): { kind: LbKind; n: number } | undefined {
  const m = /^lb-(vip-cluster|vip-local|nodeport-cluster|nodeport-local)-([1-9][0-9]*)$/.exec(name);
  return m ? { kind: m[1] as LbKind, n: Number(m[2]) } : undefined;
}

/** Removes CIDRs contained in another one of the list (interval sets reject overlaps). */
function disjointSources(sources: readonly string[]): string[] {
  const nets = [...new Set(sources)]
    .map((s) => ({ s, n: parseCIDROrHostValue(s) }))
    .filter((x): x is { s: string; n: NonNullable<typeof x.n> } => x.n !== null)
    .sort((a, b) => a.n.prefixLength - b.n.prefixLength);
  const kept: typeof nets = [];
  for (const x of nets) {
    if (!kept.some((k) => cidrValueContains(k.n, { family: x.n.family, value: x.n.base }))) kept.push(x);
  }
  return kept.map((k) => k.s).sort();
}

/** Renders one port in the optimized layout (affinity ports fall back to kube-proxy's chains). */
export function renderPortOptimized(f: PortFacts, o: ResolvedNftOptions): PortRender {
  const info = f.info;
  if (info.sessionAffinityClientIP) return renderPortKubeProxy(f, o);
  const elements: ElementSpec[] = [];
  const needs = new Set<string>();
  const clusterOk = info.usesClusterEndpoints && f.clusterEndpoints.length > 0;
  const localOk = info.usesLocalEndpoints && f.localEndpoints.length > 0;
  const tuple = (addr: string) => `${addr} . ${f.proto} . ${info.port}`;
  const addrOf = (tupleKey: string) => tupleKey.slice(0, tupleKey.indexOf(' . '));
  const epValue = (e: Endpoint) => `${e.ip} . ${e.port}`;
  const lb = (kind: LbKind, key: string, eps: readonly Endpoint[]) => {
    const vip = kind.startsWith('vip');
    const local = kind.endsWith('local');
    const chain = lbChainName(kind, eps.length);
    needs.add(chain);
    elements.push({
      set: vip
        ? local
          ? OPT.vipLocalLb
          : OPT.vipClusterLb
        : local
          ? OPT.nodePortLocalLb
          : OPT.nodePortClusterLb,
      key,
      value: `goto ${chain}`,
    });
    const epSet = `${vip ? (local ? OPT.vipLocalEndpoints : OPT.vipClusterEndpoints) : local ? OPT.nodePortLocalEndpoints : OPT.nodePortClusterEndpoints}-${f.proto}`;
    // Endpoint maps are per protocol and keyed without it (see render-base-optimized.ts).
    const epKey = vip ? `${addrOf(key)} . ${info.port}` : `${info.nodePort}`;
    eps.forEach((e, i) => {
      elements.push({ set: epSet, key: `${epKey} . ${i}`, value: epValue(e) });
    });
  };
  const noEp = (set: string, key: string) =>
    elements.push({ set, key, comment: info.nameString, value: f.noEndpointVerdict });

  elements.push({ set: NFT.clusterIPs, key: info.clusterIP });
  const internalOk = f.hasInternalEndpoints && (info.internalPolicyLocal ? localOk : clusterOk);
  if (internalOk) {
    const key = tuple(info.clusterIP);
    elements.push({
      set: NFT.serviceIPs,
      key,
      value: `goto ${info.internalPolicyLocal ? OPT.clusterIPLocal : OPT.clusterIPCluster}`,
    });
    if (info.internalPolicyLocal) lb('vip-local', key, f.localEndpoints);
    else lb('vip-cluster', key, f.clusterEndpoints);
  } else noEp(NFT.noEndpointServices, tuple(info.clusterIP));

  const extUsed = f.hasEndpoints && info.externallyAccessible;
  const policyOk = info.externalPolicyLocal ? localOk : clusterOk;
  const external = (vip: boolean, key: string) => {
    const local = info.externalPolicyLocal;
    const entry = vip
      ? local
        ? OPT.externalVipLocal
        : OPT.externalVipCluster
      : local
        ? OPT.externalNodePortLocal
        : OPT.externalNodePortCluster;
    elements.push({ set: vip ? NFT.serviceIPs : NFT.serviceNodePorts, key, value: `goto ${entry}` });
    const kind = vip ? 'vip' : 'nodeport';
    // eTP Local short-circuits pod and node traffic to the cluster-wide endpoints.
    if (clusterOk && (local || f.hasExternalEndpoints)) lb(`${kind}-cluster`, key, f.clusterEndpoints);
    if (local && f.hasExternalEndpoints && policyOk) lb(`${kind}-local`, key, f.localEndpoints);
  };
  for (const eip of info.externalIPs) {
    if (extUsed) external(true, tuple(eip));
    if (!f.hasExternalEndpoints) noEp(NFT.noEndpointServices, tuple(eip));
  }
  const sources = f.usesFirewall ? disjointSources(firewallSources(f, o.nodeIP)) : [];
  for (const vip of info.loadBalancerVIPs) {
    if (extUsed) external(true, tuple(vip));
    if (f.usesFirewall) {
      elements.push({ set: NFT.firewallIPs, key: tuple(vip), value: `goto ${OPT.firewall}` });
      for (const s of sources) elements.push({ set: OPT.firewallAllow, key: `${tuple(vip)} . ${s}` });
    }
    if (!f.hasExternalEndpoints) noEp(NFT.noEndpointServices, tuple(vip));
  }
  if (info.nodePort !== 0) {
    const key = `${f.proto} . ${info.nodePort}`;
    if (extUsed) external(false, key);
    if (!f.hasExternalEndpoints) noEp(NFT.noEndpointNodePorts, key);
  }
  for (const e of f.allEndpoints) elements.push({ set: OPT.hairpin, key: `${e.ip} . ${e.ip}` });
  return {
    key: info.nameString,
    serviceKey: info.serviceKey,
    chains: [],
    sets: [],
    elements,
    needs: [...needs].sort(),
  };
}

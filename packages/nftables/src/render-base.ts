/**
 * The shared part of kube-proxy's nftables table: base chains with their hooks, the
 * dispatch chains, the verdict maps and sets, masquerading and the reject helper.
 *
 * @module
 */
import type { ChainSpec, ElementSpec, SetSpec } from './model.js';
import type { ResolvedNftOptions } from './render-options.js';

/** Names of the shared chains, sets and maps kube-proxy writes. */
export const NFT = {
  filterPreroutingPreDnat: 'filter-prerouting-pre-dnat',
  filterOutputPreDnat: 'filter-output-pre-dnat',
  filterInput: 'filter-input',
  filterForward: 'filter-forward',
  filterOutput: 'filter-output',
  natPrerouting: 'nat-prerouting',
  natOutput: 'nat-output',
  natPostrouting: 'nat-postrouting',
  services: 'services',
  serviceEndpointsCheck: 'service-endpoints-check',
  nodeportEndpointsCheck: 'nodeport-endpoints-check',
  firewallCheck: 'firewall-check',
  clusterIPsCheck: 'cluster-ips-check',
  markForMasquerade: 'mark-for-masquerade',
  masquerading: 'masquerading',
  rejectChain: 'reject-chain',
  serviceIPs: 'service-ips',
  serviceNodePorts: 'service-nodeports',
  noEndpointServices: 'no-endpoint-services',
  noEndpointNodePorts: 'no-endpoint-nodeports',
  firewallIPs: 'firewall-ips',
  clusterIPs: 'cluster-ips',
  nodePortIPs: 'nodeport-ips',
} as const;

/** dstnat priority. */
const DSTNAT = -100;
/** srcnat priority. */
const SRCNAT = 100;
/** filter priority. */
const FILTER = 0;

/** The `ipv4_addr`/`ipv6_addr` type name of a family. */
export function addrType(o: ResolvedNftOptions): string {
  return o.family === 'ip6' ? 'ipv6_addr' : 'ipv4_addr';
}

/** `fib daddr type local ip daddr != 127.0.0.0/8` or the `@nodeport-ips` match: which destinations are node ports. */
export function nodePortDestMatch(o: ResolvedNftOptions): string {
  if (o.nodePortIPs !== undefined) return `${o.ipKw} daddr @${NFT.nodePortIPs}`;
  return `fib daddr type local ${o.ipKw} daddr != ${o.family === 'ip6' ? '::1' : '127.0.0.0/8'}`;
}

/** Shared chains, sets, maps and base elements of kube-proxy's layout. */
export function renderBase(o: ResolvedNftOptions): {
  chains: ChainSpec[];
  sets: SetSpec[];
  elements: ElementSpec[];
} {
  const ip = o.ipKw;
  const tuple = `${ip} daddr . meta l4proto . th dport`;
  const ctNew = 'ct state new';
  const hook = (type: 'filter' | 'nat', h: NonNullable<ChainSpec['hook']>['hook'], priority: number) => ({
    type,
    hook: h,
    priority,
  });
  const chains: ChainSpec[] = [
    // Current kube-proxy layout: only the firewall check sees the pre-DNAT destination; the
    // endpoint and ClusterIP checks run at filter priority, after DNAT.
    {
      name: NFT.filterPreroutingPreDnat,
      hook: hook('filter', 'prerouting', DSTNAT - 10),
      rules: [`${ctNew} jump ${NFT.firewallCheck}`],
    },
    {
      name: NFT.filterOutputPreDnat,
      hook: hook('filter', 'output', DSTNAT - 10),
      rules: [`${ctNew} jump ${NFT.firewallCheck}`],
    },
    {
      name: NFT.filterInput,
      hook: hook('filter', 'input', FILTER),
      rules: [`${ctNew} jump ${NFT.nodeportEndpointsCheck}`, `${ctNew} jump ${NFT.serviceEndpointsCheck}`],
    },
    {
      name: NFT.filterForward,
      hook: hook('filter', 'forward', FILTER),
      rules: [`${ctNew} jump ${NFT.serviceEndpointsCheck}`, `${ctNew} jump ${NFT.clusterIPsCheck}`],
    },
    {
      name: NFT.filterOutput,
      hook: hook('filter', 'output', FILTER),
      rules: [`${ctNew} jump ${NFT.serviceEndpointsCheck}`, `${ctNew} jump ${NFT.clusterIPsCheck}`],
    },
    { name: NFT.natPrerouting, hook: hook('nat', 'prerouting', DSTNAT), rules: [`jump ${NFT.services}`] },
    { name: NFT.natOutput, hook: hook('nat', 'output', DSTNAT), rules: [`jump ${NFT.services}`] },
    {
      name: NFT.natPostrouting,
      hook: hook('nat', 'postrouting', SRCNAT),
      rules: [`jump ${NFT.masquerading}`],
    },
    {
      name: NFT.clusterIPsCheck,
      rules: [
        `${ip} daddr @${NFT.clusterIPs} reject comment "Reject traffic to invalid ports of ClusterIPs"`,
        ...(o.serviceCIDRs.length > 0
          ? [
              `${ip} daddr { ${o.serviceCIDRs.join(',')} } drop comment "Drop traffic to unallocated ClusterIPs"`,
            ]
          : []),
      ],
    },
    { name: NFT.firewallCheck, rules: [`${tuple} vmap @${NFT.firewallIPs}`] },
    { name: NFT.markForMasquerade, rules: [`mark set mark or ${o.mark}`] },
    {
      name: NFT.masquerading,
      rules: [`mark and ${o.mark} == 0 return`, `mark set mark xor ${o.mark}`, 'masquerade fully-random'],
    },
    {
      name: NFT.nodeportEndpointsCheck,
      rules: [`${nodePortDestMatch(o)} meta l4proto . th dport vmap @${NFT.noEndpointNodePorts}`],
    },
    {
      name: NFT.rejectChain,
      comment: 'helper for @no-endpoint-services / @no-endpoint-nodeports',
      rules: ['reject'],
    },
    {
      name: NFT.services,
      rules: [
        `${tuple} vmap @${NFT.serviceIPs}`,
        `${nodePortDestMatch(o)} meta l4proto . th dport vmap @${NFT.serviceNodePorts}`,
      ],
    },
    { name: NFT.serviceEndpointsCheck, rules: [`${tuple} vmap @${NFT.noEndpointServices}`] },
  ];
  const a = addrType(o);
  const tupleType = `type ${a} . inet_proto . inet_service : verdict`;
  const sets: SetSpec[] = [
    { name: NFT.clusterIPs, kind: 'set', type: `type ${a}`, comment: 'Active ClusterIPs' },
    ...(o.nodePortIPs !== undefined
      ? [
          {
            name: NFT.nodePortIPs,
            kind: 'set' as const,
            type: `type ${a}`,
            comment: 'IPs that accept NodePort traffic',
          },
        ]
      : []),
    {
      name: NFT.firewallIPs,
      kind: 'map',
      type: tupleType,
      comment: 'destinations that are subject to LoadBalancerSourceRanges',
    },
    {
      name: NFT.noEndpointNodePorts,
      kind: 'map',
      type: 'type inet_proto . inet_service : verdict',
      comment: 'vmap to drop or reject packets to service nodeports with no endpoints',
    },
    {
      name: NFT.noEndpointServices,
      kind: 'map',
      type: tupleType,
      comment: 'vmap to drop or reject packets to services with no endpoints',
    },
    {
      name: NFT.serviceIPs,
      kind: 'map',
      type: tupleType,
      comment: 'ClusterIP, ExternalIP and LoadBalancer IP traffic',
    },
    {
      name: NFT.serviceNodePorts,
      kind: 'map',
      type: 'type inet_proto . inet_service : verdict',
      comment: 'NodePort traffic',
    },
  ];
  const elements: ElementSpec[] = [...new Set(o.nodePortIPs ?? [])].map((key) => ({
    set: NFT.nodePortIPs,
    key,
  }));
  return { chains, sets, elements };
}

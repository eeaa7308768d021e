/**
 * The shared chains and maps the optimized layout adds to kube-proxy's base.
 *
 * @module
 */
import type { ChainSpec, SetSpec } from './model.js';
import { addrType, NFT } from './render-base.js';
import type { ResolvedNftOptions } from './render-options.js';
import { internalMasqRule } from './render-port-kube-proxy.js';
import { type LbKind, OPT, parseLbChainName } from './render-port-optimized.js';

const PROTOS = ['tcp', 'udp', 'sctp'] as const;

function lbMaps(kind: LbKind): { lb: string; endpoints: string } {
  switch (kind) {
    case 'vip-cluster':
      return { lb: OPT.vipClusterLb, endpoints: OPT.vipClusterEndpoints };
    case 'vip-local':
      return { lb: OPT.vipLocalLb, endpoints: OPT.vipLocalEndpoints };
    case 'nodeport-cluster':
      return { lb: OPT.nodePortClusterLb, endpoints: OPT.nodePortClusterEndpoints };
    case 'nodeport-local':
      return { lb: OPT.nodePortLocalLb, endpoints: OPT.nodePortLocalEndpoints };
  }
}

/** The rule of an `lb-<kind>-<N>` chain. */
export function lbChain(name: string, o: ResolvedNftOptions): ChainSpec {
  const parsed = parseLbChainName(name);
  if (!parsed) throw new Error(`not an lb chain name: ${name}`);
  const ip = o.ipKw;
  const vip = parsed.kind.startsWith('vip');
  return {
    name,
    rules: PROTOS.map((p) => {
      const key = vip ? `${ip} daddr . ${p} dport` : `${p} dport`;
      return `meta l4proto ${p} dnat ${ip} to ${key} . numgen random mod ${parsed.n} map @${lbMaps(parsed.kind).endpoints}-${p}`;
    }),
  };
}

/** The fixed chains and maps of the optimized layout (the `lb-*` chains come from {@link lbChain}). */
export function renderOptimizedBase(o: ResolvedNftOptions): { chains: ChainSpec[]; sets: SetSpec[] } {
  const ip = o.ipKw;
  const vipKey = `${ip} daddr . meta l4proto . th dport`;
  const npKey = 'meta l4proto . th dport';
  // The cluster-IP masquerade rule without the daddr match: only cluster-IP entries reach these chains.
  const masqRule = internalMasqRule(o);
  const external = (key: string, cluster: string, local: string): string[] => [
    ...(o.ifLocal !== undefined ? [`${o.ifLocal} ${key} vmap @${cluster}`] : []),
    `fib saddr type local jump ${NFT.markForMasquerade}`,
    `fib saddr type local ${key} vmap @${cluster}`,
    `${key} vmap @${local}`,
  ];
  const chains: ChainSpec[] = [
    {
      name: OPT.clusterIPCluster,
      rules: [...(masqRule ? [masqRule] : []), `${vipKey} vmap @${OPT.vipClusterLb}`],
    },
    {
      name: OPT.clusterIPLocal,
      rules: [...(masqRule ? [masqRule] : []), `${vipKey} vmap @${OPT.vipLocalLb}`],
    },
    {
      name: OPT.externalVipCluster,
      rules: [`jump ${NFT.markForMasquerade}`, `${vipKey} vmap @${OPT.vipClusterLb}`],
    },
    { name: OPT.externalVipLocal, rules: external(vipKey, OPT.vipClusterLb, OPT.vipLocalLb) },
    {
      name: OPT.externalNodePortCluster,
      rules: [`jump ${NFT.markForMasquerade}`, `${npKey} vmap @${OPT.nodePortClusterLb}`],
    },
    { name: OPT.externalNodePortLocal, rules: external(npKey, OPT.nodePortClusterLb, OPT.nodePortLocalLb) },
    { name: OPT.firewall, rules: [`${vipKey} . ${ip} saddr @${OPT.firewallAllow} return`, 'drop'] },
  ];
  const a = addrType(o);
  const vipVerdict = `type ${a} . inet_proto . inet_service : verdict`;
  const npVerdict = 'type inet_proto . inet_service : verdict';
  const epMaps: SetSpec[] = [];
  for (const [name, vip, what] of [
    [OPT.vipClusterEndpoints, true, 'cluster endpoints by service IP, port and index'],
    [OPT.vipLocalEndpoints, true, 'local endpoints by service IP, port and index'],
    [OPT.nodePortClusterEndpoints, false, 'cluster endpoints by node port and index'],
    [OPT.nodePortLocalEndpoints, false, 'local endpoints by node port and index'],
  ] as const) {
    for (const p of PROTOS) {
      const key = vip ? `${ip} daddr . ${p} dport` : `${p} dport`;
      epMaps.push({
        name: `${name}-${p}`,
        kind: 'map',
        type: `typeof ${key} . numgen random mod 1 : ${ip} daddr . ${p} dport`,
        comment: `${p} ${what}`,
      });
    }
  }
  const sets: SetSpec[] = [
    {
      name: OPT.vipClusterLb,
      kind: 'map',
      type: vipVerdict,
      comment: 'service IP to cluster-endpoint chooser',
    },
    { name: OPT.vipLocalLb, kind: 'map', type: vipVerdict, comment: 'service IP to local-endpoint chooser' },
    {
      name: OPT.nodePortClusterLb,
      kind: 'map',
      type: npVerdict,
      comment: 'node port to cluster-endpoint chooser',
    },
    {
      name: OPT.nodePortLocalLb,
      kind: 'map',
      type: npVerdict,
      comment: 'node port to local-endpoint chooser',
    },
    ...epMaps,
    {
      name: OPT.hairpin,
      kind: 'set',
      type: `type ${a} . ${a}`,
      comment: 'endpoint IP . endpoint IP: hairpin traffic to masquerade',
    },
    {
      name: OPT.firewallAllow,
      kind: 'set',
      type: `type ${a} . inet_proto . inet_service . ${a}`,
      flags: 'interval',
      comment: 'LoadBalancer IP . protocol . port . allowed source range',
    },
  ];
  return { chains, sets };
}

/** The optimized layout's nat-postrouting rules: hairpin masquerade first, then kube-proxy's jump. */
export function optimizedPostroutingRules(o: ResolvedNftOptions): string[] {
  return [
    `ct status dnat ${o.ipKw} saddr . ${o.ipKw} daddr @${OPT.hairpin} jump ${NFT.markForMasquerade}`,
    `jump ${NFT.masquerading}`,
  ];
}

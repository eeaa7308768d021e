/**
 * The iptables rules kube-proxy's IPVS mode still needs (masquerade marks, node-port and
 * load-balancer source-range filtering, the VIP access filter), as structured data. Their
 * number does not grow with the number of services: per-service data lives in ipsets.
 *
 * @module
 */
import type { IPFamily } from '@nodeagent/proxy-state';
import {
  IPSET_DEFINITIONS,
  ipsetName,
  KUBE_CLUSTER_IP,
  KUBE_EXTERNAL_IP,
  KUBE_EXTERNAL_IP_LOCAL,
  KUBE_HEALTH_CHECK_NODE_PORT,
  KUBE_IPVS_IPS,
  KUBE_LOAD_BALANCER,
  KUBE_LOAD_BALANCER_FW,
  KUBE_LOAD_BALANCER_LOCAL,
  KUBE_LOAD_BALANCER_SOURCE_CIDR,
  KUBE_LOAD_BALANCER_SOURCE_IP,
  KUBE_LOOP_BACK,
  KUBE_NODE_PORT_LOCAL_SCTP_HASH,
  KUBE_NODE_PORT_LOCAL_TCP,
  KUBE_NODE_PORT_LOCAL_UDP,
  KUBE_NODE_PORT_SCTP_HASH,
  KUBE_NODE_PORT_TCP,
  KUBE_NODE_PORT_UDP,
} from './ipsets.js';
import type { IPSet } from './model.js';
import type { LocalTrafficDetector, ResolvedIpvsPlanOptions } from './plan-options.js';

/** nat `KUBE-SERVICES`: entered from PREROUTING and OUTPUT. */
export const KUBE_SERVICES = 'KUBE-SERVICES';
/** nat `KUBE-POSTROUTING`: masquerades marked and hairpin traffic. */
export const KUBE_POSTROUTING = 'KUBE-POSTROUTING';
/** nat and filter `KUBE-NODE-PORT`. */
export const KUBE_NODE_PORT = 'KUBE-NODE-PORT';
/** nat `KUBE-LOAD-BALANCER`. */
export const KUBE_LOAD_BALANCER_CHAIN = 'KUBE-LOAD-BALANCER';
/** nat `KUBE-MARK-MASQ`. */
export const KUBE_MARK_MASQ = 'KUBE-MARK-MASQ';
/** filter `KUBE-FORWARD`. */
export const KUBE_FORWARD = 'KUBE-FORWARD';
/** filter `KUBE-PROXY-FIREWALL`. */
export const KUBE_PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';
/** filter `KUBE-SOURCE-RANGES-FIREWALL`. */
export const KUBE_SOURCE_RANGES_FIREWALL = 'KUBE-SOURCE-RANGES-FIREWALL';
/** filter `KUBE-IPVS-FILTER`: refuses new connections to a VIP on a port no service uses. */
export const KUBE_IPVS_FILTER = 'KUBE-IPVS-FILTER';
/** filter `KUBE-IPVS-OUT-FILTER`: keeps the node off load balancers whose source ranges exclude it. */
export const KUBE_IPVS_OUT_FILTER = 'KUBE-IPVS-OUT-FILTER';

/** The nat chains, in the order kube-proxy declares them. */
export const IPVS_NAT_CHAINS: readonly string[] = [
  KUBE_SERVICES,
  KUBE_POSTROUTING,
  KUBE_NODE_PORT,
  KUBE_LOAD_BALANCER_CHAIN,
  KUBE_MARK_MASQ,
];
/** The filter chains, in the order kube-proxy declares them. */
export const IPVS_FILTER_CHAINS: readonly string[] = [
  KUBE_FORWARD,
  KUBE_NODE_PORT,
  KUBE_PROXY_FIREWALL,
  KUBE_SOURCE_RANGES_FIREWALL,
  KUBE_IPVS_FILTER,
  KUBE_IPVS_OUT_FILTER,
];

/** One match of a residual rule, rendered in array order. */
export type RuleMatch =
  | { readonly kind: 'source'; readonly cidr: string; readonly negated: boolean }
  | { readonly kind: 'in-interface'; readonly name: string; readonly negated: boolean }
  | { readonly kind: 'protocol'; readonly protocol: 'tcp' | 'udp' | 'sctp' }
  | { readonly kind: 'comment'; readonly text: string }
  | { readonly kind: 'set'; readonly set: string; readonly flags: readonly ('src' | 'dst')[] }
  | { readonly kind: 'addrtype'; readonly direction: 'src' | 'dst'; readonly negated: boolean }
  | { readonly kind: 'physdev-is-in'; readonly negated: boolean }
  | { readonly kind: 'mark'; readonly mark: string; readonly negated: boolean }
  | { readonly kind: 'ctstate'; readonly states: readonly string[] }
  | { readonly kind: 'ipvs'; readonly vaddr: string; readonly vproto: string; readonly vport: number };

/** What a residual rule does when it matches. */
export type RuleTarget =
  | { readonly kind: 'verdict'; readonly verdict: 'ACCEPT' | 'DROP' | 'REJECT' | 'RETURN' }
  | { readonly kind: 'jump'; readonly chain: string }
  | { readonly kind: 'masquerade'; readonly randomFully: boolean }
  | { readonly kind: 'mark'; readonly op: 'or' | 'xor'; readonly mark: string };

/** One residual iptables rule. */
export interface ResidualRule {
  /** `filter` or `nat`. */
  readonly table: 'filter' | 'nat';
  /** The chain it is appended to. */
  readonly chain: string;
  /** Matches in kube-proxy's argument order. */
  readonly matches: readonly RuleMatch[];
  /** The target. */
  readonly target: RuleTarget;
}

/** The residual iptables part of a plan. */
export interface ResidualIptables {
  /** Chains declared in the filter table (flushed and rewritten by a restore). */
  readonly filterChains: readonly string[];
  /** Chains declared in the nat table. */
  readonly natChains: readonly string[];
  /** Rules in output order (each table's rules keep kube-proxy's order). */
  readonly rules: readonly ResidualRule[];
}

/** A load-balancer IP:port the node may not reach (its source ranges exclude the node IP). */
export interface NoNodeAccessEntry {
  /** The LB IP. */
  readonly address: string;
  /** Lower-case protocol. */
  readonly protocol: 'tcp' | 'udp' | 'sctp';
  /** The service port. */
  readonly port: number;
}

const verdict = (v: 'ACCEPT' | 'DROP' | 'REJECT' | 'RETURN'): RuleTarget => ({ kind: 'verdict', verdict: v });
const jump = (chain: string): RuleTarget =>
  chain === 'RETURN' || chain === 'ACCEPT' ? verdict(chain) : { kind: 'jump', chain };
const comment = (text: string): RuleMatch => ({ kind: 'comment', text });
const set = (name: string, flags: string): RuleMatch => ({
  kind: 'set',
  set: name,
  flags: flags.split(',') as ('src' | 'dst')[],
});

function ifNotLocal(det: LocalTrafficDetector): RuleMatch[] {
  switch (det.mode) {
    case 'ClusterCIDR':
    case 'NodeCIDR':
      return [{ kind: 'source', cidr: det.cidr, negated: true }];
    case 'BridgeInterface':
      return [{ kind: 'in-interface', name: det.interfaceName, negated: true }];
    case 'InterfaceNamePrefix':
      return [{ kind: 'in-interface', name: `${det.interfacePrefix}+`, negated: true }];
    case 'None':
      return [];
  }
}

// kube-proxy's table of "set X in table T: chain FROM jumps to TO when matching FLAGS".
const SET_RULES: readonly {
  base: string;
  table: 'filter' | 'nat';
  from: string;
  to: string;
  flags: string;
  protocol?: 'tcp' | 'udp' | 'sctp';
}[] = [
  { base: KUBE_LOOP_BACK, table: 'nat', from: KUBE_POSTROUTING, to: 'MASQUERADE', flags: 'dst,dst,src' },
  {
    base: KUBE_LOAD_BALANCER,
    table: 'nat',
    from: KUBE_SERVICES,
    to: KUBE_LOAD_BALANCER_CHAIN,
    flags: 'dst,dst',
  },
  {
    base: KUBE_LOAD_BALANCER_LOCAL,
    table: 'nat',
    from: KUBE_LOAD_BALANCER_CHAIN,
    to: 'RETURN',
    flags: 'dst,dst',
  },
  {
    base: KUBE_NODE_PORT_LOCAL_TCP,
    table: 'nat',
    from: KUBE_NODE_PORT,
    to: 'RETURN',
    flags: 'dst',
    protocol: 'tcp',
  },
  {
    base: KUBE_NODE_PORT_TCP,
    table: 'nat',
    from: KUBE_NODE_PORT,
    to: KUBE_MARK_MASQ,
    flags: 'dst',
    protocol: 'tcp',
  },
  {
    base: KUBE_NODE_PORT_LOCAL_UDP,
    table: 'nat',
    from: KUBE_NODE_PORT,
    to: 'RETURN',
    flags: 'dst',
    protocol: 'udp',
  },
  {
    base: KUBE_NODE_PORT_UDP,
    table: 'nat',
    from: KUBE_NODE_PORT,
    to: KUBE_MARK_MASQ,
    flags: 'dst',
    protocol: 'udp',
  },
  {
    base: KUBE_NODE_PORT_LOCAL_SCTP_HASH,
    table: 'nat',
    from: KUBE_NODE_PORT,
    to: 'RETURN',
    flags: 'dst,dst',
    protocol: 'sctp',
  },
  {
    base: KUBE_NODE_PORT_SCTP_HASH,
    table: 'nat',
    from: KUBE_NODE_PORT,
    to: KUBE_MARK_MASQ,
    flags: 'dst,dst',
    protocol: 'sctp',
  },
  {
    base: KUBE_LOAD_BALANCER_FW,
    table: 'filter',
    from: KUBE_PROXY_FIREWALL,
    to: KUBE_SOURCE_RANGES_FIREWALL,
    flags: 'dst,dst',
  },
  {
    base: KUBE_LOAD_BALANCER_SOURCE_CIDR,
    table: 'filter',
    from: KUBE_SOURCE_RANGES_FIREWALL,
    to: 'RETURN',
    flags: 'dst,dst,src',
  },
  {
    base: KUBE_LOAD_BALANCER_SOURCE_IP,
    table: 'filter',
    from: KUBE_SOURCE_RANGES_FIREWALL,
    to: 'RETURN',
    flags: 'dst,dst,src',
  },
];

const COMMENTS = new Map(IPSET_DEFINITIONS.map((d) => [d.baseName, d.comment]));

/**
 * Builds the residual rules kube-proxy's IPVS proxier writes for the given sets. Rules that
 * match a set are only written when the set has entries, except the always-present filter
 * rules (health-check accept and the VIP access filter).
 * @param sets the plan's sets by base (IPv4) name.
 */
export function buildResidualIptables(
  sets: ReadonlyMap<string, IPSet>,
  family: IPFamily,
  options: ResolvedIpvsPlanOptions,
  noNodeAccess: readonly NoNodeAccessEntry[],
): ResidualIptables {
  const nat: ResidualRule[] = [];
  const filter: ResidualRule[] = [];
  const name = (base: string) => ipsetName(base, family);
  const nonEmpty = (base: string) => (sets.get(base)?.entries.length ?? 0) > 0;
  const cmt = (base: string) => comment(COMMENTS.get(base) ?? base);
  const add = (table: 'filter' | 'nat', chain: string, matches: RuleMatch[], target: RuleTarget) =>
    (table === 'nat' ? nat : filter).push({ table, chain, matches, target });

  // Connections from localhost are never load-balanced; IPVS would answer them from a VIP.
  add(
    'nat',
    KUBE_SERVICES,
    [{ kind: 'source', cidr: family === 4 ? '127.0.0.0/8' : '::1/128', negated: false }],
    verdict('RETURN'),
  );

  for (const r of SET_RULES) {
    if (!nonEmpty(r.base)) continue;
    const m: RuleMatch[] = [];
    if (r.protocol) m.push({ kind: 'protocol', protocol: r.protocol });
    m.push(cmt(r.base), set(name(r.base), r.flags));
    const target: RuleTarget =
      r.to === 'MASQUERADE' ? { kind: 'masquerade', randomFully: false } : jump(r.to);
    add(r.table, r.from, m, target);
  }

  if (nonEmpty(KUBE_CLUSTER_IP)) {
    const base = [cmt(KUBE_CLUSTER_IP)];
    const clusterName = name(KUBE_CLUSTER_IP);
    if (options.masqueradeAll) {
      add('nat', KUBE_SERVICES, [...base, set(clusterName, 'dst,dst')], jump(KUBE_MARK_MASQ));
    } else if (options.localDetector.mode !== 'None') {
      // Off-cluster traffic to a VIP may leave the node again: masquerade it.
      add(
        'nat',
        KUBE_SERVICES,
        [...base, set(clusterName, 'dst,dst'), ...ifNotLocal(options.localDetector)],
        jump(KUBE_MARK_MASQ),
      );
    } else {
      // Node-originated connections pick a VIP as source address (it is on kube-ipvs0).
      add('nat', KUBE_SERVICES, [...base, set(clusterName, 'src,dst')], jump(KUBE_MARK_MASQ));
    }
  }

  const externalIPRules = (base: RuleMatch[]) => {
    // Traffic from off the node (not bridged, not local) and traffic to addresses that are local anyway.
    add(
      'nat',
      KUBE_SERVICES,
      [
        ...base,
        { kind: 'physdev-is-in', negated: true },
        { kind: 'addrtype', direction: 'src', negated: true },
      ],
      verdict('ACCEPT'),
    );
    add(
      'nat',
      KUBE_SERVICES,
      [...base, { kind: 'addrtype', direction: 'dst', negated: false }],
      verdict('ACCEPT'),
    );
  };
  if (nonEmpty(KUBE_EXTERNAL_IP)) {
    const base = [cmt(KUBE_EXTERNAL_IP), set(name(KUBE_EXTERNAL_IP), 'dst,dst')];
    add('nat', KUBE_SERVICES, base, jump(KUBE_MARK_MASQ));
    externalIPRules(base);
  }
  if (nonEmpty(KUBE_EXTERNAL_IP_LOCAL)) {
    externalIPRules([cmt(KUBE_EXTERNAL_IP_LOCAL), set(name(KUBE_EXTERNAL_IP_LOCAL), 'dst,dst')]);
  }

  add('nat', KUBE_SERVICES, [{ kind: 'addrtype', direction: 'dst', negated: false }], jump(KUBE_NODE_PORT));
  add('nat', KUBE_LOAD_BALANCER_CHAIN, [], jump(KUBE_MARK_MASQ));
  add('filter', KUBE_SOURCE_RANGES_FIREWALL, [], verdict('DROP'));

  // The node's own connections to an LB VIP come from the VIP itself (it is bound locally).
  for (const e of noNodeAccess) {
    add(
      'filter',
      KUBE_IPVS_OUT_FILTER,
      [
        { kind: 'source', cidr: e.address, negated: false },
        { kind: 'ipvs', vaddr: e.address, vproto: e.protocol, vport: e.port },
      ],
      verdict('DROP'),
    );
  }

  // Accept IPVS-bound traffic so that other rules in the nat table cannot interfere.
  for (const base of [KUBE_CLUSTER_IP, KUBE_LOAD_BALANCER]) {
    if (nonEmpty(base)) add('nat', KUBE_SERVICES, [set(name(base), 'dst,dst')], verdict('ACCEPT'));
  }

  if (!options.conntrackTCPLiberal) {
    add('filter', KUBE_FORWARD, [{ kind: 'ctstate', states: ['INVALID'] }], verdict('DROP'));
  }
  const markMatch = `${options.masqueradeMark}/${options.masqueradeMark}`;
  add(
    'filter',
    KUBE_FORWARD,
    [comment('kubernetes forwarding rules'), { kind: 'mark', mark: markMatch, negated: false }],
    verdict('ACCEPT'),
  );
  add(
    'filter',
    KUBE_FORWARD,
    [
      comment('kubernetes forwarding conntrack rule'),
      { kind: 'ctstate', states: ['RELATED', 'ESTABLISHED'] },
    ],
    verdict('ACCEPT'),
  );
  add(
    'filter',
    KUBE_NODE_PORT,
    [cmt(KUBE_HEALTH_CHECK_NODE_PORT), set(name(KUBE_HEALTH_CHECK_NODE_PORT), 'dst')],
    verdict('ACCEPT'),
  );
  for (const [base, flags] of [
    [KUBE_LOAD_BALANCER, 'dst,dst'],
    [KUBE_CLUSTER_IP, 'dst,dst'],
    [KUBE_EXTERNAL_IP, 'dst,dst'],
    [KUBE_EXTERNAL_IP_LOCAL, 'dst,dst'],
    [KUBE_HEALTH_CHECK_NODE_PORT, 'dst'],
  ] as const) {
    add('filter', KUBE_IPVS_FILTER, [set(name(base), flags)], verdict('RETURN'));
  }
  add(
    'filter',
    KUBE_IPVS_FILTER,
    [{ kind: 'ctstate', states: ['NEW'] }, set(name(KUBE_IPVS_IPS), 'dst')],
    verdict('REJECT'),
  );

  add('nat', KUBE_POSTROUTING, [{ kind: 'mark', mark: markMatch, negated: true }], verdict('RETURN'));
  add('nat', KUBE_POSTROUTING, [], { kind: 'mark', op: 'xor', mark: options.masqueradeMark });
  add('nat', KUBE_POSTROUTING, [comment('kubernetes service traffic requiring SNAT')], {
    kind: 'masquerade',
    randomFully: options.randomFully,
  });
  add('nat', KUBE_MARK_MASQ, [], { kind: 'mark', op: 'or', mark: options.masqueradeMark });

  return { filterChains: IPVS_FILTER_CHAINS, natChains: IPVS_NAT_CHAINS, rules: [...filter, ...nat] };
}

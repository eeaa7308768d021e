/**
 * A packet tracer over an IPVS plan, with the same result shape as the iptables and nftables
 * tracers. It models the data path of kube-proxy's IPVS mode: nat `KUBE-SERVICES` (marks for
 * masquerade, with ipset lookups), the filter chains hooked into INPUT / OUTPUT / FORWARD, then
 * IPVS itself for packets to a local address (a virtual server with no usable real server
 * answers ICMP port-unreachable, reported as `REJECT`), and `KUBE-POSTROUTING` per endpoint.
 *
 * @module
 */
import { cidrContains, isLoopbackIP, joinHostPort, mustParseIP, parseIP } from '@nodeagent/core';
import type { TracePacket, TraceResult } from '@nodeagent/proxy-state';
import { parseIPSetEntry } from './ipsets.js';
import type { IPSet, VirtualServer } from './model.js';
import type { IpvsPlan } from './planner.js';
import { ruleLine } from './render-iptables.js';
import {
  KUBE_FORWARD,
  KUBE_IPVS_FILTER,
  KUBE_IPVS_OUT_FILTER,
  KUBE_NODE_PORT,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
  type ResidualRule,
  type RuleMatch,
} from './residual-iptables.js';

/** A packet to trace (the shared `@nodeagent/proxy-state` packet, plus bridged traffic). */
export interface IpvsTracePacket extends TracePacket {
  /** More of the node's own addresses (the plan's node and bound addresses are always local). */
  readonly nodeIPs?: readonly string[];
  /**
   * The packet comes from a process on the node (nat OUTPUT, IPVS at LOCAL_OUT, filter OUTPUT).
   * @default false
   */
  readonly fromLocalProcess?: boolean;
  /**
   * The packet entered through a bridge port (`-m physdev --physdev-is-in`), as bridged pod
   * traffic does.
   * @default false
   */
  readonly fromBridge?: boolean;
}

/** What happens to a packet, with the IPVS tracer's debugging fields. */
export interface IpvsTraceResult extends TraceResult {
  /** Outputs in order (the virtual server, verdicts, MASQUERADE), for debugging. */
  readonly outputs: readonly string[];
  /** The rules that matched, in order, as iptables-restore lines. */
  readonly matchedRules: readonly string[];
}

type Verdict = 'ACCEPT' | 'DROP' | 'REJECT';

interface View {
  src: string;
  dst: string;
  dport: number;
  mark: boolean;
  ipvs: VirtualServer | undefined;
}

class Tracer {
  readonly #rules = new Map<string, ResidualRule[]>();
  readonly #sets = new Map<string, IPSet>();
  readonly #local: string[];
  readonly #pkt: IpvsTracePacket;
  readonly #proto: string;
  readonly matched: string[] = [];
  readonly outputs: string[] = [];

  constructor(plan: IpvsPlan, pkt: IpvsTracePacket) {
    for (const r of plan.iptables.rules) {
      const k = `${r.table}/${r.chain}`;
      this.#rules.set(k, [...(this.#rules.get(k) ?? []), r]);
    }
    for (const s of plan.ipsets) this.#sets.set(s.name, s);
    this.#pkt = pkt;
    this.#proto = (pkt.protocol ?? 'TCP').toLowerCase();
    this.#local = [...plan.nodeAddresses, ...plan.boundAddresses, ...(pkt.nodeIPs ?? [])];
  }

  isLocal(ip: string): boolean {
    return isLoopbackIP(ip) || this.#local.some((l) => sameIP(l, ip));
  }

  #inSet(name: string, flags: readonly ('src' | 'dst')[], v: View): boolean {
    const set = this.#sets.get(name);
    if (!set) return false;
    const addr = (i: number) => (flags[i] === 'src' ? v.src : v.dst);
    // Only destination ports are known; a source-port dimension never matches.
    const port = (i: number) => (flags[i] === 'dst' ? v.dport : undefined);
    return set.entries.some((text) => {
      const e = parseIPSetEntry(set.type, text);
      if (!e) return false;
      if (set.type === 'bitmap:port') return e.port === port(0);
      if (!sameIP(e.ip!, addr(0))) return false;
      if (set.type === 'hash:ip') return true;
      if (e.protocol !== this.#proto || e.port !== port(1)) return false;
      if (set.type === 'hash:ip,port') return true;
      if (set.type === 'hash:ip,port,ip') return sameIP(e.ip2!, addr(2));
      return cidrContains(e.net!, addr(2));
    });
  }

  #matches(m: RuleMatch, v: View): boolean {
    switch (m.kind) {
      case 'source':
        return (m.cidr.includes('/') ? cidrContains(m.cidr, v.src) : sameIP(m.cidr, v.src)) !== m.negated;
      case 'in-interface': {
        const ifc = this.#pkt.inInterface;
        const hit =
          ifc !== undefined && (m.name.endsWith('+') ? ifc.startsWith(m.name.slice(0, -1)) : ifc === m.name);
        return hit !== m.negated;
      }
      case 'protocol':
        return m.protocol === this.#proto;
      case 'comment':
        return true;
      case 'set':
        return this.#inSet(m.set, m.flags, v);
      case 'addrtype':
        return this.isLocal(m.direction === 'src' ? v.src : v.dst) !== m.negated;
      case 'physdev-is-in':
        return (this.#pkt.fromBridge ?? false) !== m.negated;
      case 'mark':
        return v.mark !== m.negated;
      case 'ctstate':
        // A traced packet is the first of its connection.
        return m.states.includes('NEW');
      case 'ipvs':
        return (
          v.ipvs !== undefined &&
          sameIP(v.ipvs.address, m.vaddr) &&
          v.ipvs.protocol.toLowerCase() === m.vproto &&
          v.ipvs.port === m.vport
        );
    }
  }

  /** Runs a chain: a verdict, or undefined when the packet falls through / returns. */
  run(table: string, chain: string, v: View, depth = 0): Verdict | undefined {
    if (depth > 16) throw new Error(`jump loop through ${table}/${chain}`);
    for (const rule of this.#rules.get(`${table}/${chain}`) ?? []) {
      if (!rule.matches.every((m) => this.#matches(m, v))) continue;
      this.matched.push(ruleLine(rule));
      const t = rule.target;
      switch (t.kind) {
        case 'verdict':
          if (t.verdict === 'RETURN') return undefined;
          this.outputs.push(t.verdict);
          return t.verdict;
        case 'mark':
          v.mark = t.op === 'or';
          continue;
        case 'masquerade':
          this.outputs.push('MASQUERADE');
          return 'ACCEPT';
        case 'jump': {
          const r = this.run(table, t.chain, v, depth + 1);
          if (r !== undefined) return r;
          continue;
        }
      }
    }
    return undefined;
  }
}

function firstBlocking(results: (Verdict | undefined)[]): Verdict | undefined {
  for (const r of results) if (r !== undefined) return r;
  return undefined;
}

/**
 * Traces `pkt` through `plan` and reports where it goes.
 * @throws InvalidIPError (from `@nodeagent/core`) naming an address that is not an IP.
 */
export function traceIpvs(plan: IpvsPlan, pkt: IpvsTracePacket): IpvsTraceResult {
  const src = mustParseIP(pkt.sourceIP, 'source').ip;
  const dst = mustParseIP(pkt.destIP, 'destination').ip;
  for (const ip of pkt.nodeIPs ?? []) mustParseIP(ip, 'node IP');
  const t = new Tracer(plan, pkt);
  const proto = pkt.protocol ?? 'TCP';
  const v: View = { src, dst, dport: pkt.destPort, mark: false, ipvs: undefined };
  // nat PREROUTING / OUTPUT → KUBE-SERVICES: marks only (IPVS, not iptables, rewrites the destination).
  t.run('nat', KUBE_SERVICES, v);
  const vs = plan.virtualServers.find(
    (s) => sameIP(s.address, dst) && s.port === pkt.destPort && s.protocol === proto,
  );
  const dstLocal = t.isLocal(dst);
  let verdict: Verdict | undefined;
  if (pkt.fromLocalProcess) {
    // IPVS handles locally generated packets at LOCAL_OUT, before filter OUTPUT.
    if (vs && dstLocal) v.ipvs = vs;
    verdict = t.run('filter', KUBE_IPVS_OUT_FILTER, v);
    if (verdict === undefined && !v.ipvs && dstLocal) {
      verdict = firstBlocking(
        [KUBE_IPVS_FILTER, KUBE_PROXY_FIREWALL, KUBE_NODE_PORT].map((c) => t.run('filter', c, v)),
      );
    }
  } else if (dstLocal) {
    // filter INPUT (jumps are prepended, so the last ensured comes first), then IPVS at LOCAL_IN.
    verdict = firstBlocking(
      [KUBE_IPVS_FILTER, KUBE_PROXY_FIREWALL, KUBE_NODE_PORT].map((c) => t.run('filter', c, v)),
    );
    if (vs) v.ipvs = vs;
  } else {
    verdict = firstBlocking([KUBE_FORWARD, KUBE_PROXY_FIREWALL].map((c) => t.run('filter', c, v)));
  }
  const base = { outputs: t.outputs, matchedRules: t.matched };
  if (verdict === 'DROP' || verdict === 'REJECT') {
    return { outcome: verdict, endpoints: [], masquerade: v.mark, ...base };
  }
  if (!v.ipvs) {
    return {
      outcome: verdict === 'ACCEPT' ? 'ACCEPT' : 'untouched',
      endpoints: [],
      masquerade: v.mark,
      ...base,
    };
  }
  t.outputs.push(`IPVS ${joinHostPort(v.ipvs.address, v.ipvs.port)}/${v.ipvs.protocol}`);
  const live = v.ipvs.realServers.filter((r) => r.weight > 0);
  if (live.length === 0) {
    // ip_vs_leave: no destination to schedule → ICMP port unreachable.
    t.outputs.push('REJECT');
    return { outcome: 'REJECT', endpoints: [], masquerade: v.mark, ...base };
  }
  let masquerade = false;
  for (const r of live) {
    const after: View = { src, dst: r.address, dport: r.port, mark: v.mark, ipvs: v.ipvs };
    const before = t.outputs.length;
    t.run('nat', KUBE_POSTROUTING, after);
    if (t.outputs.slice(before).includes('MASQUERADE')) masquerade = true;
  }
  const endpoints = live.map((r) => joinHostPort(r.address, r.port)).sort();
  return { outcome: 'endpoints', endpoints, masquerade, ...base };
}

/** True when two IP texts denote the same address. */
function sameIP(a: string, b: string): boolean {
  const x = parseIP(a);
  const y = parseIP(b);
  return x !== null && y !== null && x.ip === y.ip;
}

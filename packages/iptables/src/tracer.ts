/**
 * A packet tracer over rendered rules, working like the one in kube-proxy's unit tests:
 * it walks nat PREROUTING (or OUTPUT) → KUBE-SERVICES, follows every probabilistic
 * endpoint jump so all reachable endpoints are reported, then runs the filter chains
 * kube-proxy writes against the (DNAT-ed) destination.
 *
 * @module
 */

import {
  cidrValueContains,
  InvalidIPError,
  type IPValue,
  parseCIDRValue,
  parseIPValue,
} from '@nodeagent/core';
import type { TracePacket as BaseTracePacket, TraceResult as BaseTraceResult } from '@nodeagent/proxy-state';
import { type ParsedRule, parseRestoreText } from './restore-parser.js';

/** Rules by table and chain (as a restore payload writes them or a fake executor holds them). */
export type IptablesTables = ReadonlyMap<string, ReadonlyMap<string, readonly ParsedRule[]>>;

/** Builds {@link IptablesTables} from restore text (one full payload). */
export function tablesFromRestoreText(text: string): IptablesTables {
  const tables = new Map<string, Map<string, ParsedRule[]>>();
  for (const t of parseRestoreText(text)) {
    const chains = new Map<string, ParsedRule[]>();
    for (const [name, c] of t.chains) if (!c.deleted) chains.set(name, c.rules);
    tables.set(t.name, chains);
  }
  return tables;
}

/** A packet to trace (the shared `@nodeagent/proxy-state` packet, with this tracer's default). */
export interface TracePacket extends BaseTracePacket {
  /**
   * Start in nat OUTPUT (locally generated) instead of PREROUTING. Both reach
   * KUBE-SERVICES; the difference only matters when built-in chains hold other rules.
   * @default false
   */
  readonly fromLocalProcess?: boolean;
}

/** What happens to a packet, with the iptables tracer's debugging fields. */
export interface TraceResult extends BaseTraceResult {
  /** Outputs in the order produced (DNAT destinations and verdicts), for debugging. */
  readonly outputs: readonly string[];
  /** The rules that matched, in order. */
  readonly matchedRules: readonly string[];
}

const BUILTIN_TERMINAL = new Set(['ACCEPT', 'DROP', 'REJECT']);

interface Walk {
  outputs: string[];
  matched: string[];
  masq: boolean;
}

class Tracer {
  readonly #tables: IptablesTables;
  readonly #local: IPValue[];
  readonly #pkt: TracePacket;
  readonly #proto: string;

  constructor(tables: IptablesTables, pkt: TracePacket) {
    this.#tables = tables;
    this.#pkt = pkt;
    this.#proto = (pkt.protocol ?? 'TCP').toLowerCase();
    this.#local = ['127.0.0.1', '::1', ...(pkt.nodeIPs ?? [])].map((s) => {
      const ip = parseAddress(s);
      if (!ip) throw new InvalidIPError(s, 'IP address', 'node IP');
      return ip;
    });
  }

  #isLocal(ip: IPValue): boolean {
    return this.#local.some((l) => l.family === ip.family && l.value === ip.value);
  }

  #matchAddr(spec: string, ip: IPValue): boolean {
    const cidr = spec.includes('/') ? parseCIDRValue(spec.trim(), KEEP_V4_MAPPED) : null;
    if (cidr) return cidrValueContains(cidr, ip);
    const exact = parseAddress(spec);
    return exact !== null && exact.family === ip.family && exact.value === ip.value;
  }

  #ruleMatches(rule: ParsedRule, src: IPValue, dst: IPValue, dport: number): boolean {
    for (const [name, { value, negated }] of rule.params) {
      let m: boolean;
      switch (name) {
        case '-j':
        case '--comment':
        case '--to-destination':
        case '--probability':
        case '--mode':
        case '--name':
        case '--set':
        case '--seconds':
        case '--reap':
        case '--or-mark':
        case '--xor-mark':
        case '--random-fully':
        case '--nfacct-name':
          continue;
        case '-s':
          m = this.#matchAddr(value, src);
          break;
        case '-d':
          m = this.#matchAddr(value, dst);
          break;
        case '-p':
          m = value.toLowerCase() === this.#proto;
          break;
        case '--dport':
          m = Number(value) === dport;
          break;
        case '--src-type':
          m = value === 'LOCAL' && this.#isLocal(src);
          break;
        case '--dst-type':
          m = value === 'LOCAL' && this.#isLocal(dst);
          break;
        case '-i': {
          const ifc = this.#pkt.inInterface;
          m = ifc !== undefined && (value.endsWith('+') ? ifc.startsWith(value.slice(0, -1)) : ifc === value);
          break;
        }
        // Matches on packet history (affinity, marks, conntrack state) never match a fresh packet.
        case '--rcheck':
        case '--mark':
        case '--ctstate':
          return false;
        // ipset contents are not part of restore text, so a set match cannot be decided here.
        case '--match-set':
          throw new Error(
            `tracer cannot evaluate -m set (ipset ${JSON.stringify(value)} is not in the rules) in ${JSON.stringify(rule.raw)}; ` +
              'trace IPVS-mode rules with traceIpvs from `@nodeagent/ipvs`',
          );
        default:
          throw new Error(`tracer does not understand ${name} in ${JSON.stringify(rule.raw)}`);
      }
      if (m === negated) return false;
    }
    return true;
  }

  /** Runs a chain; returns true if the packet reached a terminal verdict or DNAT. */
  run(table: string, chain: string, src: IPValue, dst: IPValue, dport: number, w: Walk, depth = 0): boolean {
    if (depth > 64) throw new Error(`jump loop through ${table}/${chain}`);
    const rules = this.#tables.get(table)?.get(chain);
    if (!rules) return false;
    for (const rule of rules) {
      const target = rule.params.get('-j')?.value;
      if (target === undefined) continue;
      if (!this.#ruleMatches(rule, src, dst, dport)) continue;
      w.matched.push(rule.raw);
      if (target === 'KUBE-MARK-MASQ') {
        w.masq = true;
        continue;
      }
      if (target === 'RETURN') return false;
      if (target === 'MARK' || target === 'MASQUERADE') continue;
      if (BUILTIN_TERMINAL.has(target)) {
        w.outputs.push(target);
        return true;
      }
      if (target === 'DNAT') {
        w.outputs.push(rule.params.get('--to-destination')?.value ?? '');
        return true;
      }
      const terminated = this.run(table, target, src, dst, dport, w, depth + 1);
      // A probabilistic jump may not be taken: keep walking so every endpoint is reported.
      if (terminated && !rule.params.has('--probability')) return true;
    }
    return false;
  }
}

function hostOf(hostPort: string): string {
  if (hostPort.startsWith('[')) return hostPort.slice(1, hostPort.indexOf(']'));
  return hostPort.slice(0, hostPort.lastIndexOf(':'));
}

/**
 * Traces `pkt` through `rules` (restore text or parsed tables) and reports where it goes.
 * @throws InvalidIPError (from `@nodeagent/core`) for invalid addresses, Error for rules the tracer
 *   does not understand.
 */
export function tracePacket(rules: string | IptablesTables, pkt: TracePacket): TraceResult {
  const tables = typeof rules === 'string' ? tablesFromRestoreText(rules) : rules;
  const src = parseAddress(pkt.sourceIP);
  let dst = parseAddress(pkt.destIP);
  if (!src) throw new InvalidIPError(pkt.sourceIP, 'IP address', 'source');
  if (!dst) throw new InvalidIPError(pkt.destIP, 'IP address', 'destination');
  const t = new Tracer(tables, pkt);
  const w: Walk = { outputs: [], matched: [], masq: false };
  const natStart = pkt.fromLocalProcess ? 'OUTPUT' : 'PREROUTING';
  // Rendered payloads do not contain the built-in chains: enter KUBE-SERVICES directly then.
  if (tables.get('nat')?.has(natStart)) t.run('nat', natStart, src, dst, pkt.destPort, w);
  else t.run('nat', 'KUBE-SERVICES', src, dst, pkt.destPort, w);
  const natOutputs = w.outputs.length;
  if (natOutputs > 0) {
    const first = parseAddress(hostOf(w.outputs[0]!));
    if (first) dst = first;
  }
  for (const chain of ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-NODEPORTS', 'KUBE-PROXY-FIREWALL']) {
    t.run('filter', chain, src, dst, pkt.destPort, w);
  }
  const endpoints = [...new Set(w.outputs.slice(0, natOutputs))].sort();
  const verdict = w.outputs.slice(natOutputs).find((o) => BUILTIN_TERMINAL.has(o)) as
    | TraceResult['outcome']
    | undefined;
  let outcome: TraceResult['outcome'] = 'untouched';
  if (verdict === 'REJECT' || verdict === 'DROP') outcome = verdict;
  else if (endpoints.length > 0) outcome = 'endpoints';
  else if (verdict) outcome = verdict;
  return { outcome, endpoints, masquerade: w.masq, outputs: w.outputs, matchedRules: w.matched };
}

/** Rule text keeps `::ffff:a.b.c.d` as IPv6 (an IPv6 ruleset's address), as iptables does. */
const KEEP_V4_MAPPED = { keepV4Mapped: true } as const;

/** An address of a rule or packet (surrounding whitespace ignored); null when invalid. */
function parseAddress(text: string): IPValue | null {
  return parseIPValue(text.trim(), KEEP_V4_MAPPED);
}

/**
 * A packet tracer over an nftables table (the fake executor's state or a rendered
 * ruleset): it runs the table's base chains in hook and priority order as the kernel would
 * (prerouting → routing → input or forward → postrouting; or output → postrouting for a
 * packet from a local process), follows every `numgen` branch so all reachable endpoints
 * are reported, and reports the filter verdict, the DNAT destinations and whether the
 * packet is masqueraded.
 *
 * @module
 */
import {
  cidrValueContains,
  formatIPValue,
  InvalidIPError,
  type IPValue,
  joinHostPort,
  parseCIDROrHostValue,
  parseIPValue,
} from '@nodeagent/core';
import type { TracePacket as BaseTracePacket, TraceResult as BaseTraceResult } from '@nodeagent/proxy-state';
import type { NftFamily } from './model.js';
import { type Primary, parseRule, type Rhs, type Stmt } from './rule-parser.js';
import { NftState, type NftTableState } from './table-state.js';

/** A packet to trace (the shared `@nodeagent/proxy-state` packet, with this tracer's defaults). */
export interface TracePacket extends BaseTracePacket {
  /** Input interface name (interface-based local-traffic detection). @default 'eth0' */
  readonly inInterface?: string;
  /** Start in the output hook (locally generated). @default true when `sourceIP` is a local address */
  readonly fromLocalProcess?: boolean;
}

/** What happens to a packet (the shared `@nodeagent/proxy-state` result). */
export type TraceResult = BaseTraceResult;

interface Pkt {
  saddr: IPValue;
  saddrText: string;
  daddr: IPValue;
  daddrText: string;
  proto: string;
  dport: number;
  mark: number;
  ctDnat: boolean;
  dnatTo: string | undefined;
  masq: boolean;
  iif: string;
}

type Out = { pkt: Pkt; kind: 'next' | 'return' | 'accept' | 'drop' | 'reject' };

const MAX_DEPTH = 64;

function clone(p: Pkt): Pkt {
  return { ...p };
}

/** Traces packets over one table. */
export class NftTracer {
  readonly #t: NftTableState;
  readonly #local: IPValue[];
  readonly #loop: ReturnType<typeof parseCIDROrHostValue>[];

  /** @param table the table; @param nodeIPs the node's addresses. */
  constructor(table: NftTableState, nodeIPs: readonly string[] = []) {
    this.#t = table;
    this.#local = nodeIPs.map((ip) => parseIPValue(ip)).filter((a): a is IPValue => a !== null);
    this.#loop = [parseCIDROrHostValue('127.0.0.0/8'), parseCIDROrHostValue('::1/128')];
  }

  #isLocal(a: IPValue): boolean {
    return (
      this.#local.some((l) => l.family === a.family && l.value === a.value) ||
      this.#loop.some((n) => n !== null && cidrValueContains(n, a))
    );
  }

  /** Traces one packet. @throws InvalidIPError (from `@nodeagent/core`) naming an unparsable address */
  trace(p: TracePacket): TraceResult {
    const saddr = parseIPValue(p.sourceIP);
    const daddr = parseIPValue(p.destIP);
    if (!saddr) throw new InvalidIPError(p.sourceIP, 'IP address', 'source');
    if (!daddr) throw new InvalidIPError(p.destIP, 'IP address', 'destination');
    const extra = (p.nodeIPs ?? []).map((ip) => parseIPValue(ip)).filter((a): a is IPValue => a !== null);
    const tracer =
      extra.length > 0
        ? new NftTracer(
            this.#t,
            [...this.#local, ...extra].map((a) => formatIPValue(a)),
          )
        : this;
    return tracer.#trace(p, saddr, daddr);
  }

  #trace(p: TracePacket, saddr: IPValue, daddr: IPValue): TraceResult {
    const start: Pkt = {
      saddr,
      saddrText: formatIPValue(saddr),
      daddr,
      daddrText: formatIPValue(daddr),
      proto: (p.protocol ?? 'TCP').toLowerCase(),
      dport: p.destPort,
      mark: 0,
      ctDnat: false,
      dnatTo: undefined,
      masq: false,
      iif: p.inInterface ?? 'eth0',
    };
    const local = p.fromLocalProcess ?? this.#isLocal(saddr);
    let live: Pkt[] = [start];
    const finals: Out[] = [];
    const runHook = (hook: string) => {
      const next: Pkt[] = [];
      for (const pkt of live) {
        for (const o of this.#hook(hook, pkt)) {
          if (o.kind === 'drop' || o.kind === 'reject') finals.push(o);
          else next.push(o.pkt);
        }
      }
      live = next;
    };
    if (local) {
      runHook('output');
    } else {
      runHook('prerouting');
      const toInput = live.filter((k) => this.#isLocal(k.daddr));
      const toForward = live.filter((k) => !this.#isLocal(k.daddr));
      live = toInput;
      runHook('input');
      const done = live;
      live = toForward;
      runHook('forward');
      for (const k of done) finals.push({ pkt: k, kind: 'accept' });
    }
    runHook('postrouting');
    for (const k of live) finals.push({ pkt: k, kind: 'accept' });

    const verdict = finals.find((f) => f.kind === 'drop' || f.kind === 'reject');
    const masquerade = finals.some((f) => f.pkt.masq);
    if (verdict) return { outcome: verdict.kind === 'drop' ? 'DROP' : 'REJECT', endpoints: [], masquerade };
    const eps = [
      ...new Set(finals.map((f) => f.pkt.dnatTo).filter((x): x is string => x !== undefined)),
    ].sort();
    return { outcome: eps.length > 0 ? 'endpoints' : 'untouched', endpoints: eps, masquerade };
  }

  #hook(hook: string, pkt: Pkt): Out[] {
    const chains = [...this.#t.chains.entries()]
      .filter(([, c]) => c.hook?.hook === hook)
      .sort(([, a], [, b]) => a.hook!.priority - b.hook!.priority);
    let live: Pkt[] = [pkt];
    const out: Out[] = [];
    for (const [name] of chains) {
      const next: Pkt[] = [];
      for (const k of live) {
        for (const o of this.#chain(name, k, 0)) {
          if (o.kind === 'drop' || o.kind === 'reject') out.push(o);
          else next.push(o.pkt);
        }
      }
      live = next;
    }
    for (const k of live) out.push({ pkt: k, kind: 'accept' });
    return out;
  }

  #chain(name: string, pkt: Pkt, depth: number): Out[] {
    const chain = this.#t.chains.get(name);
    if (!chain || depth > MAX_DEPTH) return [{ pkt, kind: 'return' }];
    let live: Pkt[] = [pkt];
    const out: Out[] = [];
    for (const rule of chain.rules) {
      const next: Pkt[] = [];
      for (const k of live) {
        for (const o of this.#rule(parseRule(rule), 0, k, depth)) {
          if (o.kind === 'next') next.push(o.pkt);
          else out.push(o);
        }
      }
      live = next;
      if (live.length === 0) break;
    }
    for (const k of live) out.push({ pkt: k, kind: 'return' });
    return out;
  }

  /** Runs statements from `i`; 'next' means "continue with the chain's next rule". */
  #rule(stmts: readonly Stmt[], i: number, pkt: Pkt, depth: number): Out[] {
    if (i >= stmts.length) return [{ pkt, kind: 'next' }];
    const s = stmts[i]!;
    const cont = (k: Pkt) => this.#rule(stmts, i + 1, k, depth);
    switch (s.t) {
      case 'noop':
        return cont(pkt);
      case 'match':
        return this.#match(s.expr, s.neg, s.rhs, pkt) ? cont(pkt) : [{ pkt, kind: 'next' }];
      case 'verdict':
        return [{ pkt, kind: s.v === 'return' ? 'return' : s.v }];
      case 'jump':
      case 'goto':
        return this.#verdict(`${s.t} ${s.chain}`, pkt, depth, cont);
      case 'vmap': {
        const keys = this.#keys(s.expr, pkt);
        const out: Out[] = [];
        for (const key of keys) {
          const v = typeof s.map === 'string' ? this.#lookup(s.map, key) : s.map.get(key);
          if (v !== undefined) out.push(...this.#verdict(v, pkt, depth, cont));
        }
        return out.length > 0 ? out : [{ pkt, kind: 'next' }];
      }
      case 'markset': {
        const k = clone(pkt);
        k.mark = (s.op === 'or' ? k.mark | s.value : k.mark ^ s.value) >>> 0;
        return cont(k);
      }
      case 'masquerade': {
        const k = clone(pkt);
        k.masq = true;
        return [{ pkt: k, kind: 'accept' }];
      }
      case 'dnat':
        return [{ pkt: this.#dnat(pkt, s.to), kind: 'accept' }];
      case 'dnatmap': {
        const out: Out[] = [];
        for (const key of this.#keys(s.expr, pkt)) {
          const v = this.#lookup(s.map, key);
          if (v === undefined) continue;
          const [ip = '', port = ''] = v.split(' . ');
          out.push({
            pkt: this.#dnat(pkt, joinHostPort(ip, port)),
            kind: 'accept',
          });
        }
        return out.length > 0 ? out : [{ pkt, kind: 'next' }];
      }
    }
  }

  #verdict(v: string, pkt: Pkt, depth: number, cont: (k: Pkt) => Out[]): Out[] {
    const [kw, target] = v.split(' ');
    if (kw === 'drop' || kw === 'accept' || kw === 'reject') return [{ pkt, kind: kw }];
    if (kw === 'return') return [{ pkt, kind: 'return' }];
    const out: Out[] = [];
    for (const o of this.#chain(target!, pkt, depth + 1)) {
      if (o.kind !== 'return') out.push(o);
      else if (kw === 'jump') out.push(...cont(o.pkt));
      else out.push({ pkt: o.pkt, kind: 'return' });
    }
    return out;
  }

  #dnat(pkt: Pkt, to: string): Pkt {
    const cut = to.lastIndexOf(':');
    let ip = to.slice(0, cut);
    if (ip.startsWith('[')) ip = ip.slice(1, -1);
    const a = parseIPValue(ip);
    const k = clone(pkt);
    if (a) {
      k.daddr = a;
      k.daddrText = formatIPValue(a);
    }
    k.dport = Number(to.slice(cut + 1));
    k.ctDnat = true;
    k.dnatTo = a ? joinHostPort(k.daddrText, k.dport) : to;
    return k;
  }

  /** The values of a primary (several for numgen). */
  #values(p: Primary, pkt: Pkt): string[] {
    switch (p.t) {
      case 'addr':
        return [p.dir === 'saddr' ? pkt.saddrText : pkt.daddrText];
      case 'l4proto':
        return [pkt.proto];
      case 'dport':
        return p.proto !== undefined && p.proto !== pkt.proto ? [] : [String(pkt.dport)];
      case 'numgen':
        return Array.from({ length: p.mod }, (_, i) => String(i));
      case 'mark':
        return [String(p.mask === undefined ? pkt.mark : pkt.mark & p.mask)];
      case 'iifname':
        return [pkt.iif];
      case 'fib':
        return [this.#isLocal(p.dir === 'saddr' ? pkt.saddr : pkt.daddr) ? 'local' : 'unicast'];
      case 'ctstate':
        return ['new'];
      case 'ctstatus':
        return pkt.ctDnat ? ['dnat'] : [''];
    }
  }

  #keys(expr: readonly Primary[], pkt: Pkt): string[] {
    let keys = [''];
    expr.forEach((p, i) => {
      const vs = this.#values(p, pkt);
      keys = keys.flatMap((k) => vs.map((v) => (i === 0 ? v : `${k} . ${v}`)));
    });
    return keys;
  }

  #lookup(set: string, key: string): string | undefined {
    const s = this.#t.sets.get(set);
    if (!s) return undefined;
    const e = s.elements.get(key);
    if (e) return e.value ?? '';
    if (s.flags?.includes('interval')) {
      const parts = key.split(' . ');
      for (const [k, el] of s.elements) {
        const ks = k.split(' . ');
        if (ks.length === parts.length && ks.every((c, i) => valueMatches(c, parts[i]!)))
          return el.value ?? '';
      }
    }
    return undefined;
  }

  #match(expr: readonly Primary[], neg: boolean, rhs: Rhs, pkt: Pkt): boolean {
    const keys = this.#keys(expr, pkt);
    let hit: boolean;
    if (rhs.t === 'set') hit = keys.some((k) => this.#lookup(rhs.name, k) !== undefined);
    else if (rhs.t === 'anon') hit = keys.some((k) => rhs.vs.some((v) => valueMatches(v, k)));
    else hit = keys.some((k) => valueMatches(rhs.v, k));
    if (keys.length === 0) return false;
    return neg ? !hit : hit;
  }
}

/** Whether a written value (IP, CIDR, number, name, `prefix*` wildcard) matches a packet value. */
function valueMatches(written: string, actual: string): boolean {
  if (written === actual) return true;
  if (written.endsWith('*')) return actual.startsWith(written.slice(0, -1));
  if (written.includes('/')) {
    const n = parseCIDROrHostValue(written);
    const a = parseIPValue(actual);
    return n !== null && a !== null && cidrValueContains(n, a);
  }
  if (/^0x[0-9a-f]+$/i.test(written) || /^[0-9]+$/.test(written)) return Number(written) === Number(actual);
  const w = parseIPValue(written);
  const a = parseIPValue(actual);
  return w !== null && a !== null && w.family === a.family && w.value === a.value;
}

/** Builds the table state a transaction text produces on an empty kernel. */
export function tableFromText(text: string, family: NftFamily = 'ip', table = 'kube-proxy'): NftTableState {
  const s = new NftState();
  s.apply(text);
  const t = s.table(family, table);
  if (!t) throw new TypeError(`the text does not create table ${family} ${table}`);
  return t;
}

/** Traces `packet` through `table` (state or transaction text). */
export function tracePacket(
  table: NftTableState | string,
  packet: TracePacket,
  family?: NftFamily,
): TraceResult {
  const t =
    typeof table === 'string'
      ? tableFromText(table, family ?? (packet.destIP.includes(':') ? 'ip6' : 'ip'))
      : table;
  return new NftTracer(t).trace(packet);
}

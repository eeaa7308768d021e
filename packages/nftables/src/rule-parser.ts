/**
 * Parses the rule texts this package (and kube-proxy) writes into statements the tracer
 * evaluates: matches over concatenated expressions, set/map/vmap lookups, jumps, verdicts,
 * mark and NAT statements.
 *
 * @module
 */

/** A primary expression in a match or key. */
export type Primary =
  | { readonly t: 'addr'; readonly dir: 'saddr' | 'daddr' }
  | { readonly t: 'l4proto' }
  | { readonly t: 'dport'; readonly proto?: string }
  | { readonly t: 'numgen'; readonly mod: number }
  | { readonly t: 'mark'; readonly mask?: number }
  | { readonly t: 'iifname' }
  | { readonly t: 'fib'; readonly dir: 'saddr' | 'daddr' }
  | { readonly t: 'ctstate' }
  | { readonly t: 'ctstatus' };

/** The right-hand side of a match. */
export type Rhs =
  | { readonly t: 'value'; readonly v: string }
  | { readonly t: 'anon'; readonly vs: readonly string[] }
  | { readonly t: 'set'; readonly name: string };

/** One statement of a rule. */
export type Stmt =
  | { readonly t: 'match'; readonly expr: readonly Primary[]; readonly neg: boolean; readonly rhs: Rhs }
  | {
      readonly t: 'vmap';
      readonly expr: readonly Primary[];
      readonly map: string | ReadonlyMap<string, string>;
    }
  | { readonly t: 'verdict'; readonly v: 'accept' | 'drop' | 'reject' | 'return' }
  | { readonly t: 'jump' | 'goto'; readonly chain: string }
  | { readonly t: 'markset'; readonly op: 'or' | 'xor'; readonly value: number }
  | { readonly t: 'masquerade' }
  | { readonly t: 'dnat'; readonly to: string }
  | { readonly t: 'dnatmap'; readonly expr: readonly Primary[]; readonly map: string }
  | { readonly t: 'noop' };

/** A rule the parser does not understand. */
export class RuleParseError extends Error {
  override readonly name = 'RuleParseError';
}

/** Splits a rule into tokens: quoted strings kept whole, `{ } , :` separate. */
export function tokenize(rule: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < rule.length) {
    const ch = rule[i]!;
    if (ch === ' ') {
      i++;
      continue;
    }
    if (ch === '"') {
      const end = rule.indexOf('"', i + 1);
      out.push(rule.slice(i, end < 0 ? rule.length : end + 1));
      i = end < 0 ? rule.length : end + 1;
      continue;
    }
    if (ch === '{' || ch === '}' || ch === ',') {
      out.push(ch);
      i++;
      continue;
    }
    let j = i;
    while (j < rule.length && !' {},"'.includes(rule[j]!)) j++;
    out.push(rule.slice(i, j));
    i = j;
  }
  return out;
}

const cache = new Map<string, Stmt[]>();

/** Parses (and memoises) a rule. @throws RuleParseError */
export function parseRule(rule: string): Stmt[] {
  let hit = cache.get(rule);
  if (!hit) {
    hit = new Parser(tokenize(rule), rule).rule();
    if (cache.size > 100_000) cache.clear();
    cache.set(rule, hit);
  }
  return hit;
}

class Parser {
  #i = 0;
  constructor(
    readonly toks: string[],
    readonly text: string,
  ) {}

  peek(o = 0): string | undefined {
    return this.toks[this.#i + o];
  }
  next(): string {
    const t = this.toks[this.#i++];
    if (t === undefined) throw new RuleParseError(`unexpected end of rule: ${this.text}`);
    return t;
  }
  expect(t: string): void {
    const got = this.next();
    if (got !== t) throw new RuleParseError(`expected ${t}, got ${got} in: ${this.text}`);
  }

  rule(): Stmt[] {
    const out: Stmt[] = [];
    while (this.peek() !== undefined) out.push(this.stmt());
    return out;
  }

  primaryStart(): boolean {
    const t = this.peek();
    if (t === 'mark') return this.peek(1) !== 'set';
    return ['ip', 'ip6', 'meta', 'th', 'tcp', 'udp', 'sctp', 'numgen', 'iifname', 'fib', 'ct'].includes(
      t ?? '',
    );
  }

  primary(): Primary {
    const t = this.next();
    switch (t) {
      case 'ip':
      case 'ip6': {
        const d = this.next();
        if (d !== 'saddr' && d !== 'daddr') throw new RuleParseError(`unsupported ${t} ${d}`);
        return { t: 'addr', dir: d };
      }
      case 'meta':
        this.expect('l4proto');
        return { t: 'l4proto' };
      case 'th':
        this.expect('dport');
        return { t: 'dport' };
      case 'tcp':
      case 'udp':
      case 'sctp':
        this.expect('dport');
        return { t: 'dport', proto: t };
      case 'numgen':
        this.expect('random');
        this.expect('mod');
        return { t: 'numgen', mod: Number(this.next()) };
      case 'mark': {
        if (this.peek() === 'and') {
          this.next();
          return { t: 'mark', mask: Number(this.next()) };
        }
        return { t: 'mark' };
      }
      case 'iifname':
        return { t: 'iifname' };
      case 'fib': {
        const d = this.next();
        this.expect('type');
        if (d !== 'saddr' && d !== 'daddr') throw new RuleParseError(`unsupported fib ${d}`);
        return { t: 'fib', dir: d };
      }
      case 'ct': {
        const k = this.next();
        if (k === 'state') return { t: 'ctstate' };
        if (k === 'status') return { t: 'ctstatus' };
        throw new RuleParseError(`unsupported ct ${k}`);
      }
      default:
        throw new RuleParseError(`unsupported expression ${t} in: ${this.text}`);
    }
  }

  expr(): Primary[] {
    const out = [this.primary()];
    while (this.peek() === '.') {
      this.next();
      out.push(this.primary());
    }
    return out;
  }

  braceList(): string[] {
    this.expect('{');
    const items: string[] = [];
    let cur: string[] = [];
    for (;;) {
      const t = this.next();
      if (t === '}') break;
      if (t === ',') {
        items.push(cur.join(' '));
        cur = [];
      } else cur.push(t);
    }
    if (cur.length) items.push(cur.join(' '));
    return items;
  }

  stmt(): Stmt {
    if (this.primaryStart()) {
      const expr = this.expr();
      const t = this.peek();
      if (t === 'vmap') {
        this.next();
        if (this.peek() === '{') {
          const m = new Map<string, string>();
          for (const item of this.braceList()) {
            const cut = item.indexOf(' : ');
            m.set(item.slice(0, cut).trim(), item.slice(cut + 3).trim());
          }
          return { t: 'vmap', expr, map: m };
        }
        return { t: 'vmap', expr, map: this.setName() };
      }
      let neg = false;
      if (t === '!=' || t === '==') {
        this.next();
        neg = t === '!=';
      }
      const r = this.peek();
      if (r === '{') return { t: 'match', expr, neg, rhs: { t: 'anon', vs: this.braceList() } };
      if (r?.startsWith('@')) return { t: 'match', expr, neg, rhs: { t: 'set', name: this.setName() } };
      return { t: 'match', expr, neg, rhs: { t: 'value', v: this.next() } };
    }
    const t = this.next();
    switch (t) {
      case 'accept':
      case 'drop':
      case 'reject':
      case 'return':
        return { t: 'verdict', v: t };
      case 'jump':
      case 'goto':
        return { t, chain: this.next() };
      case 'mark': {
        this.expect('set');
        this.expect('mark');
        const op = this.next();
        if (op !== 'or' && op !== 'xor') throw new RuleParseError(`unsupported mark op ${op}`);
        return { t: 'markset', op, value: Number(this.next()) };
      }
      case 'masquerade':
        if (this.peek() === 'fully-random' || this.peek() === 'random') this.next();
        return { t: 'masquerade' };
      case 'dnat': {
        if (this.peek() === 'ip' || this.peek() === 'ip6') this.next();
        this.expect('to');
        if (this.primaryStart()) {
          const expr = this.expr();
          this.expect('map');
          return { t: 'dnatmap', expr, map: this.setName() };
        }
        return { t: 'dnat', to: this.next() };
      }
      case 'update':
        this.setName();
        this.braceList();
        return { t: 'noop' };
      case 'comment':
        this.next();
        return { t: 'noop' };
      case 'counter':
        return { t: 'noop' };
      default:
        throw new RuleParseError(`unsupported statement ${t} in: ${this.text}`);
    }
  }

  setName(): string {
    const t = this.next();
    if (!t.startsWith('@')) throw new RuleParseError(`expected @set, got ${t}`);
    return t.slice(1);
  }
}

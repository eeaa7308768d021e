/**
 * An in-memory iptables with iptables-restore semantics, for tests of anything that drives
 * an {@link IptablesExecutor}.
 *
 * @module
 */

import type { IPFamilyName } from '@nodeagent/proxy-state';
import {
  IptablesCommandError,
  type IptablesExecutor,
  type JumpRule,
  jumpRuleArgs,
  type RestoreFlags,
} from './executor.js';
import { type ParsedRule, parseRestoreText, parseRule, RestoreParseError } from './restore-parser.js';
import type { IptablesTables } from './tracer.js';

/** Two rules are the same when their parsed words are (quoting may differ). */
function sameRule(a: string, b: string): boolean {
  if (a === b) return true;
  const pa = parseRule(a);
  const pb = parseRule(b);
  return (
    pa.chain === pb.chain &&
    JSON.stringify([...pa.params]) === JSON.stringify([...pb.params]) &&
    JSON.stringify(pa.modules) === JSON.stringify(pb.modules)
  );
}

const BUILTIN_CHAINS: Readonly<Record<string, readonly string[]>> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
};

const TARGETS = new Set([
  'ACCEPT',
  'DROP',
  'REJECT',
  'RETURN',
  'DNAT',
  'SNAT',
  'MASQUERADE',
  'MARK',
  'CONNMARK',
  'LOG',
  'NOTRACK',
  'CT',
]);

type TableState = Map<string, string[]>;

function quoteArg(a: string): string {
  return /^[A-Za-z0-9_./:,!+=@%-]+$/.test(a) ? a : `"${a.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** Options of {@link FakeIptablesExecutor}. */
export interface FakeIptablesExecutorOptions {
  /** @default 'IPv4' */
  readonly family?: IPFamilyName;
}

/**
 * In-memory iptables: `restore` parses the payload and applies it per table atomically at
 * `COMMIT` — with `noflush` a `:CHAIN` line creates or flushes that (user-defined) chain, `-D`
 * deletes a rule, chains not
 * mentioned are kept, `-X` deletes (the chain must be empty); without `noflush` the table is
 * emptied first. A commit fails, leaving the table as it was, when a rule is appended to a
 * missing chain or jumps to a chain that does not exist, like the real tool.
 */
export class FakeIptablesExecutor implements IptablesExecutor {
  /** @inheritdoc */
  readonly family: IPFamilyName;
  readonly #tables = new Map<string, TableState>();
  /** Every restore call, in order (payload and flags). */
  readonly restores: { readonly text: string; readonly flags: RestoreFlags }[] = [];
  /** Number of ensureJumps calls. */
  ensureJumpsCalls = 0;
  #failNext: Error | undefined;

  /** @param options family. */
  constructor(options: FakeIptablesExecutorOptions = {}) {
    this.family = options.family ?? 'IPv4';
  }

  #table(name: string): TableState {
    let t = this.#tables.get(name);
    if (!t) {
      t = new Map((BUILTIN_CHAINS[name] ?? []).map((c) => [c, []]));
      this.#tables.set(name, t);
    }
    return t;
  }

  /** Makes the next `restore` call fail with `err` (simulating a kernel/tool failure). */
  failNextRestore(err: Error = new IptablesCommandError(['iptables-restore'], 1, 'injected failure')): void {
    this.#failNext = err;
  }

  /** Deletes every user chain and rule of `table` (someone else flushing iptables). */
  flushTable(table: string): void {
    this.#tables.delete(table);
  }

  /** @inheritdoc */
  async restore(text: string, flags: RestoreFlags = {}): Promise<void> {
    this.restores.push({ text, flags });
    if (this.#failNext) {
      const err = this.#failNext;
      this.#failNext = undefined;
      throw err;
    }
    const argv = ['iptables-restore', ...(flags.noflush === false ? [] : ['--noflush'])];
    let parsed: ReturnType<typeof parseRestoreText>;
    try {
      parsed = parseRestoreText(text);
    } catch (err) {
      if (err instanceof RestoreParseError) throw new IptablesCommandError(argv, 2, err.message);
      throw err;
    }
    for (const t of parsed) {
      const work: TableState = new Map();
      const builtins = BUILTIN_CHAINS[t.name] ?? [];
      if (flags.noflush === false) {
        for (const b of builtins) work.set(b, []);
      } else {
        for (const [c, rules] of this.#table(t.name)) work.set(c, [...rules]);
      }
      const fail = (msg: string): never => {
        throw new IptablesCommandError(argv, 1, `table ${t.name}: ${msg}`);
      };
      // Under --noflush a declaration flushes a user-defined chain but not a built-in one
      // (iptables-restore only sets the built-in chain's policy).
      for (const name of t.chains.keys()) {
        if (flags.noflush === false || !builtins.includes(name)) work.set(name, []);
      }
      // `-D` deletes the first identical rule (applied before this payload's appends).
      for (const del of t.ruleDeletions) {
        const chain = work.get(del.chain) ?? fail(`-D ${del.chain}: no such chain`);
        const i = chain.findIndex((r) => sameRule(r, del.raw));
        if (i < 0) fail(`-D ${del.chain}: Bad rule (does a matching rule exist in that chain?)`);
        chain.splice(i, 1);
      }
      // The parser rejects rules after a chain's -X, so rules-then-deletions is payload order.
      for (const rule of t.rules) {
        const chain = work.get(rule.chain) ?? fail(`rule appended to missing chain ${rule.chain}`);
        chain.push(rule.raw);
      }
      for (const name of t.deletions) {
        if (builtins.includes(name)) fail(`cannot delete built-in chain ${name}`);
        const chain = work.get(name) ?? fail(`-X ${name}: no such chain`);
        if (chain.length > 0) fail(`-X ${name}: chain is not empty`);
        work.delete(name);
      }
      for (const [name, rules] of work) {
        for (const raw of rules) {
          const target = parseRule(raw).params.get('-j')?.value;
          if (target !== undefined && !TARGETS.has(target) && !work.has(target)) {
            fail(`rule in ${name} jumps to missing chain ${target}: ${raw}`);
          }
        }
      }
      this.#tables.set(t.name, work);
    }
  }

  /** @inheritdoc */
  async save(table?: string): Promise<string> {
    const names = table === undefined ? [...this.#tables.keys()].sort() : [table];
    const out: string[] = [];
    for (const name of names) {
      const t = this.#table(name);
      const builtins = BUILTIN_CHAINS[name] ?? [];
      out.push(`*${name}`);
      for (const c of t.keys()) out.push(builtins.includes(c) ? `:${c} ACCEPT [0:0]` : `:${c} - [0:0]`);
      for (const rules of t.values()) out.push(...rules);
      out.push('COMMIT');
    }
    return out.join('\n') + '\n';
  }

  /** @inheritdoc */
  async ensureChain(table: string, chain: string): Promise<boolean> {
    const t = this.#table(table);
    if (t.has(chain)) return true;
    t.set(chain, []);
    return false;
  }

  /** @inheritdoc */
  async chainExists(table: string, chain: string): Promise<boolean> {
    return this.#tables.get(table)?.has(chain) ?? false;
  }

  /** @inheritdoc */
  async ensureJumps(jumps: readonly JumpRule[]): Promise<void> {
    this.ensureJumpsCalls++;
    for (const j of jumps) {
      await this.ensureChain(j.table, j.targetChain);
      const t = this.#table(j.table);
      const rule = `-A ${j.sourceChain} ${jumpRuleArgs(j).map(quoteArg).join(' ')}`;
      const chain = t.get(j.sourceChain);
      if (!chain)
        throw new IptablesCommandError(['iptables', '-t', j.table, '-C', j.sourceChain], 1, 'no such chain');
      if (!chain.includes(rule)) chain.unshift(rule);
    }
  }

  /** The current rules, parsed, for `tracePacket`. */
  tables(): IptablesTables {
    const out = new Map<string, Map<string, ParsedRule[]>>();
    for (const [name, t] of this.#tables) {
      out.set(name, new Map([...t].map(([c, rules]) => [c, rules.map(parseRule)])));
    }
    return out;
  }

  /** Chain names of `table` (built-ins included). */
  chains(table: string): string[] {
    return [...(this.#tables.get(table)?.keys() ?? [])];
  }

  /** A comparable snapshot: per table, chain → rule lines, chains sorted. */
  snapshot(): Record<string, Record<string, readonly string[]>> {
    const out: Record<string, Record<string, readonly string[]>> = {};
    for (const name of [...this.#tables.keys()].sort()) {
      const t = this.#tables.get(name)!;
      const chains: Record<string, readonly string[]> = {};
      for (const c of [...t.keys()].sort()) chains[c] = [...t.get(c)!];
      out[name] = chains;
    }
    return out;
  }
}

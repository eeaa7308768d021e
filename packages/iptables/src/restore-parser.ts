/**
 * Parsing iptables-restore text (as this renderer and kube-proxy write it) into tables,
 * chains and rules, with the rule matches the renderer emits decoded.
 *
 * @module
 */

/** A rule argument, possibly negated with `!`. */
export interface RuleValue {
  /** The value. */
  readonly value: string;
  /** True if preceded by `!`. */
  readonly negated: boolean;
}

/** One `-m set [!] --match-set NAME FLAGS` match (kube-proxy's IPVS residual rules use them). */
export interface SetMatch {
  /** The ipset's name. */
  readonly set: string;
  /** Direction flags as written, e.g. `dst`, `dst,dst` or `dst,dst,src`. */
  readonly flags: string;
  /** True if negated (`! --match-set`). */
  readonly negated: boolean;
}

/** A parsed `-A CHAIN ...` rule. */
export interface ParsedRule {
  /** The line as written. */
  readonly raw: string;
  /** The chain it is appended to. */
  readonly chain: string;
  /** Parameters by name (`-s`, `--dport`, `-j`, `--comment`, ...), last occurrence wins. */
  readonly params: ReadonlyMap<string, RuleValue>;
  /** Match modules in order (`-m comment`, `-m tcp`, ...). */
  readonly modules: readonly string[];
  /**
   * Every `--match-set NAME FLAGS` in order (a rule may hold several). `params` also carries
   * the last one under `--match-set`, with the set's name as its value.
   */
  readonly setMatches: readonly SetMatch[];
}

/** A chain as declared and filled by a restore payload. */
export interface ParsedChain {
  /** Chain name. */
  readonly name: string;
  /** Rules appended in this payload. */
  readonly rules: ParsedRule[];
  /** True if the payload deletes it with `-X`. */
  deleted: boolean;
}

/** One `*table ... COMMIT` section. */
export interface ParsedTable {
  /** Table name (`filter`, `nat`, ...). */
  readonly name: string;
  /** Chains declared with `:CHAIN` lines, in order. */
  readonly chains: Map<string, ParsedChain>;
  /** `-X` deletions in order. */
  readonly deletions: string[];
  /** Rules in the order they appear. */
  readonly rules: ParsedRule[];
  /** `-D CHAIN ...` rule deletions in order, each as the `-A` rule it deletes. */
  readonly ruleDeletions: ParsedRule[];
}

/** Restore text that cannot be parsed. */
export class RestoreParseError extends Error {
  override readonly name = 'RestoreParseError';
  /** 1-based line number. */
  readonly line: number;
  /** @param line 1-based line number; @param message what is wrong. */
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.line = line;
  }
}

/**
 * Splits a restore line into words the way iptables-restore does: whitespace separates,
 * double quotes group, and inside quotes a backslash escapes the next character.
 */
export function tokenizeRule(line: string): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '\\' && i + 1 < line.length) {
        cur += line[++i];
      } else if (ch === '"') {
        quoted = false;
      } else {
        cur += ch;
      }
      continue;
    }
    if (ch === '"') {
      quoted = true;
      inWord = true;
    } else if (ch === ' ' || ch === '\t') {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (quoted) throw new Error(`unterminated quote in ${JSON.stringify(line)}`);
  if (inWord) words.push(cur);
  return words;
}

// Parameters that take no value.
const FLAGS = new Set([
  '--rcheck',
  '--set',
  '--reap',
  '--random-fully',
  '--rsource',
  '--rdest',
  '--physdev-is-in',
  '--physdev-is-out',
  '--physdev-is-bridged',
]);
// Direction flags of `--match-set`: one to three of src/dst, comma-separated.
const SET_FLAGS_RE = /^(?:src|dst)(?:,(?:src|dst)){0,2}$/;

/** Parses one `-A CHAIN ...` line. @throws Error for anything else. */
export function parseRule(raw: string): ParsedRule {
  const words = tokenizeRule(raw);
  if (words[0] !== '-A' || words.length < 2) throw new Error(`not an append rule: ${JSON.stringify(raw)}`);
  const params = new Map<string, RuleValue>();
  const modules: string[] = [];
  const setMatches: SetMatch[] = [];
  let negate = false;
  for (let i = 2; i < words.length; i++) {
    const w = words[i]!;
    if (w === '!') {
      negate = true;
      continue;
    }
    if (w === '-m') {
      const mod = words[++i];
      if (mod === undefined) throw new Error(`-m without a module in ${JSON.stringify(raw)}`);
      modules.push(mod);
      continue;
    }
    if (!w.startsWith('-')) throw new Error(`unexpected word ${JSON.stringify(w)} in ${JSON.stringify(raw)}`);
    if (w === '--match-set') {
      // The only option here with two values: the set name and its direction flags.
      const name = words[i + 1];
      const flags = words[i + 2];
      if (name === undefined || flags === undefined || !SET_FLAGS_RE.test(flags)) {
        throw new Error(`--match-set needs a set name and src/dst flags in ${JSON.stringify(raw)}`);
      }
      i += 2;
      setMatches.push({ set: name, flags, negated: negate });
      params.set(w, { value: name, negated: negate });
    } else if (FLAGS.has(w)) {
      params.set(w, { value: '', negated: negate });
    } else {
      const v = words[++i];
      if (v === undefined) throw new Error(`${w} without a value in ${JSON.stringify(raw)}`);
      params.set(w, { value: v, negated: negate });
    }
    negate = false;
  }
  return { raw, chain: words[1]!, params, modules, setMatches };
}

/**
 * Parses a whole restore payload: `*table`, `:CHAIN - [p:b]`, `-A`, `-D`, `-X`, `COMMIT`,
 * comments and blank lines. Enforces what iptables-restore enforces: rules only inside a
 * table, every table committed, no rules added to a chain deleted in the same payload.
 * @throws RestoreParseError
 */
export function parseRestoreText(text: string): ParsedTable[] {
  const tables: ParsedTable[] = [];
  let table: ParsedTable | undefined;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    const lineNo = n + 1;
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('*')) {
      if (table) throw new RestoreParseError(lineNo, `table ${line} started before COMMIT of ${table.name}`);
      table = { name: line.slice(1), chains: new Map(), deletions: [], rules: [], ruleDeletions: [] };
      continue;
    }
    if (!table) throw new RestoreParseError(lineNo, `${JSON.stringify(line)} outside a table`);
    if (line === 'COMMIT') {
      tables.push(table);
      table = undefined;
      continue;
    }
    if (line.startsWith(':')) {
      const name = line.slice(1).split(' ')[0]!;
      if (!name) throw new RestoreParseError(lineNo, 'empty chain name');
      table.chains.set(name, { name, rules: [], deleted: false });
      continue;
    }
    if (line.startsWith('-X ')) {
      const name = line.slice(3).trim();
      const chain = table.chains.get(name);
      if (chain && chain.rules.length > 0)
        throw new RestoreParseError(lineNo, `-X ${name} after rules were added to it`);
      if (chain) chain.deleted = true;
      table.deletions.push(name);
      continue;
    }
    if (line.startsWith('-A ')) {
      let rule: ParsedRule;
      try {
        rule = parseRule(line);
      } catch (err) {
        throw new RestoreParseError(lineNo, (err as Error).message);
      }
      const chain = table.chains.get(rule.chain);
      if (chain?.deleted) throw new RestoreParseError(lineNo, `rule added to deleted chain ${rule.chain}`);
      chain?.rules.push(rule);
      table.rules.push(rule);
      continue;
    }
    if (line.startsWith('-D ')) {
      try {
        table.ruleDeletions.push(parseRule(`-A ${line.slice(3)}`));
      } catch (err) {
        throw new RestoreParseError(lineNo, (err as Error).message);
      }
      continue;
    }
    throw new RestoreParseError(lineNo, `unsupported line ${JSON.stringify(line)}`);
  }
  if (table) throw new RestoreParseError(lines.length, `table ${table.name} has no COMMIT`);
  return tables;
}

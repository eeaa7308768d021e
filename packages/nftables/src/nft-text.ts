/**
 * Writing nft commands: the `add`/`flush`/`delete` command lines of `nft -f` transactions
 * (comments quoted by `@nodeagent/proxy-state`'s `quoteNftComment`).
 *
 * @module
 */
import { quoteNftComment as quoteComment } from '@nodeagent/proxy-state';
import type { ChainSpec, ElementSpec, NftFamily, SetSpec } from './model.js';

/** `<family> <table>` prefix helper. */
export interface TableRef {
  /** Family. */
  readonly family: NftFamily;
  /** Table name. */
  readonly table: string;
}

/** `add table ip kube-proxy { comment "..." ; }`. */
export function addTable(t: TableRef, comment?: string): string {
  return `add table ${t.family} ${t.table}${comment ? ` { comment ${quoteComment(comment)} ; }` : ''}`;
}

/** `add chain ...` with the hook and comment declaration when present. */
export function addChain(t: TableRef, c: Pick<ChainSpec, 'name' | 'hook' | 'comment'>): string {
  const parts: string[] = [];
  if (c.hook) parts.push(`type ${c.hook.type} hook ${c.hook.hook} priority ${c.hook.priority} ;`);
  if (c.comment) parts.push(`comment ${quoteComment(c.comment)} ;`);
  return `add chain ${t.family} ${t.table} ${c.name}${parts.length ? ` { ${parts.join(' ')} }` : ''}`;
}

/** `flush chain ...`. */
export function flushChain(t: TableRef, name: string): string {
  return `flush chain ${t.family} ${t.table} ${name}`;
}

/** `delete chain ...`. */
export function deleteChain(t: TableRef, name: string): string {
  return `delete chain ${t.family} ${t.table} ${name}`;
}

/** `add rule ...`. */
export function addRule(t: TableRef, chain: string, rule: string): string {
  return `add rule ${t.family} ${t.table} ${chain} ${rule}`;
}

/** `add set|map ... { type ... ; flags ... ; timeout Ns ; comment "..." ; }`. */
export function addSet(t: TableRef, s: SetSpec): string {
  const parts = [`${s.type} ;`];
  if (s.flags) parts.push(`flags ${s.flags} ;`);
  if (s.timeoutSeconds !== undefined) parts.push(`timeout ${s.timeoutSeconds}s ;`);
  if (s.comment) parts.push(`comment ${quoteComment(s.comment)} ;`);
  return `add ${s.kind} ${t.family} ${t.table} ${s.name} { ${parts.join(' ')} }`;
}

/** `flush set|map ...`. */
export function flushSet(t: TableRef, s: Pick<SetSpec, 'kind' | 'name'>): string {
  return `flush ${s.kind} ${t.family} ${t.table} ${s.name}`;
}

/** `delete set|map ...`. */
export function deleteSet(t: TableRef, s: Pick<SetSpec, 'kind' | 'name'>): string {
  return `delete ${s.kind} ${t.family} ${t.table} ${s.name}`;
}

/** The element body as written inside `{ }`: `key [comment "c"] [: value]`. */
export function elementBody(e: Pick<ElementSpec, 'key' | 'value' | 'comment'>): string {
  let s = e.key;
  if (e.comment) s += ` comment ${quoteComment(e.comment)}`;
  if (e.value !== undefined) s += ` : ${e.value}`;
  return s;
}

/** `add element ... { body }`. */
export function addElement(t: TableRef, e: ElementSpec): string {
  return `add element ${t.family} ${t.table} ${e.set} { ${elementBody(e)} }`;
}

/** `delete element ... { key }`. */
export function deleteElement(t: TableRef, set: string, key: string): string {
  return `delete element ${t.family} ${t.table} ${set} { ${key} }`;
}

/** Elements per `add element` command when batching (nft parses one big command much faster than many small ones). */
export const ELEMENTS_PER_COMMAND = 1000;

/** `add element` commands for `els`, grouped by set, at most {@link ELEMENTS_PER_COMMAND} per command. */
export function addElementsBatched(t: TableRef, els: Iterable<ElementSpec>): string[] {
  // One growing command string per set (no per-set body arrays, slices and joins): a full
  // sync of the optimized layout writes ~200,000 elements at 10,000 services.
  const open = new Map<string, { text: string; n: number }>();
  const out: string[] = [];
  const order: string[] = [];
  const done = new Map<string, string[]>();
  for (const e of els) {
    let cur = open.get(e.set);
    if (!cur) {
      cur = { text: `add element ${t.family} ${t.table} ${e.set} { `, n: 0 };
      open.set(e.set, cur);
      order.push(e.set);
    } else if (cur.n === ELEMENTS_PER_COMMAND) {
      let list = done.get(e.set);
      if (!list) {
        list = [];
        done.set(e.set, list);
      }
      list.push(`${cur.text} }`);
      cur.text = `add element ${t.family} ${t.table} ${e.set} { `;
      cur.n = 0;
    }
    if (cur.n > 0) cur.text += ', ';
    cur.text += e.comment || e.value !== undefined ? elementBody(e) : e.key;
    cur.n++;
  }
  for (const set of order) {
    for (const cmd of done.get(set) ?? []) out.push(cmd);
    out.push(`${open.get(set)!.text} }`);
  }
  return out;
}

/** `delete element` commands grouped by set. */
export function deleteElementsBatched(t: TableRef, keys: Iterable<{ set: string; key: string }>): string[] {
  const bySet = new Map<string, string[]>();
  for (const k of keys) {
    let l = bySet.get(k.set);
    if (!l) {
      l = [];
      bySet.set(k.set, l);
    }
    l.push(k.key);
  }
  const out: string[] = [];
  for (const [set, ks] of bySet) {
    for (let i = 0; i < ks.length; i += ELEMENTS_PER_COMMAND) {
      out.push(
        `delete element ${t.family} ${t.table} ${set} { ${ks.slice(i, i + ELEMENTS_PER_COMMAND).join(', ')} }`,
      );
    }
  }
  return out;
}

/**
 * `add chain ... { rule ; rule ; }`: appends `rules` to the chain (creating it if needed) as
 * ONE command. nft 1.0.6 plans its cache per command kind: `add rule` makes it dump every
 * chain of the ruleset first (seconds with 110,000 chains), `add chain` only the tables. The
 * rules are the same statements as in `add rule` lines.
 */
export function addChainRules(t: TableRef, name: string, rules: readonly string[]): string {
  return `add chain ${t.family} ${t.table} ${name} { ${rules.join(' ; ')} ; }`;
}

/** Names of the sets and maps a rule refers to (`@name`). */
export function referencedSets(rule: string): string[] {
  const out: string[] = [];
  const re = /@([A-Za-z_.][A-Za-z0-9_./-]*)/g;
  for (let m = re.exec(rule); m; m = re.exec(rule)) out.push(m[1]!);
  return out;
}

/**
 * `add set|map ... { <declaration> elements = { ... } ; }` commands for `els` of one set, at
 * most {@link ELEMENTS_PER_COMMAND} per command: the same elements as `add element`, but
 * nft 1.0.6 plans only a table lookup for it instead of dumping every chain and set. The
 * declaration must equal the existing set's (the kernel refuses a different one).
 */
export function addSetElementsBatched(t: TableRef, s: SetSpec, els: readonly ElementSpec[]): string[] {
  const decl = addSet(t, s).slice(0, -1); // without the closing brace
  const out: string[] = [];
  for (let i = 0; i < els.length; i += ELEMENTS_PER_COMMAND) {
    const body = els
      .slice(i, i + ELEMENTS_PER_COMMAND)
      .map((e) => (e.comment || e.value !== undefined ? elementBody(e) : e.key))
      .join(', ');
    out.push(`${decl}elements = { ${body} } ; }`);
  }
  return out;
}

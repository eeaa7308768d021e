/**
 * `nft list table` output (the kernel's own listing) turned back into the `nft -f` commands
 * that would recreate it, so that the nftables library's table state, tracer and element
 * index can read the LIVE rules exactly as they read a rendered ruleset.
 *
 * @module
 */
import { type NftFamily, type NftTableState, tableFromText } from '@nodeagent/nftables';

/** The kernel listing cannot be read as a table. */
export class NftListingError extends Error {
  override readonly name = 'NftListingError';
}

/** Index of the `}` closing the `{` at `open`. */
function closing(text: string, open: number): number {
  let depth = 0;
  let quoted = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' && text[i - 1] !== '\\') quoted = !quoted;
    else if (!quoted && c === '{') depth++;
    else if (!quoted && c === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  throw new NftListingError('unbalanced braces in the nft listing');
}

/** Lines of a block body, joining continuation lines of a `{ ... }` that spans lines. */
function logicalLines(body: string): string[] {
  const out: string[] = [];
  let cur = '';
  let depth = 0;
  for (const raw of body.split('\n')) {
    const line = raw.trim();
    if (line === '' && depth === 0) continue;
    cur = cur === '' ? line : `${cur} ${line}`;
    for (const c of line) depth += c === '{' ? 1 : c === '}' ? -1 : 0;
    if (depth <= 0) {
      out.push(cur);
      cur = '';
      depth = 0;
    }
  }
  if (cur !== '') out.push(cur);
  return out;
}

/**
 * A rule as the kernel lists it, rewritten in the spelling the nftables renderer (and so its
 * rule parser) uses: `meta mark` → `mark`, `|`/`&`/`^` → `or`/`and`/`xor`, hex constants
 * without leading zeros (`0x00000000` → `0`), `, ` inside anonymous maps → ` , `.
 */
export function normalizeKernelRule(rule: string): string {
  return rule
    .replace(/\bmeta mark\b/g, 'mark')
    .replace(/ \| /g, ' or ')
    .replace(/ & /g, ' and ')
    .replace(/ \^ /g, ' xor ')
    .replace(/\b0x([0-9a-f]+)\b/gi, (_m, hex: string) => {
      const n = Number.parseInt(hex, 16);
      return n === 0 ? '0' : `0x${n.toString(16)}`;
    })
    .replace(/\s*,\s+/g, ' , ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Chain priority keywords as nft prints them, as numbers (for `add chain`). */
const PRIORITY_WORDS: Readonly<Record<string, number>> = {
  raw: -300,
  mangle: -150,
  dstnat: -100,
  filter: 0,
  security: 50,
  srcnat: 100,
};

function priorityNumber(text: string): string {
  const m = /^([a-z]+)\s*(?:([+-])\s*(\d+))?$/.exec(text.trim());
  if (m && PRIORITY_WORDS[m[1]!] !== undefined) {
    const base = PRIORITY_WORDS[m[1]!]!;
    const off = m[3] === undefined ? 0 : Number(m[3]) * (m[2] === '-' ? -1 : 1);
    return String(base + off);
  }
  return text.trim();
}

/** A chain or set name as an nft -f word (the kernel prints names with `/` unquoted, as the renderer writes them). */
function convertChain(name: string, body: string, prefix: string): string[] {
  const cmds: string[] = [];
  const lines = logicalLines(body);
  let spec = '';
  let comment = '';
  const rules: string[] = [];
  for (const l of lines) {
    const hook = /^type (\w+) hook (\w+) priority ([^;]+);(?:\s*policy (\w+);)?$/.exec(l);
    if (hook) {
      spec = `type ${hook[1]} hook ${hook[2]} priority ${priorityNumber(hook[3]!)} ;`;
      continue;
    }
    const c = /^comment ("(?:[^"\\]|\\.)*")$/.exec(l);
    if (c) {
      comment = `comment ${c[1]} ;`;
      continue;
    }
    rules.push(l);
  }
  const inner = [spec, comment].filter((s) => s !== '').join(' ');
  cmds.push(`add chain ${prefix} ${name}${inner === '' ? '' : ` { ${inner} }`}`);
  for (const r of rules) cmds.push(`add rule ${prefix} ${name} ${normalizeKernelRule(r)}`);
  return cmds;
}

function convertSet(kind: 'set' | 'map', name: string, body: string, prefix: string): string[] {
  const decl: string[] = [];
  let elements = '';
  const text = body.trim();
  const at = text.search(/elements = \{/);
  const head = at >= 0 ? text.slice(0, at) : text;
  if (at >= 0) {
    const open = text.indexOf('{', at);
    elements = text
      .slice(open + 1, closing(text, open))
      .replace(/\s+/g, ' ')
      .trim();
  }
  for (const l of logicalLines(head)) decl.push(`${l.replace(/;$/, '')} ;`);
  const cmds = [`add ${kind} ${prefix} ${name} { ${decl.join(' ')} }`];
  if (elements !== '') cmds.push(`add element ${prefix} ${name} { ${elements} }`);
  return cmds;
}

/**
 * The `nft -f` transaction that recreates the table printed by `nft list table FAMILY NAME`
 * on an empty kernel.
 * @throws NftListingError when the text is not one table's listing.
 */
export function listingToCommands(listing: string): string {
  const text = listing.trim();
  const m = /^table (ip6?|inet) (\S+) \{/.exec(text);
  if (!m) throw new NftListingError('the nft listing does not start with "table <family> <name> {"');
  const prefix = `${m[1]} ${m[2]}`;
  const open = text.indexOf('{');
  const body = text.slice(open + 1, closing(text, open));
  const cmds: string[] = [];
  let tableComment = '';
  const re = /(?:^|\n)\s*(chain|set|map|comment|flags)\s+/g;
  let pos = 0;
  while (pos < body.length) {
    re.lastIndex = pos;
    const hit = re.exec(body);
    if (!hit) break;
    const kw = hit[1]!;
    const after = hit.index + hit[0].length;
    if (kw === 'comment' || kw === 'flags') {
      const end = body.indexOf('\n', after);
      const value = body.slice(after, end < 0 ? body.length : end).trim();
      if (kw === 'comment') tableComment = value;
      pos = end < 0 ? body.length : end;
      continue;
    }
    const brace = body.indexOf('{', after);
    const name = body.slice(after, brace).trim();
    const close = closing(body, brace);
    const inner = body.slice(brace + 1, close);
    if (kw === 'chain') cmds.push(...convertChain(name, inner, prefix));
    else cmds.push(...convertSet(kw as 'set' | 'map', name, inner, prefix));
    pos = close + 1;
  }
  const table = `add table ${prefix}${tableComment === '' ? '' : ` { comment ${tableComment} ; }`}`;
  return `${[table, ...orderForApply(cmds)].join('\n')}\n`;
}

/** Sets and chains first, then elements and rules (rules and elements refer to them). */
function orderForApply(cmds: readonly string[]): string[] {
  const decl = cmds.filter((c) => /^add (set|map|chain) /.test(c));
  const rest = cmds.filter((c) => !/^add (set|map|chain) /.test(c));
  return [...decl, ...rest];
}

/**
 * Reads `nft list table` output into the nftables library's table state.
 * @throws NftListingError when the listing cannot be read.
 */
export function tableFromListing(listing: string, family: NftFamily, table = 'kube-proxy'): NftTableState {
  const text = listingToCommands(listing);
  try {
    return tableFromText(text, family, table);
  } catch (e) {
    throw new NftListingError(
      `the kernel's table ${family} ${table} cannot be read: ${(e as Error).message.split('\n')[0]}`,
      { cause: e },
    );
  }
}

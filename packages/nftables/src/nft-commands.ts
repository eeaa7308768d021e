/**
 * A parser for the `nft -f` command subset this package writes (and that kube-proxy writes):
 * add/flush/delete of tables, chains, sets and maps, `add rule`, and add/delete of elements.
 *
 * @module
 */
import { definedFields } from '@nodeagent/core';
import type { ChainHook, NftFamily } from './model.js';

/** One parsed command. */
export type NftCommand =
  | {
      readonly op: 'add' | 'delete' | 'flush';
      readonly obj: 'table';
      readonly family: NftFamily;
      readonly table: string;
      readonly comment?: string;
    }
  | {
      /** `list` only names an object that must exist (nft prints it; this package uses it to narrow nft's cache). */
      readonly op: 'add' | 'delete' | 'flush' | 'list';
      readonly obj: 'chain';
      readonly family: NftFamily;
      readonly table: string;
      readonly name: string;
      readonly hook?: ChainHook;
      readonly comment?: string;
      /** Rules inside an `add chain ... { rule ; ... }` block, appended in order. */
      readonly rules?: readonly string[];
    }
  | {
      readonly op: 'add';
      readonly obj: 'rule';
      readonly family: NftFamily;
      readonly table: string;
      readonly chain: string;
      readonly rule: string;
    }
  | {
      readonly op: 'add' | 'delete' | 'flush' | 'list';
      readonly obj: 'set' | 'map';
      readonly family: NftFamily;
      readonly table: string;
      readonly name: string;
      readonly decl?: {
        readonly type: string;
        readonly flags?: string;
        readonly timeoutSeconds?: number;
        readonly comment?: string;
      };
      /** Elements inside the declaration (`elements = { ... }`), added like `add element`. */
      readonly elements?: readonly {
        readonly key: string;
        readonly value?: string;
        readonly comment?: string;
      }[];
    }
  | {
      readonly op: 'add' | 'delete';
      readonly obj: 'element';
      readonly family: NftFamily;
      readonly table: string;
      readonly set: string;
      readonly elements: readonly {
        readonly key: string;
        readonly value?: string;
        readonly comment?: string;
      }[];
    };

/** A line nft would not parse (as far as this parser knows). */
export class NftSyntaxError extends Error {
  override readonly name = 'NftSyntaxError';
  /** 1-based line number. */
  readonly line: number;
  /** @param line line number; @param message what is wrong. */
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.line = line;
  }
}

/** Words that start a declaration item (not a rule) inside a chain block. */
const CHAIN_DECL_WORDS = new Set([
  'type',
  'hook',
  'priority',
  'policy',
  'comment',
  'device',
  'devices',
  'flags',
]);

const NAME = '([A-Za-z_.][A-Za-z0-9_./-]*)';
const FAM = '(ip|ip6)';

/** Splits on `sep` outside double quotes and braces. */
export function splitTopLevel(s: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '{') depth++;
    else if (!quoted && ch === '}') depth--;
    else if (!quoted && depth === 0 && s.startsWith(sep, i)) {
      out.push(s.slice(start, i));
      start = i + sep.length;
      i += sep.length - 1;
    }
  }
  out.push(s.slice(start));
  return out.map((x) => x.trim()).filter((x) => x !== '');
}

function declItems(body: string | undefined): Map<string, string> {
  const m = new Map<string, string>();
  if (!body) return m;
  for (const part of splitTopLevel(body, ';')) {
    const sp = part.indexOf(' ');
    const k = sp < 0 ? part : part.slice(0, sp);
    m.set(k, sp < 0 ? '' : part.slice(sp + 1).trim());
  }
  return m;
}

function unquote(s: string | undefined): string | undefined {
  if (s === undefined) return undefined;
  const m = /^"([^"]*)"$/.exec(s);
  return m ? m[1] : s;
}

/** Parses one element body: `key [comment "c"] [: value]`. */
function parseElement(body: string): { key: string; value?: string; comment?: string } {
  let rest = body;
  let comment: string | undefined;
  const cm = / comment "([^"]*)"/.exec(rest);
  if (cm) {
    comment = cm[1];
    rest = rest.slice(0, cm.index) + rest.slice(cm.index + cm[0].length);
  }
  const sep = rest.indexOf(' : ');
  const key = (sep < 0 ? rest : rest.slice(0, sep)).trim();
  const value = sep < 0 ? undefined : rest.slice(sep + 3).trim();
  return { key, ...definedFields({ value }), ...definedFields({ comment }) };
}

/** Parses a whole `nft -f` input. @throws NftSyntaxError */
export function parseNftCommands(text: string): NftCommand[] {
  const out: NftCommand[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    out.push(parseLine(line, i + 1));
  }
  return out;
}

function parseLine(line: string, n: number): NftCommand {
  let m = new RegExp(`^(add|delete|flush) table ${FAM} ${NAME}(?: \\{(.*)\\})?$`).exec(line);
  if (m) {
    const comment = unquote(declItems(m[4]).get('comment'));
    return {
      op: m[1] as 'add',
      obj: 'table',
      family: m[2] as NftFamily,
      table: m[3]!,
      ...(comment ? { comment } : {}),
    };
  }
  m = new RegExp(`^(add|delete|flush|list) chain ${FAM} ${NAME} ${NAME}(?: \\{(.*)\\})?$`).exec(line);
  if (m) {
    // A chain block holds declaration items (`type ...`, `comment ...`, `policy ...`) and rules.
    const decl: string[] = [];
    const rules: string[] = [];
    for (const part of splitTopLevel(m[5] ?? '', ';'))
      (CHAIN_DECL_WORDS.has(part.split(' ', 1)[0]!) ? decl : rules).push(part);
    if (rules.length > 0 && m[1] !== 'add') throw new NftSyntaxError(n, `rules in a ${m[1]} chain command`);
    const d = declItems(decl.join(';'));
    let hook: ChainHook | undefined;
    const type = d.get('type');
    if (type !== undefined) {
      const h = /^(filter|nat) hook (prerouting|input|forward|output|postrouting) priority (-?[0-9]+)$/.exec(
        type,
      );
      if (!h) throw new NftSyntaxError(n, `unsupported chain declaration: ${type}`);
      hook = { type: h[1] as 'filter', hook: h[2] as 'input', priority: Number(h[3]) };
    }
    const comment = unquote(d.get('comment'));
    return {
      op: m[1] as 'add',
      obj: 'chain',
      family: m[2] as NftFamily,
      table: m[3]!,
      name: m[4]!,
      ...(hook ? { hook } : {}),
      ...(comment ? { comment } : {}),
      ...(rules.length > 0 ? { rules } : {}),
    };
  }
  m = new RegExp(`^add rule ${FAM} ${NAME} ${NAME} (.+)$`).exec(line);
  if (m)
    return { op: 'add', obj: 'rule', family: m[1] as NftFamily, table: m[2]!, chain: m[3]!, rule: m[4]! };
  m = new RegExp(`^(add|delete|flush|list) (set|map) ${FAM} ${NAME} ${NAME}(?: \\{(.*)\\})?$`).exec(line);
  if (m) {
    const d = declItems(m[6]);
    const typeKw = d.has('typeof') ? 'typeof' : 'type';
    const type = d.get(typeKw);
    const timeout = d.get('timeout');
    const flags = d.get('flags');
    const comment = unquote(d.get('comment'));
    const els = d.get('elements');
    let elements: ReturnType<typeof parseElement>[] | undefined;
    if (els !== undefined) {
      const em = /^= \{ ?(.*?) ?\}$/.exec(els);
      if (!em || m[1] !== 'add')
        throw new NftSyntaxError(n, `unsupported elements declaration: ${els.slice(0, 200)}`);
      elements = splitTopLevel(em[1]!, ',').map(parseElement);
    }
    return {
      op: m[1] as 'add',
      obj: m[2] as 'set',
      family: m[3] as NftFamily,
      table: m[4]!,
      name: m[5]!,
      ...(type !== undefined
        ? {
            decl: {
              type: `${typeKw} ${type}`,
              ...(flags ? { flags } : {}),
              ...(timeout ? { timeoutSeconds: Number(timeout.replace(/s$/, '')) } : {}),
              ...(comment ? { comment } : {}),
            },
          }
        : {}),
      ...(elements ? { elements } : {}),
    };
  }
  m = new RegExp(`^(add|delete) element ${FAM} ${NAME} ${NAME} \\{ (.*) \\}$`).exec(line);
  if (m) {
    return {
      op: m[1] as 'add',
      obj: 'element',
      family: m[2] as NftFamily,
      table: m[3]!,
      set: m[4]!,
      elements: splitTopLevel(m[5]!, ',').map(parseElement),
    };
  }
  throw new NftSyntaxError(n, `unsupported command: ${line.slice(0, 200)}`);
}

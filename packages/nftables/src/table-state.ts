/**
 * An in-memory nftables table set with nft's transaction semantics (all or nothing) and
 * its errors: a missing object (`No such file or directory`), a chain or set still in use
 * (`Device or resource busy`), an element key already present with another value
 * (`File exists`).
 *
 * @module
 */
import { definedFields } from '@nodeagent/core';
import type { ChainHook, NftFamily } from './model.js';
import { type NftCommand, parseNftCommands } from './nft-commands.js';

/** A chain in the state. */
export interface StateChain {
  /** Hook of a base chain. */
  hook?: ChainHook;
  /** Comment. */
  comment?: string;
  /** Rule texts in order. */
  rules: string[];
}

/** A set or map in the state. */
export interface StateSet {
  /** `set` or `map`. */
  kind: 'set' | 'map';
  /** Declaration. */
  type: string;
  /** Flags. */
  flags?: string;
  /** Timeout in seconds. */
  timeoutSeconds?: number;
  /** Elements by key. */
  elements: Map<string, { value?: string; comment?: string }>;
}

/** One table. */
export interface NftTableState {
  /** Family. */
  readonly family: NftFamily;
  /** Name. */
  readonly name: string;
  /** Chains by name. */
  readonly chains: Map<string, StateChain>;
  /** Sets and maps by name. */
  readonly sets: Map<string, StateSet>;
}

/** A transaction the fake refused; the message imitates nft's. */
export class NftTransactionError extends Error {
  override readonly name = 'NftTransactionError';
  /** 1-based index of the failing command. */
  readonly command: number;
  /** @param command index; @param message what nft would say. */
  constructor(command: number, message: string) {
    super(`command ${command}: Error: ${message}`);
    this.command = command;
  }
}

const ENOENT = 'Could not process rule: No such file or directory';
const EBUSY = 'Could not process rule: Device or resource busy';
const EEXIST = 'Could not process rule: File exists';

/** Chain names a rule or element value jumps or goes to. */
export function chainRefs(text: string): string[] {
  const out: string[] = [];
  const re = /\b(?:jump|goto) ([A-Za-z_.][A-Za-z0-9_./-]*)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(m[1]!);
  return out;
}

/** Set names a rule refers to (`@name`). */
export function setRefs(text: string): string[] {
  const out: string[] = [];
  const re = /@([A-Za-z_.][A-Za-z0-9_./-]*)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(m[1]!);
  return out;
}

function cloneTable(t: NftTableState): NftTableState {
  const chains = new Map<string, StateChain>();
  for (const [k, c] of t.chains) chains.set(k, { ...c, rules: [...c.rules] });
  const sets = new Map<string, StateSet>();
  for (const [k, s] of t.sets) sets.set(k, { ...s, elements: new Map(s.elements) });
  return { family: t.family, name: t.name, chains, sets };
}

/** Tables keyed by `family name`. */
export class NftState {
  /** The tables. */
  tables = new Map<string, NftTableState>();

  /** The table, if present. */
  table(family: NftFamily, name: string): NftTableState | undefined {
    return this.tables.get(`${family} ${name}`);
  }

  /** Applies `text` atomically. @throws NftTransactionError or NftSyntaxError; the state is unchanged then. */
  apply(text: string): void {
    const cmds = parseNftCommands(text);
    const work = new Map<string, NftTableState>();
    for (const [k, t] of this.tables) work.set(k, cloneTable(t));
    for (const [i, c] of cmds.entries()) applyCommand(work, c, i + 1);
    this.tables = work;
  }

  /** Validates `text` as {@link apply} would, without changing the state. */
  check(text: string): void {
    const saved = this.tables;
    try {
      this.apply(text);
    } finally {
      this.tables = saved;
    }
  }
}

function referenced(t: NftTableState, chain: string): boolean {
  for (const [name, c] of t.chains) {
    if (name === chain) continue;
    for (const r of c.rules) if (chainRefs(r).includes(chain)) return true;
  }
  for (const s of t.sets.values()) {
    if (s.kind !== 'map') continue;
    for (const e of s.elements.values()) if (e.value && chainRefs(e.value).includes(chain)) return true;
  }
  return false;
}

function addRule(t: NftTableState, ch: StateChain, rule: string, fail: (msg: string) => never): void {
  for (const ref of chainRefs(rule)) if (!t.chains.has(ref)) fail(ENOENT);
  for (const ref of setRefs(rule)) if (!t.sets.has(ref)) fail(ENOENT);
  ch.rules.push(rule);
}

function addElements(
  t: NftTableState,
  s: StateSet,
  els: readonly { readonly key: string; readonly value?: string; readonly comment?: string }[],
  fail: (msg: string) => never,
): void {
  for (const e of els) {
    if ((s.kind === 'map') !== (e.value !== undefined)) fail('element value does not match the set kind');
    for (const ref of chainRefs(e.value ?? '')) if (!t.chains.has(ref)) fail(ENOENT);
    const have = s.elements.get(e.key);
    if (have) {
      if (have.value !== e.value) fail(EEXIST);
      continue;
    }
    s.elements.set(e.key, {
      ...definedFields({ value: e.value }),
      ...definedFields({ comment: e.comment }),
    });
  }
}

function applyCommand(tables: Map<string, NftTableState>, c: NftCommand, n: number): void {
  const key = `${c.family} ${c.table}`;
  const fail = (msg: string): never => {
    throw new NftTransactionError(n, msg);
  };
  if (c.obj === 'table') {
    if (c.op === 'add') {
      if (!tables.has(key))
        tables.set(key, { family: c.family, name: c.table, chains: new Map(), sets: new Map() });
    } else if (!tables.has(key)) fail(ENOENT);
    else if (c.op === 'delete') tables.delete(key);
    else for (const ch of tables.get(key)!.chains.values()) ch.rules = [];
    return;
  }
  const t = tables.get(key) ?? fail(ENOENT);
  switch (c.obj) {
    case 'chain': {
      const ch = t.chains.get(c.name);
      if (c.op === 'list') {
        if (!ch) fail(ENOENT);
        return;
      }
      if (c.op === 'add') {
        let target = ch;
        if (!target) {
          target = {
            ...(c.hook ? { hook: c.hook } : {}),
            ...(c.comment ? { comment: c.comment } : {}),
            rules: [],
          };
          t.chains.set(c.name, target);
        }
        for (const rule of c.rules ?? []) addRule(t, target, rule, fail);
        return;
      }
      if (!ch) {
        fail(ENOENT);
        return;
      }
      if (c.op === 'flush') ch.rules = [];
      else {
        if (referenced(t, c.name)) fail(EBUSY);
        t.chains.delete(c.name);
      }
      return;
    }
    case 'rule': {
      addRule(t, t.chains.get(c.chain) ?? fail(ENOENT), c.rule, fail);
      return;
    }
    case 'set':
    case 'map': {
      const s = t.sets.get(c.name);
      if (c.op === 'list') {
        if (!s || s.kind !== c.obj) fail(ENOENT);
        return;
      }
      if (c.op === 'add') {
        if (!c.decl) fail('set declaration needs a type');
        if (!s) {
          const d = c.decl!;
          t.sets.set(c.name, {
            kind: c.obj,
            type: d.type,
            ...(d.flags ? { flags: d.flags } : {}),
            ...definedFields({ timeoutSeconds: d.timeoutSeconds }),
            elements: new Map(),
          });
        } else {
          // The kernel refuses to re-declare a set with another type, flags or timeout.
          const d = c.decl!;
          if (
            s.kind !== c.obj ||
            s.type !== d.type ||
            (s.flags ?? '') !== (d.flags ?? '') ||
            s.timeoutSeconds !== d.timeoutSeconds
          )
            fail(EEXIST);
        }
        if (c.elements) addElements(t, t.sets.get(c.name)!, c.elements, fail);
        return;
      }
      if (!s) {
        fail(ENOENT);
        return;
      }
      if (c.op === 'flush') s.elements.clear();
      else {
        for (const ch of t.chains.values())
          for (const r of ch.rules) if (setRefs(r).includes(c.name)) fail(EBUSY);
        t.sets.delete(c.name);
      }
      return;
    }
    case 'element': {
      const s = t.sets.get(c.set) ?? fail(ENOENT);
      for (const e of c.elements) {
        const have = s.elements.get(e.key);
        if (c.op === 'delete') {
          if (!have) fail(ENOENT);
          s.elements.delete(e.key);
          continue;
        }
        addElements(t, s, [e], fail);
      }
      return;
    }
  }
}

/** A plain, sorted, comparable view of a table (for tests: "same state" means deep-equal dumps). */
export function dumpTable(t: NftTableState | undefined): unknown {
  if (!t) return null;
  const chains = Object.fromEntries(
    [...t.chains.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, c]) => [k, { hook: c.hook ?? null, rules: c.rules }]),
  );
  const sets = Object.fromEntries(
    [...t.sets.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, s]) => [
        k,
        {
          kind: s.kind,
          type: s.type,
          flags: s.flags ?? null,
          timeout: s.timeoutSeconds ?? null,
          elements: [...s.elements.entries()]
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([key, e]) => [key, e.value ?? null, e.comment ?? null]),
        },
      ]),
  );
  return { chains, sets };
}

/**
 * Turns the desired ruleset plus an in-memory mirror of what the kernel holds into ONE
 * `nft -f` transaction: a full sync (table, chains and maps added; shared chains and maps
 * flushed and rebuilt; every service chain rewritten) or a partial sync (only chains of
 * changed service ports; elements diffed against the mirror). Stale chains are flushed at
 * once and deleted by a later transaction, at least `staleChainDelayMs` afterwards.
 *
 * @module
 */
import { BASE_OWNER, ElementIndex, sameElement } from './element-index.js';
import type { ChainSpec, ElementSpec, NftRuleset, PortRender, SetSpec } from './model.js';
import * as T from './nft-text.js';

/** What the kernel holds, as far as we know. */
interface Mirror {
  readonly chains: Map<string, readonly string[]>;
  readonly sets: Map<string, SetSpec>;
  readonly elements: Map<string, Map<string, ElementSpec>>;
  readonly ports: Map<string, PortRender>;
  /** Shared (non-service) chains written by the last sync. */
  readonly baseChains: Set<string>;
}

/** Names found in the kernel table when the mirror cannot be trusted. */
export interface ExistingObjects {
  /** Chain names. */
  readonly chains: readonly string[];
  /** Set and map names with their kind. */
  readonly sets: readonly { readonly name: string; readonly kind: 'set' | 'map' }[];
}

/** One planned transaction. */
export interface SyncPlan {
  /** The `nft -f` input. */
  readonly text: string;
  /** Full or partial. */
  readonly full: boolean;
  /** Number of command lines. */
  readonly lines: number;
  /** Service ports whose chains were (re)written. */
  readonly rewrittenPorts: number;
  /** Element add and delete commands. */
  readonly elementChanges: number;
  /** Chains flushed because they are no longer used (deleted later). */
  readonly staleChains: readonly string[];
  /** Stale chains deleted by this transaction. */
  readonly deletedChains: readonly string[];
  /** Applies the plan to the mirror (call after the transaction succeeded). */
  readonly commit: () => void;
}

/** Options of {@link NftSyncPlanner}. */
export interface NftSyncPlannerOptions {
  /**
   * Minimum time between flushing a stale chain and deleting it (kernels before 6.2 keep a
   * chain busy for a moment after the map element pointing at it is gone).
   * @default 1000
   */
  readonly staleChainDelayMs?: number;
}

function chainsOf(r: NftRuleset): Map<string, ChainSpec> {
  const m = new Map<string, ChainSpec>();
  for (const c of r.baseChains) m.set(c.name, c);
  for (const p of r.ports.values()) for (const c of p.chains) m.set(c.name, c);
  return m;
}

function rulesEqual(a: readonly string[] | undefined, b: readonly string[]): boolean {
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Deep equality of two port renders (used when the cache produced a new object). */
export function portRendersEqual(a: PortRender, b: PortRender): boolean {
  if (a === b) return true;
  return (
    JSON.stringify([a.chains, a.sets, a.elements, a.needs]) ===
    JSON.stringify([b.chains, b.sets, b.elements, b.needs])
  );
}

function setSpecIn(r: NftRuleset, name: string): SetSpec | undefined {
  for (const s of r.baseSets) if (s.name === name) return s;
  for (const p of r.ports.values()) for (const s of p.sets) if (s.name === name) return s;
  return undefined;
}

/** Plans transactions and keeps the mirror. Not re-entrant. */
export class NftSyncPlanner {
  #mirror: Mirror | undefined;
  #index = new ElementIndex();
  #stale = new Map<string, number>();
  #firstSync = true;
  readonly #delayMs: number;

  /** @param options timing. */
  constructor(options: NftSyncPlannerOptions = {}) {
    this.#delayMs = options.staleChainDelayMs ?? 1000;
  }

  /** True when the next plan must be full (first sync, or after a failure). */
  get needsFull(): boolean {
    return this.#mirror === undefined;
  }

  /** Forgets the mirror: the next plan is a full sync (call after a failed transaction). */
  invalidate(): void {
    this.#mirror = undefined;
  }

  /** Stale chains and when they were flushed (clock ms). */
  get staleChains(): ReadonlyMap<string, number> {
    return this.#stale;
  }

  /** The clock time at which the oldest stale chain may be deleted, if any. */
  nextCleanupAt(): number | undefined {
    let min: number | undefined;
    for (const t of this.#stale.values()) min = min === undefined ? t : Math.min(min, t);
    return min === undefined ? undefined : min + this.#delayMs;
  }

  /**
   * `list chain` + `list set|map` of a small shared chain and set that exist and stay: nft 1.0.6
   * fills its cache for a transaction with a `delete` by dumping every chain and set of the
   * ruleset, unless the transaction's last commands are these listings, which narrow the dump
   * to the one chain and the one set named. A `delete chain`/`delete set` needs nothing from the
   * cache (nft leaves the checks to the kernel, which still refuses a chain or set in use); a
   * `delete element` needs its set, so with `elementSet` (the one set the transaction deletes
   * elements from) that set is the one listed. The chain is one whose rules name no set but the
   * listed one (nft reports "Unknown set" when it prints a rule whose set is not in its cache).
   * The listings print to stdout, which the executor ignores. Empty when the mirror has no such
   * pair.
   */
  #anchors(
    r: Pick<NftRuleset, 'family' | 'table'>,
    deletedChains: Set<string>,
    deletedSets: Set<string>,
    elementSet?: SetSpec,
  ): string[] {
    const m = this.#mirror;
    if (!m) return [];
    let set: SetSpec | undefined = elementSet;
    if (set === undefined) {
      let setSize = Number.POSITIVE_INFINITY;
      for (const s of m.sets.values()) {
        // Affinity sets fill themselves in the kernel; the mirror does not know their size.
        if (deletedSets.has(s.name) || s.flags?.includes('dynamic')) continue;
        const size = m.elements.get(s.name)?.size ?? 0;
        if (size < setSize || (size === setSize && s.name < set!.name)) {
          set = s;
          setSize = size;
        }
      }
    }
    if (set === undefined || deletedSets.has(set.name) || !m.sets.has(set.name)) return [];
    let chain: string | undefined;
    let chainRules = Number.POSITIVE_INFINITY;
    for (const name of m.baseChains) {
      const rules = m.chains.get(name);
      if (rules === undefined || deletedChains.has(name) || this.#stale.has(name)) continue;
      if (rules.some((rule) => T.referencedSets(rule).some((n) => n !== set.name))) continue;
      if (rules.length < chainRules || (rules.length === chainRules && name < chain!)) {
        chain = name;
        chainRules = rules.length;
      }
    }
    if (chain === undefined) return [];
    return [
      `list chain ${r.family} ${r.table} ${chain}`,
      `list ${set.kind} ${r.family} ${r.table} ${set.name}`,
    ];
  }

  #due(now: number, desired: (name: string) => boolean): string[] {
    const out: string[] = [];
    for (const [name, since] of this.#stale)
      if (now - since >= this.#delayMs && !desired(name)) out.push(name);
    return out.sort();
  }

  /**
   * Plans a full sync. `existing` lists what the kernel table holds when the mirror is not
   * trusted (undefined: the table is absent or empty).
   */
  planFull(r: NftRuleset, now: number, existing?: ExistingObjects): SyncPlan {
    const t: T.TableRef = r;
    // The text is built as one line array of whole commands; per-port chains (11 per port and
    // 220,000 rules at 10,000 ports in kube-proxy's layout) are written against precomputed
    // prefixes, one joined piece per port, which keeps the garbage (and GC time) of a 50 MB
    // transaction low.
    const out: string[] = [T.addTable(t, r.tableComment)];
    let lines = 1;
    const chains = chainsOf(r);
    const sets = new Map<string, SetSpec>();
    for (const s of r.baseSets) sets.set(s.name, s);
    for (const p of r.ports.values()) for (const s of p.sets) sets.set(s.name, s);
    const knownChains = this.#mirror ? [...this.#mirror.chains.keys()] : [...(existing?.chains ?? [])];
    const knownSets = this.#mirror
      ? [...this.#mirror.sets.values()].map((s) => ({ name: s.name, kind: s.kind }))
      : [...(existing?.sets ?? [])];
    const push = (line: string) => {
      out.push(line);
      lines++;
    };

    for (const s of sets.values()) push(T.addSet(t, s));
    const addChainPrefix = `add chain ${t.family} ${t.table} `;
    for (const c of chains.values())
      push(c.hook || c.comment ? T.addChain(t, c) : `${addChainPrefix}${c.name}`);
    if (this.#firstSync) {
      // Re-create base chains once so changed hook properties (priority) take effect.
      for (const c of r.baseChains) {
        if (!c.hook) continue;
        push(T.deleteChain(t, c.name));
        push(T.addChain(t, c));
      }
    }
    for (const c of r.baseChains) push(T.flushChain(t, c.name));
    for (const s of r.baseSets) push(T.flushSet(t, s));
    for (const c of r.baseChains) for (const rule of c.rules) push(T.addRule(t, c.name, rule));
    const flushPrefix = `flush chain ${t.family} ${t.table} `;
    const rulePrefix = `add rule ${t.family} ${t.table} `;
    for (const p of r.ports.values()) {
      if (p.chains.length === 0) continue;
      // One flat string per port (an array joined once): nested ropes would make the final
      // join flatten hundreds of thousands of small cons strings.
      const piece: string[] = [];
      for (const c of p.chains) {
        piece.push(flushPrefix + c.name);
        const rp = `${rulePrefix}${c.name} `;
        for (const rule of c.rules) piece.push(rp + rule);
      }
      lines += piece.length;
      out.push(piece.join('\n'));
    }
    const stale = new Map(this.#stale);
    const newlyStale: string[] = [];
    for (const name of knownChains) {
      if (chains.has(name)) {
        stale.delete(name);
        continue;
      }
      push(T.flushChain(t, name));
      if (!stale.has(name)) {
        stale.set(name, now);
        newlyStale.push(name);
      }
    }
    for (const s of knownSets) if (!sets.has(s.name)) push(T.deleteSet(t, s));
    const index = new ElementIndex();
    index.add(BASE_OWNER, r.baseElements, false);
    for (const p of r.ports.values()) index.add(p.key, p.elements, false);
    const elements = index.winners();
    let elementChanges = 0;
    const all: ElementSpec[] = [];
    for (const m of elements.values()) {
      elementChanges += m.size;
      for (const el of m.values()) all.push(el);
    }
    for (const line of T.addElementsBatched(t, all)) push(line);
    const deleted = [...stale]
      .filter(([n, since]) => now - since >= this.#delayMs && !chains.has(n))
      .map(([n]) => n)
      .sort();
    for (const name of deleted) push(T.deleteChain(t, name));

    const mirrorChains = new Map<string, readonly string[]>();
    for (const c of chains.values()) mirrorChains.set(c.name, c.rules);
    const deletedSet = new Set(deleted);
    for (const name of stale.keys()) if (!deletedSet.has(name)) mirrorChains.set(name, []);
    out.push('');
    const text = out.join('\n');
    return {
      text,
      full: true,
      lines,
      rewrittenPorts: r.ports.size,
      elementChanges,
      staleChains: newlyStale,
      deletedChains: deleted,
      commit: () => {
        for (const d of deleted) stale.delete(d);
        this.#stale = stale;
        this.#index = index;
        this.#firstSync = false;
        this.#mirror = {
          chains: mirrorChains,
          sets,
          elements,
          ports: new Map(r.ports),
          baseChains: new Set(r.baseChains.map((c) => c.name)),
        };
      },
    };
  }

  /**
   * Plans a partial sync against the mirror. `forcePorts` are service keys (`ns/svc`) whose
   * ports are rewritten even if their render did not change. With `deleteStale` false, stale
   * chains that are due are left to {@link planCleanup} (a caller that runs the cleanup as its
   * own transaction right before, as kube-proxy does, saves an nft call for chains that became
   * due in between). @throws Error without a mirror.
   */
  planPartial(
    r: NftRuleset,
    now: number,
    forceServices: ReadonlySet<string> = new Set(),
    deleteStale = true,
  ): SyncPlan {
    const m = this.#mirror;
    if (!m) throw new Error('planPartial needs a trusted mirror: run a full sync first');
    const t: T.TableRef = r;
    const addChains: string[] = [];
    const flushes: string[] = [];
    const newSets = new Map<string, SetSpec>();
    const chainUpdates = new Map<string, readonly string[]>();

    // Shared chains and sets: few, compared in full.
    const baseNames = new Set<string>();
    for (const c of r.baseChains) {
      baseNames.add(c.name);
      const old = m.chains.get(c.name);
      if (old === undefined) addChains.push(T.addChain(t, c));
      else if (rulesEqual(old, c.rules)) continue;
      else flushes.push(T.flushChain(t, c.name));
      chainUpdates.set(c.name, c.rules);
    }
    for (const s of r.baseSets) if (!m.sets.has(s.name)) newSets.set(s.name, s);

    const changed: PortRender[] = [];
    const removed: PortRender[] = [];
    let kept = 0;
    for (const [key, p] of r.ports) {
      const old = m.ports.get(key);
      if (old !== undefined) kept++;
      if (old === p && !forceServices.has(p.serviceKey)) continue;
      if (old && !forceServices.has(p.serviceKey) && portRendersEqual(old, p)) continue;
      changed.push(p);
    }
    // Every mirrored port still rendered: nothing was removed (skips a second 10,000-port pass).
    if (kept !== m.ports.size) for (const [key, p] of m.ports) if (!r.ports.has(key)) removed.push(p);

    const newChainNames = new Set<string>();
    const newSetNames = new Set<string>();
    for (const p of changed) {
      for (const s of p.sets) {
        newSetNames.add(s.name);
        if (!m.sets.has(s.name)) newSets.set(s.name, s);
      }
      for (const c of p.chains) {
        newChainNames.add(c.name);
        addChains.push(T.addChain(t, c));
        if (m.chains.has(c.name)) flushes.push(T.flushChain(t, c.name));
        chainUpdates.set(c.name, c.rules);
      }
    }
    // Chains and sets that belonged to changed or removed ports (or shared chains no longer used).
    const staleChains: string[] = [];
    const staleSets: SetSpec[] = [];
    const consider = (p: PortRender | undefined) => {
      if (!p) return;
      for (const c of p.chains)
        if (!newChainNames.has(c.name) && !this.#stale.has(c.name)) staleChains.push(c.name);
      for (const s of p.sets) if (!newSetNames.has(s.name) && m.sets.has(s.name)) staleSets.push(s);
    };
    for (const p of changed) consider(m.ports.get(p.key));
    for (const p of removed) consider(p);
    for (const name of m.baseChains)
      if (!baseNames.has(name) && !this.#stale.has(name)) staleChains.push(name);
    const uniqueStale = [...new Set(staleChains)].filter((n) => !chainUpdates.has(n));
    for (const name of uniqueStale) flushes.push(T.flushChain(t, name));

    // Elements: claims of changed/removed ports move; only keys whose winner changed are written.
    for (const p of removed) this.#index.remove(p.key, p.elements);
    for (const p of changed) {
      const old = m.ports.get(p.key);
      if (old) this.#index.remove(old.key, old.elements);
      this.#index.add(p.key, p.elements);
    }
    const delKeys: { set: string; key: string }[] = [];
    const addEls: ElementSpec[] = [];
    const elUpdates: { set: string; key: string; el: ElementSpec | undefined }[] = [];
    for (const [set, keys] of this.#index.takeDirty()) {
      const applied = m.elements.get(set);
      for (const key of keys) {
        const want = this.#index.get(set, key);
        const have = applied?.get(key);
        if (sameElement(want, have)) continue;
        if (have) delKeys.push({ set, key });
        if (want) addEls.push(want);
        elUpdates.push({ set, key, el: want });
      }
    }
    const uniqueStaleSets = [...new Map(staleSets.map((s) => [s.name, s])).values()];
    // nft 1.0.6 dumps every chain (and set) of the ruleset before a transaction with a
    // `delete` or an `add rule`/`add element`, but only the tables for `add chain`/`add set`
    // (with their rules or elements inside) and nothing for `flush chain`. So rules are written
    // as `add chain X { rules }`, elements as `add set|map X { declaration; elements }` (sets
    // that rules refer to are declared first: nft resolves `@set` from its cache), and only
    // deletions (and elements of interval sets, which nft merges against the set's contents)
    // make the transaction load the full cache. See the package README.
    const specOf = (name: string): SetSpec | undefined =>
      newSets.get(name) ?? m.sets.get(name) ?? setSpecIn(r, name);
    const declare = new Map<string, SetSpec>(newSets);
    for (const rs of chainUpdates.values())
      for (const rule of rs)
        for (const name of T.referencedSets(rule)) {
          const spec = specOf(name);
          if (spec) declare.set(name, spec);
        }
    const addsBySet = new Map<string, ElementSpec[]>();
    const intervalAdds: ElementSpec[] = [];
    for (const el of addEls) {
      const spec = specOf(el.set);
      if (!spec || spec.flags?.split(',').includes('interval')) {
        intervalAdds.push(el);
        continue;
      }
      let l = addsBySet.get(el.set);
      if (!l) {
        l = [];
        addsBySet.set(el.set, l);
      }
      l.push(el);
    }
    const isDesired = (name: string) =>
      chainUpdates.has(name) || baseNames.has(name) || newChainNames.has(name);
    const deleted = deleteStale ? this.#due(now, isDesired) : [];
    // Deletions of chains, sets and of elements of at most one set: end with the anchor
    // listings that keep nft's cache small (elements of two or more sets need every set in
    // nft's cache, which one listing cannot name; then nft dumps everything).
    // The listing makes nft fetch that set's elements instead of every chain: worth it while
    // the set holds no more elements than the table has chains (kube-proxy's layout: 10,000
    // `service-ips` elements against 110,000 chains; not the optimized layout's endpoint maps,
    // 100,000 elements against 40 chains, whose full chain dump is cheap).
    const elementSets = new Set(delKeys.map((k) => k.set));
    const onlySet = elementSets.size === 1 ? [...elementSets][0]! : undefined;
    const elementSet =
      onlySet !== undefined && (m.elements.get(onlySet)?.size ?? 0) <= m.chains.size
        ? specOf(onlySet)
        : undefined;
    const anchors =
      intervalAdds.length === 0 &&
      elementSets.size <= 1 &&
      (elementSets.size === 0 || elementSet !== undefined) &&
      (deleted.length > 0 || uniqueStaleSets.length > 0 || elementSet !== undefined)
        ? this.#anchors(r, new Set(deleted), new Set(uniqueStaleSets.map((s) => s.name)), elementSet)
        : [];
    const blocks: string[] = [];
    for (const [name, rs] of chainUpdates) if (rs.length > 0) blocks.push(T.addChainRules(t, name, rs));
    const out = [
      ...[...declare.values()].map((s) => T.addSet(t, s)),
      ...addChains,
      ...flushes,
      ...blocks,
      ...T.deleteElementsBatched(t, delKeys),
      ...[...addsBySet].flatMap(([set, els]) => T.addSetElementsBatched(t, specOf(set)!, els)),
      ...T.addElementsBatched(t, intervalAdds),
      ...uniqueStaleSets.map((s) => T.deleteSet(t, s)),
      ...deleted.map((n) => T.deleteChain(t, n)),
      ...anchors,
    ];
    const text = out.length > 0 ? `${out.join('\n')}\n` : '';
    return {
      text,
      full: false,
      lines: out.length,
      rewrittenPorts: changed.length,
      elementChanges: delKeys.length + addEls.length,
      staleChains: uniqueStale,
      deletedChains: deleted,
      commit: () => {
        for (const [name, rs] of chainUpdates) {
          m.chains.set(name, rs);
          this.#stale.delete(name);
        }
        for (const name of uniqueStale) {
          m.chains.set(name, []);
          this.#stale.set(name, now);
        }
        for (const name of deleted) {
          m.chains.delete(name);
          this.#stale.delete(name);
        }
        for (const s of newSets.values()) m.sets.set(s.name, s);
        for (const s of uniqueStaleSets) m.sets.delete(s.name);
        for (const u of elUpdates) {
          let bySet = m.elements.get(u.set);
          if (!bySet) {
            bySet = new Map();
            m.elements.set(u.set, bySet);
          }
          if (u.el) bySet.set(u.key, u.el);
          else bySet.delete(u.key);
        }
        m.baseChains.clear();
        for (const n of baseNames) m.baseChains.add(n);
        for (const p of removed) m.ports.delete(p.key);
        for (const p of changed) m.ports.set(p.key, p);
      },
    };
  }

  /** Plans a transaction that only deletes stale chains that are due (empty text when none). */
  planCleanup(r: Pick<NftRuleset, 'family' | 'table'>, now: number): SyncPlan {
    const m = this.#mirror;
    const deleted = m ? this.#due(now, () => false) : [];
    const out = deleted.map((n) => T.deleteChain(r, n));
    if (out.length > 0) out.push(...this.#anchors(r, new Set(deleted), new Set()));
    return {
      text: out.length ? `${out.join('\n')}\n` : '',
      full: false,
      lines: out.length,
      rewrittenPorts: 0,
      elementChanges: 0,
      staleChains: [],
      deletedChains: deleted,
      commit: () => {
        for (const n of deleted) {
          m?.chains.delete(n);
          this.#stale.delete(n);
        }
      },
    };
  }
}

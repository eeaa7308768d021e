/**
 * Deciding what each sync writes: a full sync (every chain) or a partial one (the shared
 * chains plus the chains of changed services), and which stale chains to delete — using
 * the chains written by earlier successful syncs instead of reading the kernel back.
 *
 * @module
 */
import { isServiceChainName } from './chain-names.js';
import type { IptablesRenderer, IptablesRuleset, ServicePortRules } from './render.js';
import { type RestoreChunk, restoreChunksPlan, restoreText, sharedChainsText } from './restore-text.js';
import { canonicalChains } from './rule-canon.js';
import type { IptablesServicePort } from './service-port.js';

/** Options of {@link IptablesSyncPlanner}. */
export interface IptablesSyncPlannerOptions {
  /**
   * How full syncs are written: `chunked` (several payloads, see `restoreChunks`; fast on
   * the nf_tables backend) or `single` (one payload, exactly kube-proxy's call).
   * @default 'chunked'
   */
  readonly fullSyncMode?: 'chunked' | 'single';
  /**
   * Rules per service-chain payload in chunked full syncs (1,000-2,000 measured fastest on
   * the nf_tables backend; see the README).
   * @default 2000
   */
  readonly maxRulesPerChunk?: number;
  /**
   * Leave the shared chains (filter table, nat KUBE-SERVICES / KUBE-NODEPORTS / ...) out of
   * a partial sync when their content equals what the last successful sync wrote — e.g.
   * when only endpoints changed. kube-proxy always rewrites them (10,000 rules at 10,000
   * services); `false` reproduces its payload exactly.
   * @default true
   */
  readonly skipUnchangedSharedChains?: boolean;
}

/**
 * Why a sync is full: the caller asked for it (`requested`: the sync loop's decision — first
 * sync, failure, period, configuration change), or a partial sync was impossible because the
 * planner has no baseline to diff against: nothing synced yet (`initial`), the last sync failed
 * (`failure`), or the tables were flushed under it (`flushed`, the canary vanished).
 */
export type FullSyncReason = 'initial' | 'failure' | 'flushed' | 'requested';

/** What one sync writes. */
export interface SyncPlan {
  /** True for a full sync. */
  readonly full: boolean;
  /** Why it is full (undefined for partial syncs). */
  readonly fullReason: FullSyncReason | undefined;
  /** Restore payloads to apply in order (one for partial syncs). */
  readonly payloads: readonly string[];
  /** Per-service chains this sync flushes and deletes. */
  readonly staleChains: readonly string[];
  /** The rendered ruleset. */
  readonly ruleset: IptablesRuleset;
  /** Total payload size in bytes. */
  readonly bytes: number;
  /** Own chains written, per service key. */
  readonly writtenChains: ReadonlyMap<string, ReadonlySet<string>>;
  /** Rules in the own chains written, per service key. */
  readonly writtenRules: ReadonlyMap<string, number>;
  /** Service keys whose chains this sync rewrites (undefined: all). */
  readonly changedServices: ReadonlySet<string> | undefined;
  /**
   * Rules in the kernel once this plan is applied, per table (kube-proxy's
   * `sync_proxy_rules_iptables_total{table}`), counting the chains a partial sync left alone.
   */
  readonly ruleCounts: { readonly filter: number; readonly nat: number };
  /** Service ports whose internal / external traffic is dropped for lack of local endpoints. */
  readonly noLocalEndpoints: { readonly internal: number; readonly external: number };
  /** False when the shared chains were left out (unchanged since the last sync). */
  readonly sharedChainsWritten: boolean;
  /** The shared chains' content, recorded on success (undefined when not tracked). */
  readonly sharedText: string | undefined;
  /**
   * Per payload, the own chains it writes with their service port's rules text (what the
   * kernel holds for them once that payload is applied); used to know, after a failure,
   * which content the kernel has.
   */
  readonly payloadChains: readonly ReadonlyMap<string, string>[];
}

/**
 * Plans full and partial syncs and remembers which per-service chains exist after each
 * successful one. Whether a sync is full is the caller's decision (the proxier's sync loop
 * owns that policy); the planner only plans a full sync instead of a partial one when it has
 * no baseline: before its first successful full sync, after a failed sync, or after
 * {@link IptablesSyncPlanner.baselineLost} (see {@link FullSyncReason}).
 */
export class IptablesSyncPlanner {
  readonly #renderer: IptablesRenderer;
  readonly #mode: 'chunked' | 'single';
  readonly #maxRules: number;
  readonly #known = new Map<string, Set<string>>();
  readonly #knownRules = new Map<string, number>();
  readonly #orphans = new Set<string>();
  /** Chain → the rules text of the service port that last wrote it, as the kernel holds it. */
  readonly #content = new Map<string, string>();
  /** Canonical rules per chain read from the kernel (until the next successful full sync). */
  #saved: Map<string, string[]> | undefined;
  readonly #skipShared: boolean;
  #lastShared: string | undefined;
  #noBaseline: Exclude<FullSyncReason, 'requested'> | undefined = 'initial';

  /** @param renderer the renderer (its caches make repeated plans cheap); @param options policy. */
  constructor(renderer: IptablesRenderer, options: IptablesSyncPlannerOptions = {}) {
    this.#renderer = renderer;
    this.#mode = options.fullSyncMode ?? 'chunked';
    this.#maxRules = options.maxRulesPerChunk ?? 2000;
    this.#skipShared = options.skipUnchangedSharedChains ?? true;
  }

  /** True when full syncs are written as make-before-break chunks (`fullSyncMode: 'chunked'`). */
  get chunked(): boolean {
    return this.#mode === 'chunked';
  }

  /**
   * Why a partial sync is impossible (no baseline to diff against), or undefined when one can
   * be planned. Not a policy: whether to sync fully is the caller's decision.
   */
  get noBaseline(): Exclude<FullSyncReason, 'requested'> | undefined {
    return this.#noBaseline;
  }

  /**
   * The kernel no longer holds what the last sync wrote (the canary vanished: another program
   * flushed the tables), so the next plan is full whatever the caller asks.
   */
  baselineLost(): void {
    this.#noBaseline ??= 'flushed';
  }

  /**
   * Adds chains found in the kernel (e.g. from `iptables-save -t nat` at startup) so the next
   * full sync deletes the stale ones among them. Non-service chains are ignored.
   */
  seedExistingChains(chains: Iterable<string>): void {
    for (const c of chains) if (isServiceChainName(c)) this.#orphans.add(c);
  }

  /**
   * Learns the kernel's nat table from `iptables-save -t nat` output: the per-service chains
   * (as {@link seedExistingChains}) and their rules, so the next full sync can tell which
   * existing chains already hold what it writes (those load early; the others switch with the
   * dispatch).
   */
  seedExistingRules(natSave: string): void {
    const lines = natSave.split('\n');
    this.seedExistingChains(lines.flatMap((l) => (l.startsWith(':') ? [l.slice(1).split(' ')[0]!] : [])));
    this.#saved = canonicalChains(
      lines.filter((l) => l.startsWith('-A KUBE-') && isServiceChainName(l.split(' ')[1]!)),
    );
  }

  /** True when the kernel, as read by {@link seedExistingRules}, holds exactly `sp`'s chains. */
  #matchesSaved(sp: ServicePortRules, existing: ReadonlySet<string>): boolean {
    const saved = this.#saved;
    if (!saved) return false;
    const ours = canonicalChains(sp.chainRules!.split('\n'));
    return sp.chains!.every((c) => {
      if (!existing.has(c)) return false;
      const a = ours.get(c) ?? [];
      const b = saved.get(c) ?? [];
      return a.length === b.length && a.every((r, i) => r === b[i]);
    });
  }

  /** Every per-service chain believed to exist (a superset after a failure). */
  knownChains(): Set<string> {
    const all = new Set(this.#orphans);
    for (const s of this.#known.values()) for (const c of s) all.add(c);
    return all;
  }

  /**
   * Plans the next sync.
   * @param servicePorts every service port of the family.
   * @param changedServices service keys (`ns/name`) changed since the last successful sync,
   *   deleted services included.
   * @param full the caller's decision: a full sync; `false` plans a partial one unless there is
   *   no baseline ({@link noBaseline}).
   */
  plan(
    servicePorts: Iterable<IptablesServicePort>,
    changedServices: ReadonlySet<string>,
    full: boolean,
  ): SyncPlan {
    const reason: FullSyncReason | undefined = this.#noBaseline ?? (full ? 'requested' : undefined);
    const isFull = reason !== undefined;
    const ruleset = this.#renderer.render(servicePorts, isFull ? {} : { changedServices });
    const written = new Map<string, Set<string>>();
    const writtenRules = new Map<string, number>();
    const countLines = (s: string): number => {
      let n = 0;
      for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
      return n;
    };
    let filterRules = ruleset.filterHeadRules.length + ruleset.filterTailRules.length;
    let natRules = ruleset.natHeadRules.length + ruleset.natTailRules.length;
    let internal = 0;
    let external = 0;
    for (const sp of ruleset.servicePorts) {
      filterRules += countLines(sp.filterRules);
      natRules += countLines(sp.dispatchRules);
      if (sp.noLocalEndpointsInternal) internal++;
      if (sp.noLocalEndpointsExternal) external++;
      if (!sp.chains) continue;
      writtenRules.set(sp.serviceKey, (writtenRules.get(sp.serviceKey) ?? 0) + sp.chainRuleCount);
      const set = written.get(sp.serviceKey) ?? new Set<string>();
      written.set(sp.serviceKey, set);
      for (const c of sp.chains) set.add(c);
    }
    const stale: string[] = [];
    if (isFull) {
      const all = new Set<string>();
      for (const s of written.values()) for (const c of s) all.add(c);
      for (const c of this.knownChains()) if (!all.has(c)) stale.push(c);
    } else {
      for (const key of changedServices) {
        const now = written.get(key);
        for (const c of this.#known.get(key) ?? []) if (!now?.has(c)) stale.push(c);
      }
    }
    for (const n of writtenRules.values()) natRules += n;
    if (!isFull) {
      for (const [key, n] of this.#knownRules) if (!changedServices.has(key)) natRules += n;
    }
    stale.sort();
    const sharedText = this.#skipShared ? sharedChainsText(ruleset) : undefined;
    const includeShared = isFull || sharedText === undefined || sharedText !== this.#lastShared;
    let chunks: RestoreChunk[];
    if (isFull && this.#mode === 'chunked') {
      const existing = this.knownChains();
      chunks = restoreChunksPlan(ruleset, {
        staleNatChains: stale,
        maxRulesPerChunk: this.#maxRules,
        // Make before break: early only what no previous rule reaches (new names) or what
        // the kernel already holds; every other chain switches with the dispatch.
        early: (sp) =>
          sp.chains!.every((c) => !existing.has(c)) ||
          sp.chains!.every((c) => this.#content.get(c) === sp.chainRules) ||
          this.#matchesSaved(sp, existing),
      });
    } else {
      const text = restoreText(ruleset, { staleNatChains: stale, includeSharedChains: includeShared });
      const chains = new Map<string, string>();
      for (const sp of ruleset.servicePorts)
        if (sp.chains) for (const c of sp.chains) chains.set(c, sp.chainRules!);
      chunks = [{ text, chains }];
    }
    const payloads = chunks.map((c) => c.text);
    let bytes = 0;
    for (const p of payloads) bytes += Buffer.byteLength(p);
    return {
      full: isFull,
      fullReason: reason,
      payloads,
      staleChains: stale,
      ruleset,
      bytes,
      writtenChains: written,
      changedServices: isFull ? undefined : changedServices,
      ruleCounts: { filter: filterRules, nat: natRules },
      noLocalEndpoints: { internal, external },
      writtenRules,
      sharedChainsWritten: includeShared,
      sharedText,
      payloadChains: chunks.map((c) => c.chains),
    };
  }

  /** The content the kernel holds once `payloads` of a plan were applied. */
  #recordApplied(plan: SyncPlan, applied: number): void {
    for (const chains of plan.payloadChains.slice(0, applied))
      for (const [c, text] of chains) this.#content.set(c, text);
    // The stale chains are deleted by the last payload.
    if (applied === plan.payloads.length) for (const c of plan.staleChains) this.#content.delete(c);
  }

  /** Records that `plan` was applied completely. */
  succeeded(plan: SyncPlan): void {
    this.#lastShared = plan.sharedText;
    this.#recordApplied(plan, plan.payloads.length);
    if (plan.full) {
      this.#known.clear();
      this.#knownRules.clear();
      this.#orphans.clear();
      for (const [key, n] of plan.writtenRules) this.#knownRules.set(key, n);
      for (const [key, chains] of plan.writtenChains) this.#known.set(key, new Set(chains));
      this.#noBaseline = undefined;
      this.#saved = undefined;
      return;
    }
    for (const key of plan.changedServices ?? []) {
      const chains = plan.writtenChains.get(key);
      if (chains && chains.size > 0) this.#known.set(key, new Set(chains));
      else this.#known.delete(key);
      const rules = plan.writtenRules.get(key);
      if (rules !== undefined) this.#knownRules.set(key, rules);
      else this.#knownRules.delete(key);
    }
  }

  /**
   * Records that `plan` failed: the next plan is full (no baseline), and every chain it may have created is
   * remembered so that sync can delete it if stale. `appliedPayloads` (each payload is one
   * atomic iptables-restore) tells which content the kernel now holds; without it the content
   * of every chain the plan writes is taken as unknown.
   */
  failed(plan: SyncPlan, appliedPayloads?: number): void {
    this.#noBaseline = 'failure';
    if (appliedPayloads === undefined)
      for (const chains of plan.payloadChains) for (const c of chains.keys()) this.#content.delete(c);
    else this.#recordApplied(plan, appliedPayloads);
    this.#lastShared = undefined;
    for (const [key, chains] of plan.writtenChains) {
      const set = this.#known.get(key) ?? new Set<string>();
      this.#known.set(key, set);
      for (const c of chains) set.add(c);
    }
  }
}

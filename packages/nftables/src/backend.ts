/**
 * The nftables backend (kube-proxy's nftables mode behind proxy-state's `DataPlaneBackend`):
 * one syncer per IP family (`ip kube-proxy` and
 * `ip6 kube-proxy`), each sync ONE `nft -f` transaction. Stale chains flushed by a sync are
 * deleted by a later run, at least a second later as kube-proxy does (the backend asks the
 * proxier for that run): in the same transaction as that run's partial sync (kube-proxy uses a
 * transaction of its own just before; each nft call costs a process start), or in a transaction
 * of their own before a full sync.
 *
 * @module
 */
import { type Clock, type Logger, noopLogger, parseCIDR, realClock } from '@nodeagent/core';
import {
  type BackendSyncOptions,
  type BackendSyncResult,
  configuredFamilies,
  type DataPlaneBackend,
  type FamilySyncResult,
  type IPFamily,
  type ProxyCheckout,
  type ProxySnapshot,
} from '@nodeagent/proxy-state';
import { NftCommandError, type NftExecutor } from './executor.js';
import { NftSyncer } from './nft-syncer.js';
import { snapshotRenderOptions } from './render-nftables.js';
import type { NftRenderOptions } from './render-options.js';

/**
 * Whether a failed transaction that also deleted stale chains failed on a deletion: nft names
 * the command it could not process on stderr (`delete chain ...`). Errors without nft's stderr
 * (an executor's own) cannot be attributed and count as such.
 */
function failedOnChainDeletion(error: unknown): boolean {
  if (!(error instanceof NftCommandError) || !error.stderr) return true;
  return /^\s*delete chain /m.test(error.stderr);
}

/** One family of an {@link NftablesBackend}. */
export interface NftablesFamilyOptions {
  /** Where this family's transactions go (`SpawnNftExecutor` or `FakeNftExecutor`). Both families may share one. */
  readonly executor: NftExecutor;
}

/** Options of {@link NftablesBackend}. */
export interface NftablesBackendOptions {
  /** The IPv4 side (table `ip kube-proxy`). */
  readonly ipv4?: NftablesFamilyOptions;
  /** The IPv6 side (table `ip6 kube-proxy`). */
  readonly ipv6?: NftablesFamilyOptions;
  /**
   * Renderer options shared by both families (`layout`, `localDetector`, `masqueradeBit`, …);
   * `family` and (unless set) `nodeIP` come from each snapshot.
   * @default {}
   */
  readonly render?: Omit<NftRenderOptions, 'family'>;
  /**
   * Delay before flushed stale chains are deleted (kernels before 6.2 keep them busy briefly).
   * @default 1000
   */
  readonly staleChainDelayMs?: number;
  /**
   * How long after a sync that leaves stale chains the backend asks the proxier for a run
   * that deletes them (`nextRunAtMs`), at the earliest when they are due. Any sync before that
   * takes the due ones along in its own transaction, so while changes keep coming no run is
   * spent on deletions alone (at 10,000 services each nft call costs a process start of up
   * to 0.7 s on a loaded node, and a change arriving during such a run waits for it).
   * kube-proxy schedules no run for them at all: they wait for its next sync.
   * @default 10000
   */
  readonly idleCleanupDelayMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

interface FamilyState {
  readonly family: IPFamily;
  readonly executor: NftExecutor;
  syncer: NftSyncer | undefined;
  nodeIP: string | undefined;
  /** The service CIDRs the syncer renders, joined. */
  serviceCIDRs: string;
  needFull: boolean;
}

/**
 * kube-proxy's nftables mode (or the optimized layout) behind proxy-state's `DataPlaneBackend`
 * interface: the proxier's sync loop decides full vs partial; this backend syncs fully instead
 * of partially only when it has no mirror to diff against (first sync, after a failed
 * transaction or cleanup, a rebuilt renderer).
 */
export class NftablesBackend implements DataPlaneBackend {
  /** @inheritdoc */
  readonly name = 'nftables';
  /** @inheritdoc */
  readonly families: readonly IPFamily[];
  readonly #options: NftablesBackendOptions;
  readonly #state: FamilyState[];
  readonly #clock: Clock;
  readonly #log: Logger;
  #serviceCIDRs: readonly string[] | undefined;

  /** @param options - One executor per family. @throws TypeError when no family is configured. */
  constructor(options: NftablesBackendOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ backend: 'nftables' });
    this.#state = configuredFamilies('NftablesBackend', options).map(([family, o]) => ({
      family,
      executor: o.executor,
      syncer: undefined,
      nodeIP: undefined,
      serviceCIDRs: '',
      needFull: false,
    }));
    this.families = this.#state.map((s) => s.family);
  }

  /** The syncer of a family once created (after the first sync), for inspection. */
  syncer(family: IPFamily): NftSyncer | undefined {
    return this.#state.find((s) => s.family === family)?.syncer;
  }

  /** @inheritdoc */
  async sync(checkout: ProxyCheckout, options: BackendSyncOptions): Promise<BackendSyncResult> {
    const families: FamilySyncResult[] = [];
    let nextRunAtMs: number | undefined;
    for (const st of this.#state) {
      families.push(await this.#syncFamily(st, st.family === 4 ? checkout.v4 : checkout.v6, options.full));
      const due = st.syncer?.nextCleanupAt();
      if (due === undefined) continue;
      const at = Math.max(due, this.#clock.now() + (this.#options.idleCleanupDelayMs ?? 10_000));
      nextRunAtMs = nextRunAtMs === undefined ? at : Math.min(nextRunAtMs, at);
    }
    return nextRunAtMs === undefined ? { families } : { families, nextRunAtMs };
  }

  /**
   * The cluster's service CIDRs from its `ServiceCIDR` objects (both families; each table gets
   * its own family's), replacing `render.serviceCIDRs`. The next sync renders them into
   * `cluster-ips-check`.
   * @returns true when a family's list changed.
   */
  setServiceCIDRs(cidrs: readonly string[]): boolean {
    const next = [...new Set(cidrs)].sort();
    const before = this.#serviceCIDRs;
    this.#serviceCIDRs = next;
    return before === undefined ? next.length > 0 : before.join(',') !== next.join(',');
  }

  #renderOptions(family: IPFamily): Omit<NftRenderOptions, 'family'> {
    const base = this.#options.render ?? {};
    if (this.#serviceCIDRs === undefined) return base;
    const mine = this.#serviceCIDRs.filter((c) => parseCIDR(c)?.family === family);
    return { ...base, serviceCIDRs: mine };
  }

  #syncerFor(st: FamilyState, snapshot: ProxySnapshot): NftSyncer {
    const render = snapshotRenderOptions(snapshot, this.#renderOptions(st.family));
    const cidrs = (render.serviceCIDRs ?? []).join(',');
    if (st.syncer && render.nodeIP === st.nodeIP && cidrs === st.serviceCIDRs) return st.syncer;
    // A new node IP (or new service CIDRs) means a new renderer; its first (full) sync lists the table and removes
    // whatever the previous one left.
    st.needFull = st.syncer !== undefined;
    st.syncer = new NftSyncer({
      executor: st.executor,
      render,
      clock: this.#clock,
      logger: this.#log.child({ ipFamily: st.family }),
      ...(this.#options.staleChainDelayMs !== undefined
        ? { staleChainDelayMs: this.#options.staleChainDelayMs }
        : {}),
    });
    if (st.needFull) st.syncer.planner.invalidate();
    st.nodeIP = render.nodeIP;
    st.serviceCIDRs = cidrs;
    return st.syncer;
  }

  async #syncFamily(st: FamilyState, snapshot: ProxySnapshot, requested: boolean): Promise<FamilySyncResult> {
    const syncer = this.#syncerFor(st, snapshot);
    // The caller decides; without a mirror the syncer makes it full.
    let full = requested || syncer.planner.needsFull;
    let cleanupFailed = false;
    const due = syncer.nextCleanupAt();
    const isDue = due !== undefined && due <= this.#clock.now();
    if (isDue && !full) {
      // One transaction: the partial sync carries the due stale chains. kube-proxy deletes them
      // in a transaction of its own just before the sync; every nft call costs a process start
      // (0.1-0.7 s each on a loaded 2-core node at 10,000 services), so a change would pay it
      // twice. A failure that nft reports on a `delete chain` (or one we cannot attribute) is
      // counted as a cleanup failure and the same run syncs fully, as after a failed cleanup
      // transaction; other failures are this sync's, as before.
      try {
        const r = await syncer.sync(snapshot, { full: false, deleteStaleChains: true });
        return { family: st.family, full: r.full, bytes: r.bytes, skipped: r.errors };
      } catch (error) {
        if (!failedOnChainDeletion(error)) return { family: st.family, full, error, failureKind: 'nftables' };
        this.#log.warn({ err: error }, 'deleting stale nftables chains failed; syncing fully');
        cleanupFailed = true;
        full = true;
      }
    } else if (isDue) {
      try {
        const deleted = await syncer.cleanup();
        if (deleted.length > 0) this.#log.debug({ chains: deleted.length }, 'stale nftables chains deleted');
      } catch (error) {
        // The cleanup invalidated the mirror; the sync below is full and lists the table.
        this.#log.warn({ err: error }, 'deleting stale nftables chains failed');
        cleanupFailed = true;
        full = true;
      }
    }
    try {
      // Chains that became due since the check above wait for the next run.
      const r = await syncer.sync(snapshot, { full, deleteStaleChains: false });
      return {
        family: st.family,
        full: r.full,
        bytes: r.bytes,
        skipped: r.errors,
        ...(cleanupFailed ? { cleanupFailed } : {}),
      };
    } catch (error) {
      return {
        family: st.family,
        full,
        error,
        failureKind: 'nftables',
        ...(cleanupFailed ? { cleanupFailed } : {}),
      };
    }
  }

  /** @inheritdoc */
  async cleanup(): Promise<void> {
    const table = this.#options.render?.tableName ?? 'kube-proxy';
    for (const st of this.#state) {
      const family = st.family === 4 ? 'ip' : 'ip6';
      // `add` first so the delete succeeds whether or not the table exists (as knftables does).
      await st.executor.apply(`add table ${family} ${table}\ndelete table ${family} ${table}\n`);
      st.syncer = undefined;
      st.nodeIP = undefined;
    }
  }
}

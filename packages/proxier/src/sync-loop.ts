/**
 * One run of the proxier's loop (kube-proxy's `syncProxyRules` around a backend): check out
 * the state of the backend's families (a dual-stack proxier runs one loop per family), decide full vs partial (the one place that decides: first sync, after a failure,
 * every `fullSyncPeriodMs`, a node topology or IP change, a backend's or the proxier's
 * request), sync the backend, then — per family that succeeded —
 * mark healthz updated, record metrics, clear stale UDP conntrack entries, and refresh the
 * health-check node ports. A failed family forces a full sync and makes the run fail so the
 * runner retries after the retry interval.
 *
 * @module
 */
import type { Clock, Logger, Timer } from '@nodeagent/core';
import type {
  BackendSyncResult,
  DataPlaneBackend,
  FamilySyncResult,
  IPFamily,
  ProxyCheckout,
  ProxySnapshot,
  ProxyState,
} from '@nodeagent/proxy-state';
import type { ConntrackCleaner } from './conntrack.js';
import { ProxierSyncError } from './errors.js';
import { healthCheckNodePorts, localReadyEndpoints } from './local-endpoints.js';
import type { ProxierMetrics } from './metrics.js';
import type { ProxyHealthServer } from './proxy-health-server.js';
import type { ServiceHealthServer } from './service-health-server.js';
import { staleConntrackFilters } from './stale-conntrack.js';

/** What one proxier sync did. */
export interface ProxierSyncResult {
  /** True when the proxier asked for a full sync. */
  readonly full: boolean;
  /** Wall time of the whole run in ms (clock). */
  readonly durationMs: number;
  /** Per-family backend results. */
  readonly families: readonly FamilySyncResult[];
  /** True when any family failed. */
  readonly failed: boolean;
  /** Stale conntrack filters cleared after this sync. */
  readonly conntrackFilters: number;
}

/** Dependencies of a {@link SyncLoop}. */
export interface SyncLoopDeps {
  readonly state: ProxyState;
  readonly backend: DataPlaneBackend;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly fullSyncPeriodMs: number;
  readonly healthz: ProxyHealthServer | undefined;
  readonly healthCheckServer: ServiceHealthServer | undefined;
  readonly conntrack: ConntrackCleaner | undefined;
  readonly metrics: () => ProxierMetrics;
  readonly emit: (event: string, ...args: unknown[]) => void;
  readonly requestRun: () => void;
  /**
   * The snapshots the health-check node ports are served from, given this loop's own: a
   * dual-stack proxier's family loops share one health-check server, so each hands back every
   * family's latest. @default this loop's snapshots
   */
  readonly healthCheckSnapshots?: (own: readonly ProxySnapshot[]) => readonly ProxySnapshot[];
}

/** The sync step the runner calls; not re-entrant (the runner never overlaps runs). */
export class SyncLoop {
  /** Set once the informers synced: before that, runs do nothing. */
  initialized = false;
  readonly #d: SyncLoopDeps;
  readonly #startedAt: number;
  #needFull = true;
  #lastFullAt = Number.NEGATIVE_INFINITY;
  /** Per family: the last snapshot programmed, and services changed since (for conntrack after failures). */
  readonly #programmed = new Map<IPFamily, ProxySnapshot>();
  readonly #unprogrammed = new Map<IPFamily, Set<string>>();
  #runTimer: Timer | undefined;
  #syncCount = 0;
  #last: ProxierSyncResult | undefined;
  #closed = false;

  /** @param deps - State, backend and the side channels. */
  constructor(deps: SyncLoopDeps) {
    this.#d = deps;
    this.#startedAt = deps.clock.now();
  }

  /** Syncs run so far. */
  get syncCount(): number {
    return this.#syncCount;
  }

  /** The latest result. */
  get lastResult(): ProxierSyncResult | undefined {
    return this.#last;
  }

  /** Makes the next sync full (node topology change, canary lost, …). */
  requestFullSync(): void {
    this.#needFull = true;
  }

  /** Cancels the backend's wake-up timer. */
  close(): void {
    this.#closed = true;
    this.#runTimer?.cancel();
  }

  /** One run. @throws ProxierSyncError when a family failed (the runner retries). */
  async sync(): Promise<void> {
    if (!this.initialized || this.#closed) return;
    const d = this.#d;
    const metrics = d.metrics();
    const start = d.clock.now();
    // Only this loop's families: another family's pending changes stay for its own runner.
    const checkout = d.state.checkout(d.backend.families);
    metrics.changes(d.state.changeCounts);
    const full = this.#isFullSync(checkout, start);
    let result: BackendSyncResult;
    try {
      result = await d.backend.sync(checkout, { full });
    } catch (error) {
      result = { families: d.backend.families.map((family) => ({ family, full, error })) };
    }
    const end = d.clock.now();
    this.#syncCount++;
    const failures: { family: IPFamily; error: unknown }[] = [];
    let conntrackFilters = 0;
    for (const r of result.families) {
      const snapshot = r.family === 4 ? checkout.v4 : checkout.v6;
      if (r.cleanupFailed) metrics.nftablesCleanupFailure(r.family);
      if (r.error !== undefined) {
        failures.push({ family: r.family, error: r.error });
        this.#remember(r.family, snapshot, false);
        if (r.failureKind) metrics.syncFailure(r.family, r.failureKind, !r.full);
        d.logger.error({ err: r.error, ipFamily: r.family, full: r.full }, 'sync failed; next sync is full');
        d.emit('syncError', r.error, r.family);
        continue;
      }
      d.healthz?.updated(r.family);
      metrics.syncDuration(r.family, r.full, (end - start) / 1000);
      metrics.lastSyncTimestamp(r.family, end / 1000);
      for (const [table, n] of Object.entries(r.iptablesRules ?? {}))
        metrics.iptablesRules(r.family, table, n);
      for (const [table, n] of Object.entries(r.iptablesRulesWritten ?? {}))
        metrics.iptablesRulesWritten(r.family, table, n);
      if (r.noLocalEndpoints) {
        metrics.noLocalEndpoints(r.family, 'internal', r.noLocalEndpoints.internal);
        metrics.noLocalEndpoints(r.family, 'external', r.noLocalEndpoints.external);
      }
      for (const e of r.skipped ?? []) d.emit('renderError', e, r.family);
      conntrackFilters += await this.#clearConntrack(r.family, snapshot);
    }
    if (failures.length === 0) this.#observeProgramming(checkout, end);
    await this.#syncHealthChecks(checkout);
    this.#schedule(result.nextRunAtMs);
    const res: ProxierSyncResult = {
      full,
      durationMs: end - start,
      families: result.families,
      failed: failures.length > 0,
      conntrackFilters,
    };
    this.#last = res;
    if (failures.length > 0) {
      this.#needFull = true;
    } else {
      this.#needFull = false;
      if (full) this.#lastFullAt = start;
    }
    d.emit('synced', res);
    if (failures.length > 0) throw new ProxierSyncError(d.backend.name, failures);
  }

  /**
   * kube-proxy's `doFullSync = needFullSync || time.Since(lastFullSync) > FullSyncPeriod`, with
   * proxy-state's `fullSyncRequired` (node zone or IPs changed, first checkout) of the
   * backend's families as a configuration change.
   */
  #isFullSync(checkout: ProxyCheckout, now: number): boolean {
    if (this.#needFull || now - this.#lastFullAt >= this.#d.fullSyncPeriodMs) return true;
    return this.#d.backend.families.some((f) => (f === 4 ? checkout.v4 : checkout.v6).fullSyncRequired);
  }

  /** Records a family's outcome; returns the services to look at for conntrack. */
  #remember(family: IPFamily, snapshot: ProxySnapshot, ok: boolean): Set<string> {
    const pending = this.#unprogrammed.get(family) ?? new Set<string>();
    for (const s of snapshot.changedServices) pending.add(s);
    if (ok) {
      this.#unprogrammed.delete(family);
      this.#programmed.set(family, snapshot);
    } else {
      this.#unprogrammed.set(family, pending);
    }
    return pending;
  }

  async #clearConntrack(family: IPFamily, snapshot: ProxySnapshot): Promise<number> {
    const previous = this.#programmed.get(family);
    const changed = this.#remember(family, snapshot, true);
    const ct = this.#d.conntrack;
    if (!ct) return 0;
    const filters = staleConntrackFilters(previous, snapshot, changed);
    if (filters.length === 0) return 0;
    try {
      await ct.clear(filters);
    } catch (err) {
      this.#d.logger.warn({ err, filters: filters.length }, 'clearing stale conntrack entries failed');
      this.#d.emit('conntrackError', err);
    }
    return filters.length;
  }

  #observeProgramming(checkout: ProxyCheckout, endMs: number): void {
    const metrics = this.#d.metrics();
    for (const times of checkout.lastChangeTriggerTimes.values()) {
      for (const t of times) {
        const at = Date.parse(t);
        // Changes older than this proxier (the initial list) say nothing about its latency.
        if (Number.isNaN(at) || at < this.#startedAt) continue;
        metrics.networkProgramming(Math.max(0, endMs - at) / 1000);
      }
    }
  }

  async #syncHealthChecks(checkout: ProxyCheckout): Promise<void> {
    const hc = this.#d.healthCheckServer;
    if (!hc) return;
    const own = this.#d.backend.families.map((f) => (f === 4 ? checkout.v4 : checkout.v6));
    const snaps = this.#d.healthCheckSnapshots?.(own) ?? own;
    const ports = healthCheckNodePorts(snaps);
    await hc.syncServices(ports);
    hc.syncEndpoints(localReadyEndpoints(snaps, ports));
  }

  #schedule(atMs: number | undefined): void {
    if (atMs === undefined || this.#closed) return;
    this.#runTimer?.cancel();
    this.#runTimer = this.#d.clock.setTimeout(() => {
      this.#runTimer = undefined;
      this.#d.requestRun();
    }, atMs - this.#d.clock.now());
    this.#runTimer.unref();
  }
}

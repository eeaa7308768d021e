/**
 * The contract between a sync loop (the proxier's) and a data-plane backend (iptables,
 * nftables, IPVS or your own): one `sync(checkout, { full })` per loop run with the latest
 * proxy-state checkout, a result per IP family with the counts the metrics need, and `cleanup`
 * to remove everything. It lives here, next to the snapshots, so every backend package can
 * implement it without importing another backend or the proxier.
 *
 * Who decides what: the sync loop alone decides whether a sync is full (the first sync, after a
 * failure, every {@link FULL_SYNC_PERIOD_MS}, on a configuration change such as the node's
 * topology labels or IPs, or when a backend asks through {@link BackendHost.requestFullSync}).
 * A backend only knows how to do a partial sync.
 *
 * @module
 */
import type { Lifecycle } from '@nodeagent/core';
import type { IPFamily, ProxyCheckout } from './types.js';

/**
 * kube-proxy's `proxyutil.FullSyncPeriod` (one hour, in milliseconds): a sync loop does a full
 * sync when the last one is older than this (`doFullSync = needFullSync ||
 * time.Since(lastFullSync) > FullSyncPeriod` in the iptables and nftables proxiers), and it is
 * also the runner's longest interval between syncs. Rules another program changed behind the
 * loop's back are repaired at least this often.
 */
export const FULL_SYNC_PERIOD_MS = 3_600_000;

/** How the proxier asks a backend to sync. */
export interface BackendSyncOptions {
  /**
   * Rewrite everything. Decided by the sync loop only (first sync, after a failure, a
   * configuration change, every {@link FULL_SYNC_PERIOD_MS}, or a backend's
   * {@link BackendHost.requestFullSync}). `false` asks for a partial sync (only what changed
   * since the last successful sync); a backend writes a full one instead only when it has no
   * baseline a partial sync could be computed against (its renderer was rebuilt, e.g. for a
   * new node IP, or its state is unknown after a failed cleanup) and reports that in
   * {@link FamilySyncResult.full}.
   */
  readonly full: boolean;
}

/** What one family's part of a sync did. */
export interface FamilySyncResult {
  /** The family. */
  readonly family: IPFamily;
  /** True when this family was synced fully. */
  readonly full: boolean;
  /** The error that made this family's sync fail (its rules are as before, or partly applied); absent on success. */
  readonly error?: unknown;
  /** Bytes written to the kernel tool(s), when known. */
  readonly bytes?: number;
  /** Rules per iptables table owned after the sync (`sync_proxy_rules_iptables_total{table}`), when the backend writes iptables rules. */
  readonly iptablesRules?: Readonly<Record<string, number>>;
  /** Rules per iptables table written by this sync (`sync_proxy_rules_iptables_last{table}`), when the backend writes iptables rules. */
  readonly iptablesRulesWritten?: Readonly<Record<string, number>>;
  /** True when deleting stale nftables chains failed during this run (`sync_proxy_rules_nftables_cleanup_failures_total`). */
  readonly cleanupFailed?: boolean;
  /** Service ports dropping traffic for lack of local endpoints, by traffic policy (`sync_proxy_rules_no_local_endpoints_total`). */
  readonly noLocalEndpoints?: { readonly internal: number; readonly external: number };
  /** Service ports (or objects) skipped by the renderer for bad input; the others were programmed. */
  readonly skipped?: readonly Error[];
  /** Which kernel tool failed, for the failure counters: iptables-restore or nft. */
  readonly failureKind?: 'iptables' | 'nftables' | 'ipvs';
}

/** What one backend sync did. */
export interface BackendSyncResult {
  /** One entry per family the backend programs. */
  readonly families: readonly FamilySyncResult[];
  /**
   * Clock time (ms) at which the backend wants another run even without changes (e.g. nftables
   * deletes flushed stale chains one second later); the proxier requests a run then.
   */
  readonly nextRunAtMs?: number;
}

/** What a backend may ask of the proxier between syncs. */
export interface BackendHost {
  /**
   * Makes the next sync full and queues one (kube-proxy's `forceSyncProxyRules`), e.g. when
   * the iptables canary vanished because another program flushed the tables. This is how a
   * backend asks; the sync loop decides.
   * @param reason - Why, for the log.
   */
  requestFullSync(reason: string): void;
}

/**
 * A data plane a sync loop drives (`IptablesBackend` from `@nodeagent/iptables`,
 * `NftablesBackend` from `@nodeagent/nftables`, `IpvsBackend` from `@nodeagent/ipvs`, or your
 * own). Calls are serialised by the loop (never two at once).
 */
export interface DataPlaneBackend {
  /** Name used in logs and events (`iptables`, `nftables`, `ipvs`, …). */
  readonly name: string;
  /** The families this backend programs. */
  readonly families: readonly IPFamily[];
  /**
   * Programs the checkout's snapshots of {@link families}. Per-family failures are reported
   * in the result (the proxier retries and forces a full sync); throwing is for failures that
   * leave nothing known about the kernel state, and is treated like a failure of every family.
   */
  sync(checkout: ProxyCheckout, options: BackendSyncOptions): Promise<BackendSyncResult>;
  /** Removes every rule, chain, table, set or virtual server this backend owns. */
  cleanup(): Promise<void>;
  /**
   * Releases timers (e.g. IPVS drain checks, the iptables canary monitor). Optional.
   *
   * A backend is a handle, not a {@link Lifecycle | long-running piece}: it has nothing to
   * start (the proxier's first `sync` is its start, and whatever it runs in the background
   * it starts after a successful sync), so it is released with `close()` rather than given
   * `start`/`stop`. The proxier calls it from `stop()`.
   */
  close?(): void;
  /**
   * Called once by the proxier's constructor with the way back to it. A backend must not
   * start timers here; it may start them after its first successful sync. Optional.
   */
  attach?(host: BackendHost): void;
  /**
   * The cluster's service CIDRs changed (kube-proxy's `OnServiceCIDRsChanged`: the union of the
   * `spec.cidrs` of every `ServiceCIDR`, both families; the backend keeps its families' own).
   * Optional: backends that drop traffic to unallocated ClusterIPs (nftables' `cluster-ips-check`).
   * @returns true when the rules must be rewritten (the proxier then queues a full sync).
   */
  setServiceCIDRs?(cidrs: readonly string[]): boolean;
}

/** A backend's per-family options: the IPv4 side and/or the IPv6 side. */
export interface PerFamilyOptions<T> {
  /** The IPv4 side; leave out on IPv6-only nodes. */
  readonly ipv4?: T | undefined;
  /** The IPv6 side; leave out on IPv4-only nodes. */
  readonly ipv6?: T | undefined;
}

/**
 * The families a backend was configured for, IPv4 first, each with its options.
 * @param backend - the backend's name, for the error
 * @throws TypeError when neither family is configured
 */
export function configuredFamilies<T>(
  backend: string,
  options: PerFamilyOptions<T>,
): Array<readonly [IPFamily, T]> {
  const out: Array<readonly [IPFamily, T]> = [];
  if (options.ipv4 !== undefined) out.push([4, options.ipv4]);
  if (options.ipv6 !== undefined) out.push([6, options.ipv6]);
  if (out.length === 0) throw new TypeError(`${backend} needs ipv4 and/or ipv6 options`);
  return out;
}

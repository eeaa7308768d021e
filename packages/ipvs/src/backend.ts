/**
 * The IPVS backend (kube-proxy's IPVS mode behind proxy-state's `DataPlaneBackend`): per family, `planIpvs` → an `IpvsReconciler` (virtual/real servers with
 * graceful termination, addresses on `kube-ipvs0`, ipsets) plus the residual iptables rules
 * through an iptables executor. This kernel has no IPVS, so it is exercised with
 * `FakeIpvsExecutor` in the tests here.
 *
 * @module
 */
import { type Clock, definedFields, type Logger, noopLogger, realClock } from '@nodeagent/core';
import { type IptablesExecutor, removeOwnedIptablesChains } from '@nodeagent/iptables';
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
import type { IpvsExecutor, IpvsStatsSource } from './executor.js';
import { IPSET_DEFINITIONS, ipsetName } from './ipsets.js';
import type { IpvsPlanOptions } from './plan-options.js';
import { planIpvs } from './planner.js';
import { IpvsReconciler } from './reconciler.js';
import { ipvsJumpRules, renderResidualIptables } from './render-iptables.js';
import { IPVS_FILTER_CHAINS, IPVS_NAT_CHAINS } from './residual-iptables.js';

/** One family of an {@link IpvsBackend}. */
export interface IpvsFamilyOptions {
  /** IPVS, ipsets and `kube-ipvs0` addresses (`SpawnIpvsExecutor` or `FakeIpvsExecutor`). */
  readonly executor: IpvsExecutor;
  /** Where the residual iptables rules go; without it they are not written (tests of the IPVS part alone). */
  readonly iptables?: IptablesExecutor;
  /** Connection counts for graceful termination. @default none (removed real servers go at once) */
  readonly stats?: IpvsStatsSource;
}

/** Options of {@link IpvsBackend}. */
export interface IpvsBackendOptions {
  /** The IPv4 side. */
  readonly ipv4?: IpvsFamilyOptions;
  /** The IPv6 side. */
  readonly ipv6?: IpvsFamilyOptions;
  /** Planner options (scheduler, detector, mark, …); `nodeIP` defaults to the snapshot's. @default {} */
  readonly plan?: IpvsPlanOptions;
  /** Re-check interval of draining real servers. @default 60000 */
  readonly checkIntervalMs?: number;
  /** Delete draining real servers after this long regardless. @default Infinity */
  readonly gracefulTimeoutMs?: number;
  /** `--ipvs-exclude-cidrs`: other programs' virtual servers in these CIDRs are never deleted by a sync (`cleanup()` still flushes all of IPVS, as `kube-proxy --cleanup`). @default none */
  readonly excludeCIDRs?: readonly string[];
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

interface FamilyState {
  readonly family: IPFamily;
  readonly options: IpvsFamilyOptions;
  readonly reconciler: IpvsReconciler;
  jumpsEnsured: boolean;
}

/**
 * kube-proxy's IPVS mode behind proxy-state's `DataPlaneBackend` interface: the proxier's sync
 * loop decides full vs partial. IPVS itself is always reconciled against what the kernel
 * holds; a full sync also re-ensures the jump rules into the residual iptables chains (and
 * does so on its own when they were never ensured, or a sync failed).
 */
export class IpvsBackend implements DataPlaneBackend {
  /** @inheritdoc */
  readonly name = 'ipvs';
  /** @inheritdoc */
  readonly families: readonly IPFamily[];
  readonly #options: IpvsBackendOptions;
  readonly #state: FamilyState[];

  /** @param options - One executor per family. @throws TypeError when no family is configured. */
  constructor(options: IpvsBackendOptions) {
    this.#options = options;
    const clock: Clock = options.clock ?? realClock;
    const log = (options.logger ?? noopLogger).child({ backend: 'ipvs' });
    this.#state = configuredFamilies('IpvsBackend', options).map(([family, o]) => ({
      family,
      options: o,
      jumpsEnsured: false,
      reconciler: new IpvsReconciler({
        executor: o.executor,
        clock,
        logger: log.child({ ipFamily: family }),
        ipFamily: family,
        ...(o.stats ? { stats: o.stats } : {}),
        ...definedFields({ checkIntervalMs: options.checkIntervalMs, excludeCIDRs: options.excludeCIDRs }),
        ...(options.gracefulTimeoutMs !== undefined ? { gracefulTimeoutMs: options.gracefulTimeoutMs } : {}),
      }),
    }));
    this.families = this.#state.map((s) => s.family);
  }

  /** @inheritdoc */
  async sync(checkout: ProxyCheckout, options: BackendSyncOptions): Promise<BackendSyncResult> {
    const families: FamilySyncResult[] = [];
    for (const st of this.#state) {
      families.push(await this.#syncFamily(st, st.family === 4 ? checkout.v4 : checkout.v6, options.full));
    }
    return { families };
  }

  async #syncFamily(st: FamilyState, snapshot: ProxySnapshot, requested: boolean): Promise<FamilySyncResult> {
    // The caller decides; the reconciler diffs against what the kernel holds either way, and
    // jump rules never ensured (first sync, after a failure) make the sync full.
    const full = requested || !st.jumpsEnsured;
    try {
      const plan = planIpvs(snapshot, this.#options.plan ?? {});
      await st.reconciler.sync(plan);
      let bytes = 0;
      const ipt = st.options.iptables;
      if (ipt) {
        if (full) await ipt.ensureJumps(ipvsJumpRules());
        const text = renderResidualIptables(plan.iptables);
        bytes = Buffer.byteLength(text);
        await ipt.restore(text, { noflush: true, counters: true });
      }
      st.jumpsEnsured = true;
      const count = (t: string) => plan.iptables.rules.filter((x) => x.table === t).length;
      return {
        family: st.family,
        full,
        bytes,
        ...(ipt ? { iptablesRules: { filter: count('filter'), nat: count('nat') } } : {}),
        skipped: plan.errors,
      };
    } catch (error) {
      st.jumpsEnsured = false;
      return { family: st.family, full, error, failureKind: 'ipvs' };
    }
  }

  /** @inheritdoc */
  async cleanup(): Promise<void> {
    const owned = new Set([...IPVS_FILTER_CHAINS, ...IPVS_NAT_CHAINS]);
    for (const st of this.#state) {
      if (st.options.iptables) {
        await removeOwnedIptablesChains(st.options.iptables, ['filter', 'nat'], (c) => owned.has(c));
      }
      await st.reconciler.sync({ virtualServers: [], boundAddresses: [], ipsets: [] });
      // kube-proxy's CleanupLeftovers flushes all of IPVS, excluded CIDRs included.
      const left = (await st.options.executor.read()).virtualServers;
      await st.options.executor.apply(
        left.map((v) => ({
          kind: 'delete-virtual-server' as const,
          virtualServer: { address: v.address, port: v.port, protocol: v.protocol },
        })),
      );
      const ours = new Set(IPSET_DEFINITIONS.map((d) => ipsetName(d.baseName, st.family)));
      const present = (await st.options.executor.read()).ipsets.filter((s) => ours.has(s.name));
      await st.options.executor.apply(present.map((s) => ({ kind: 'destroy-ipset' as const, name: s.name })));
      st.jumpsEnsured = false;
    }
  }

  /** @inheritdoc */
  close(): void {
    for (const st of this.#state) st.reconciler.close();
  }
}

/**
 * The iptables backend (kube-proxy's iptables mode behind proxy-state's
 * `DataPlaneBackend`): one syncer per IP family (iptables-restore for
 * IPv4, ip6tables-restore for IPv6), created on the first sync so the renderer knows the
 * node's IP from the snapshot. After a family's first successful sync a `CanaryMonitor`
 * watches its `KUBE-PROXY-CANARY` chains; when another program flushes the tables the
 * canary vanishes and the backend asks the proxier for a full sync, as kube-proxy does.
 *
 * @module
 */
import { type Clock, definedFields, type Logger, noopLogger, realClock } from '@nodeagent/core';
import {
  type BackendHost,
  type BackendSyncOptions,
  type BackendSyncResult,
  configuredFamilies,
  type DataPlaneBackend,
  type FamilySyncResult,
  type IPFamily,
  type ProxyCheckout,
  type ProxySnapshot,
} from '@nodeagent/proxy-state';
import { CanaryMonitor } from './canary-monitor.js';
import {
  isServiceChainName,
  KUBE_EXTERNAL_SERVICES,
  KUBE_FIREWALL,
  KUBE_FORWARD,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_CANARY,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
} from './chain-names.js';
import { removeOwnedIptablesChains } from './cleanup.js';
import type { IptablesExecutor } from './executor.js';
import { IptablesSyncer } from './iptables-syncer.js';
import { snapshotRenderOptions } from './render-iptables.js';
import type { IptablesRenderOptions } from './render-options.js';
import { SnapshotAdapter } from './snapshot-input.js';
import type { IptablesSyncPlannerOptions } from './sync-planner.js';

/** One family of an {@link IptablesBackend}. */
export interface IptablesFamilyOptions {
  /** Where this family's rules go (`SpawnIptablesExecutor({ family })` or the fake). Its `family` must match. */
  readonly executor: IptablesExecutor;
  /**
   * Renderer options; `ipFamily` and (unless set) `nodeIP` come from the snapshot.
   * @default {}
   */
  readonly render?: IptablesRenderOptions;
}

/** Options of {@link IptablesBackend}. */
export interface IptablesBackendOptions
  extends Pick<
    IptablesSyncPlannerOptions,
    'fullSyncMode' | 'maxRulesPerChunk' | 'skipUnchangedSharedChains'
  > {
  /** The IPv4 side (`iptables`); leave out on IPv6-only nodes. */
  readonly ipv4?: IptablesFamilyOptions;
  /** The IPv6 side (`ip6tables`); leave out on IPv4-only nodes. */
  readonly ipv6?: IptablesFamilyOptions;
  /**
   * The canary monitor (`KUBE-PROXY-CANARY` in mangle, nat and filter, polled every
   * `intervalMs`, kube-proxy polls every `syncPeriod`); `false` turns it off. A missing canary
   * makes the family's next sync full and, under a proxier, queues that sync at once.
   * @default { intervalMs: 30000 }
   */
  readonly canary?: false | { readonly intervalMs?: number };
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** The chains kube-proxy's iptables mode owns besides the per-service ones. */
const OWNED_CHAINS = new Set([
  KUBE_SERVICES,
  KUBE_EXTERNAL_SERVICES,
  KUBE_FORWARD,
  KUBE_NODEPORTS,
  KUBE_PROXY_FIREWALL,
  KUBE_POSTROUTING,
  KUBE_MARK_MASQ,
  KUBE_PROXY_CANARY,
  KUBE_FIREWALL,
]);

interface FamilyState {
  readonly family: IPFamily;
  readonly options: IptablesFamilyOptions;
  syncer: IptablesSyncer | undefined;
  nodeIP: string | undefined;
  readonly adapter: SnapshotAdapter;
  /** Started after the first successful sync; stopped by cleanup() and close(). */
  canary: CanaryMonitor | undefined;
}

/**
 * kube-proxy's iptables mode behind proxy-state's `DataPlaneBackend` interface: the proxier's
 * sync loop decides full vs partial; this backend only plans partial syncs (and plans a full
 * one instead when it has no baseline, see `FullSyncReason`).
 */
export class IptablesBackend implements DataPlaneBackend {
  /** @inheritdoc */
  readonly name = 'iptables';
  /** @inheritdoc */
  readonly families: readonly IPFamily[];
  readonly #options: IptablesBackendOptions;
  readonly #state: FamilyState[];
  readonly #clock: Clock;
  readonly #log: Logger;
  #host: BackendHost | undefined;
  #closed = false;

  /** @param options - One executor per family. @throws TypeError when no family is configured. */
  constructor(options: IptablesBackendOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ backend: 'iptables' });
    this.#state = configuredFamilies('IptablesBackend', options).map(([family, o]) => ({
      family,
      options: o,
      syncer: undefined,
      nodeIP: undefined,
      adapter: new SnapshotAdapter(),
      canary: undefined,
    }));
    this.families = this.#state.map((s) => s.family);
  }

  /** @inheritdoc */
  attach(host: BackendHost): void {
    this.#host = host;
  }

  /** The syncer of a family once created (after the first sync), for inspection. */
  syncer(family: IPFamily): IptablesSyncer | undefined {
    return this.#state.find((s) => s.family === family)?.syncer;
  }

  /** @inheritdoc */
  async sync(checkout: ProxyCheckout, options: BackendSyncOptions): Promise<BackendSyncResult> {
    const families: FamilySyncResult[] = [];
    for (const st of this.#state) {
      families.push(await this.#syncFamily(st, st.family === 4 ? checkout.v4 : checkout.v6, options.full));
    }
    return { families };
  }

  #syncerFor(st: FamilyState, snapshot: ProxySnapshot): IptablesSyncer {
    const render = snapshotRenderOptions(snapshot, st.options.render ?? {});
    if (st.syncer && render.nodeIP === st.nodeIP) return st.syncer;
    const previous = st.syncer;
    const o = this.#options;
    st.syncer = new IptablesSyncer({
      executor: st.options.executor,
      render,
      clock: this.#clock,
      logger: this.#log.child({ ipFamily: st.family }),
      ...definedFields({ fullSyncMode: o.fullSyncMode }),
      ...definedFields({ maxRulesPerChunk: o.maxRulesPerChunk }),
      ...(o.skipUnchangedSharedChains !== undefined
        ? { skipUnchangedSharedChains: o.skipUnchangedSharedChains }
        : {}),
    });
    // The node IP is baked into the renderer: a new one means a new syncer, which must still
    // delete the chains the old one created.
    if (previous) st.syncer.planner.seedExistingChains(previous.planner.knownChains());
    st.nodeIP = render.nodeIP;
    return st.syncer;
  }

  async #syncFamily(st: FamilyState, snapshot: ProxySnapshot, requested: boolean): Promise<FamilySyncResult> {
    const syncer = this.#syncerFor(st, snapshot);
    // The caller decides; without a baseline the planner makes it full (and says why).
    const full = requested || syncer.planner.noBaseline !== undefined;
    try {
      const r = await syncer.sync(st.adapter.servicePorts(snapshot), snapshot.changedServices, { full });
      await this.#startCanary(st);
      return {
        family: st.family,
        full: r.full,
        bytes: r.bytes,
        iptablesRules: { filter: r.ruleCounts.filter, nat: r.ruleCounts.nat },
        iptablesRulesWritten: { filter: r.writtenRuleCounts.filter, nat: r.writtenRuleCounts.nat },
        noLocalEndpoints: r.noLocalEndpoints,
        skipped: r.errors,
      };
    } catch (error) {
      return { family: st.family, full, error, failureKind: 'iptables' };
    }
  }

  /** Creates the canaries and starts polling once, after the family's first successful sync. */
  async #startCanary(st: FamilyState): Promise<void> {
    const o = this.#options.canary;
    if (o === false || st.canary || this.#closed) return;
    const log = this.#log.child({ ipFamily: st.family });
    const monitor = new CanaryMonitor({
      executor: st.options.executor,
      clock: this.#clock,
      logger: log,
      ...definedFields({ intervalMs: o?.intervalMs }),
      onFlush: () => {
        // The tables were flushed under us: our chains and jump rules are likely gone too, so
        // there is no baseline for a partial sync; the sync loop is asked for a full one.
        st.syncer?.planner.baselineLost();
        log.warn({}, 'iptables canary vanished (tables flushed); requesting a full sync');
        this.#host?.requestFullSync(`iptables canary missing (IPv${st.family})`);
      },
    });
    st.canary = monitor;
    try {
      await monitor.start();
    } catch (err) {
      // The rules are in place; only the watch is missing. Retried after the next sync.
      st.canary = undefined;
      log.warn({ err }, 'could not create the iptables canary chains; retrying after the next sync');
    }
  }

  /** @inheritdoc */
  close(): void {
    this.#closed = true;
    for (const st of this.#state) {
      void st.canary?.stop();
      st.canary = undefined;
    }
  }

  /** @inheritdoc */
  async cleanup(): Promise<void> {
    for (const st of this.#state) {
      // Stop watching first: removing our chains removes the canary too.
      await st.canary?.stop();
      st.canary = undefined;
      await removeOwnedIptablesChains(
        st.options.executor,
        ['filter', 'nat', 'mangle'],
        (c) => OWNED_CHAINS.has(c) || isServiceChainName(c),
      );
      st.syncer = undefined;
      st.nodeIP = undefined;
    }
  }
}

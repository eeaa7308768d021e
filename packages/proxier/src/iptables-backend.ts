/**
 * The iptables backend: one `@nodeagent/iptables` syncer per IP family (iptables-restore for
 * IPv4, ip6tables-restore for IPv6), created on the first sync so the renderer knows the
 * node's IP from the snapshot.
 *
 * @module
 */
import { type Clock, type Logger, noopLogger, realClock } from '@nodeagent/core';
import {
  type IptablesExecutor,
  type IptablesRenderOptions,
  IptablesSyncer,
  type IptablesSyncPlannerOptions,
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
  SnapshotAdapter,
  snapshotRenderOptions,
} from '@nodeagent/iptables';
import type { IPFamily, ProxyCheckout, ProxySnapshot } from '@nodeagent/proxy-state';
import type { Backend, BackendSyncOptions, BackendSyncResult, FamilySyncResult } from './backend.js';
import { removeOwnedIptablesChains } from './iptables-cleanup.js';

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
}

/** kube-proxy's iptables mode behind the {@link Backend} interface. */
export class IptablesBackend implements Backend {
  /** @inheritdoc */
  readonly name = 'iptables';
  /** @inheritdoc */
  readonly families: readonly IPFamily[];
  readonly #options: IptablesBackendOptions;
  readonly #state: FamilyState[];
  readonly #clock: Clock;
  readonly #log: Logger;

  /** @param options - One executor per family. @throws TypeError when no family is configured. */
  constructor(options: IptablesBackendOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ backend: 'iptables' });
    const fams: [IPFamily, IptablesFamilyOptions | undefined][] = [
      [4, options.ipv4],
      [6, options.ipv6],
    ];
    this.#state = fams
      .filter((f): f is [IPFamily, IptablesFamilyOptions] => f[1] !== undefined)
      .map(([family, o]) => ({
        family,
        options: o,
        syncer: undefined,
        nodeIP: undefined,
        adapter: new SnapshotAdapter(),
      }));
    if (this.#state.length === 0) throw new TypeError('IptablesBackend needs ipv4 and/or ipv6 options');
    this.families = this.#state.map((s) => s.family);
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
      ...(o.fullSyncMode !== undefined ? { fullSyncMode: o.fullSyncMode } : {}),
      ...(o.maxRulesPerChunk !== undefined ? { maxRulesPerChunk: o.maxRulesPerChunk } : {}),
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

  async #syncFamily(st: FamilyState, snapshot: ProxySnapshot, forceFull: boolean): Promise<FamilySyncResult> {
    const syncer = this.#syncerFor(st, snapshot);
    const full = forceFull || snapshot.fullSyncRequired || syncer.planner.fullSyncReason !== undefined;
    try {
      const r = await syncer.sync(st.adapter.servicePorts(snapshot), snapshot.changedServices, full);
      return {
        family: st.family,
        full: r.full,
        bytes: r.bytes,
        iptablesRules: { filter: r.ruleCounts.filter, nat: r.ruleCounts.nat },
        noLocalEndpoints: r.noLocalEndpoints,
        skipped: r.errors,
      };
    } catch (error) {
      return { family: st.family, full, error, failureKind: 'iptables' };
    }
  }

  /** @inheritdoc */
  async cleanup(): Promise<void> {
    for (const st of this.#state) {
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

/**
 * One sync step for the proxier's loop: plan (full or partial, as the caller decides), ensure
 * jump rules on full syncs, apply the payloads in order, and record the outcome in the planner.
 *
 * @module
 */
import { type Clock, type Logger, noopLogger, realClock } from '@nodeagent/core';
import type { InvalidServicePortError, ProxySnapshot } from '@nodeagent/proxy-state';
import { KUBE_MARK_MASQ } from './chain-names.js';
import { type IptablesExecutor, type JumpRule, kubeProxyJumpRules } from './executor.js';
import { IptablesRenderer } from './render.js';
import type { IptablesRenderOptions } from './render-options.js';
import type { IptablesServicePort } from './service-port.js';
import { SnapshotAdapter, snapshotFamily } from './snapshot-input.js';
import {
  type FullSyncReason,
  IptablesSyncPlanner,
  type IptablesSyncPlannerOptions,
  type SyncPlan,
} from './sync-planner.js';

/** How a caller asks an {@link IptablesSyncer} to sync. */
export interface IptablesSyncOptions {
  /**
   * Rewrite every chain (the caller's policy: the proxier's sync loop decides). A partial sync
   * is planned otherwise, unless the planner has no baseline (the first sync, after a failure,
   * after the tables were flushed), which makes it full: see `IptablesSyncResult.fullReason`.
   * @default false
   */
  readonly full?: boolean;
}

/** Options of {@link IptablesSyncer}. */
export interface IptablesSyncerOptions extends IptablesSyncPlannerOptions {
  /** Where the rules go. */
  readonly executor: IptablesExecutor;
  /** Renderer options (family, detector, mark, ...). */
  readonly render?: IptablesRenderOptions;
  /**
   * Jump rules ensured before every full sync.
   * @default kubeProxyJumpRules(localhost node ports enabled for IPv4)
   */
  readonly jumpRules?: readonly JumpRule[];
  /** Time source (`durationMs`). @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** What one sync did. */
export interface IptablesSyncResult {
  /** True for a full sync. */
  readonly full: boolean;
  /** Why it was full. */
  readonly fullReason: FullSyncReason | undefined;
  /** Bytes written to iptables-restore. */
  readonly bytes: number;
  /** Number of restore calls. */
  readonly restoreCalls: number;
  /** Stale chains deleted. */
  readonly deletedChains: number;
  /** Rules per table after the sync (for `sync_proxy_rules_iptables_total{table}`). */
  readonly ruleCounts: { readonly filter: number; readonly nat: number };
  /** Ports dropping traffic for lack of local endpoints (`sync_proxy_rules_no_local_endpoints_total`). */
  readonly noLocalEndpoints: { readonly internal: number; readonly external: number };
  /**
   * Rules written by this sync per table: the `-A` lines of its restore payloads (for
   * `sync_proxy_rules_iptables_last{table}`; a partial sync writes only what changed).
   */
  readonly writtenRuleCounts: { readonly filter: number; readonly nat: number };
  /** False when a partial sync left the unchanged shared chains out. */
  readonly sharedChainsWritten: boolean;
  /** Wall time in milliseconds. */
  readonly durationMs: number;
  /** Service ports skipped because of bad input. */
  readonly errors: readonly InvalidServicePortError[];
}

/** The `-A` lines per table of iptables-restore payloads. */
export function countWrittenRules(payloads: readonly string[]): { filter: number; nat: number } {
  const out = { filter: 0, nat: 0 };
  for (const payload of payloads) {
    let table = '';
    for (const line of payload.split('\n')) {
      if (line.startsWith('*')) table = line.slice(1).trim();
      else if (line.startsWith('-A ') && (table === 'filter' || table === 'nat')) out[table]++;
    }
  }
  return out;
}

/**
 * Applies rulesets through an executor: full or partial as the caller asks (see
 * {@link IptablesSyncPlanner}). Not re-entrant: the caller's loop serialises calls.
 */
export class IptablesSyncer {
  /** The planner (known chains, the baseline partial syncs are computed against). */
  readonly planner: IptablesSyncPlanner;
  /** The renderer. */
  readonly renderer: IptablesRenderer;
  readonly #executor: IptablesExecutor;
  readonly #jumps: readonly JumpRule[];
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #adapter = new SnapshotAdapter();
  #seeded = false;

  /** @param options executor, renderer options and policy. */
  constructor(options: IptablesSyncerOptions) {
    this.#executor = options.executor;
    this.renderer = new IptablesRenderer(options.render ?? {});
    this.planner = new IptablesSyncPlanner(this.renderer, options);
    this.#jumps = options.jumpRules ?? kubeProxyJumpRules(this.renderer.options.localhostNodePorts);
    this.#log = options.logger ?? noopLogger;
    this.#clock = options.clock ?? realClock;
  }

  /**
   * Syncs `servicePorts`; `changedServices` are the service keys changed since the last
   * successful sync. @throws the executor's error after recording the failure.
   */
  async sync(
    servicePorts: Iterable<IptablesServicePort>,
    changedServices: ReadonlySet<string>,
    options: IptablesSyncOptions = {},
  ): Promise<IptablesSyncResult> {
    return this.#sync(this.planner, servicePorts, changedServices, options.full ?? false);
  }

  /**
   * Syncs a proxy-state snapshot (its `changedServices`). The snapshot's `fullSyncRequired` is
   * an input to the caller's decision, not read here: pass `{ full: snapshot.fullSyncRequired }`
   * to honour it. @throws TypeError if the snapshot's family differs from the renderer's.
   */
  async syncSnapshot(
    snapshot: ProxySnapshot,
    options: IptablesSyncOptions = {},
  ): Promise<IptablesSyncResult> {
    if (snapshotFamily(snapshot) !== this.renderer.options.ipFamily) {
      throw new TypeError(
        `snapshot is ${snapshotFamily(snapshot)} but this syncer renders ${this.renderer.options.ipFamily}`,
      );
    }
    const ports = this.#adapter.servicePorts(snapshot);
    return this.#sync(this.planner, ports, snapshot.changedServices, options.full ?? false);
  }

  /** Applies a plan's payloads in order; reports how many were applied before an error. */
  async #apply(plan: SyncPlan): Promise<{ payloads: number; error?: unknown }> {
    let payloads = 0;
    try {
      if (plan.full) await this.#executor.ensureJumps(this.#jumps);
      // Early payloads of a chunked sync jump to KUBE-MARK-MASQ before the last one writes it.
      if (plan.payloads.length > 1) await this.#executor.ensureChain('nat', KUBE_MARK_MASQ);
      for (const payload of plan.payloads) {
        await this.#executor.restore(payload, { noflush: true, counters: true });
        payloads++;
      }
      return { payloads };
    } catch (error) {
      return { payloads, error };
    }
  }

  async #sync(
    planner: IptablesSyncPlanner,
    servicePorts: Iterable<IptablesServicePort>,
    changed: ReadonlySet<string>,
    full: boolean,
  ): Promise<IptablesSyncResult> {
    const ports = [...servicePorts];
    const start = this.#clock.now();
    if (!this.#seeded && planner.noBaseline === 'initial') {
      // A previous process may have left chains the old dispatch still reaches: learn them (as
      // kube-proxy reads iptables-save) so the make-before-break order loads early only those
      // that already hold what this sync writes, switches the others with the dispatch, and
      // deletes the stale ones.
      planner.seedExistingRules(await this.#executor.save('nat'));
      this.#seeded = true;
    }
    let plan = planner.plan(ports, changed, full);
    let retried = false;
    for (;;) {
      const applied = await this.#apply(plan);
      if (applied.error === undefined) break;
      planner.failed(plan, applied.payloads);
      // A chunked full sync that failed at any payload: retry the full sync at once, once
      // (the planner knows which payloads were applied; nothing was switched half-way).
      if (!retried && plan.full && planner.chunked) {
        retried = true;
        this.#log.warn(
          { err: applied.error, appliedPayloads: applied.payloads, payloads: plan.payloads.length },
          'iptables chunked full sync failed; retrying the full sync at once',
        );
        plan = planner.plan(ports, changed, true);
        continue;
      }
      this.#log.error({ err: applied.error, full: plan.full }, 'iptables sync failed; next sync is full');
      throw applied.error;
    }
    planner.succeeded(plan);
    const result: IptablesSyncResult = {
      full: plan.full,
      fullReason: plan.fullReason,
      bytes: plan.bytes,
      restoreCalls: plan.payloads.length,
      deletedChains: plan.staleChains.length,
      ruleCounts: plan.ruleCounts,
      noLocalEndpoints: plan.noLocalEndpoints,
      writtenRuleCounts: countWrittenRules(plan.payloads),
      sharedChainsWritten: plan.sharedChainsWritten,
      durationMs: this.#clock.now() - start,
      errors: plan.ruleset.errors,
    };
    for (const e of result.errors) this.#log.warn({ servicePort: e.servicePortName }, e.message);
    this.#log.debug({ ...result, errors: result.errors.length }, 'iptables sync done');
    return result;
  }
}

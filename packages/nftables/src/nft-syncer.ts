/**
 * One sync step for the proxier's loop: render the snapshot, plan ONE transaction (full or
 * partial, as the caller decides) against the mirror, apply it, and keep the mirror on
 * success. A failure forgets the mirror, so the next sync is full (a partial one has nothing
 * to diff against).
 *
 * @module
 */
import { type Clock, type Logger, noopLogger, realClock } from '@nodeagent/core';
import type { InvalidServicePortError, ProxySnapshot } from '@nodeagent/proxy-state';
import type { NftExecutor } from './executor.js';
import type { NftRenderOptions } from './render-options.js';
import { NftRenderer } from './renderer.js';
import { NftSyncPlanner, type NftSyncPlannerOptions } from './sync-planner.js';

/** How a caller asks an {@link NftSyncer} to sync. */
export interface NftSyncOptions {
  /**
   * Rewrite the whole table (the caller's policy: the proxier's sync loop decides). A partial
   * sync is planned otherwise, unless the mirror is missing (the first sync, after a failure),
   * which makes it full and lists the kernel table first.
   * @default false
   */
  readonly full?: boolean;
  /**
   * Let a partial sync also delete the stale chains whose delay has passed (in the same
   * transaction). False leaves them to {@link NftSyncer.cleanup} (`NftablesBackend` passes false
   * after running the cleanup as a transaction of its own, so chains that became due in
   * between do not cost a second nft call). Full syncs always delete them.
   * @default true
   */
  readonly deleteStaleChains?: boolean;
}

/** Options of {@link NftSyncer}. */
export interface NftSyncerOptions extends NftSyncPlannerOptions {
  /** Where the transactions go. */
  readonly executor: NftExecutor;
  /** Renderer options (layout, detector, mark, ...); the family must match the snapshots. */
  readonly render?: NftRenderOptions;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** What one sync did. */
export interface NftSyncResult {
  /** Full or partial. */
  readonly full: boolean;
  /** Bytes written to nft (0 when nothing changed and nft was not called). */
  readonly bytes: number;
  /** Command lines in the transaction. */
  readonly lines: number;
  /** Service ports whose chains were rewritten. */
  readonly rewrittenPorts: number;
  /** Element add/delete commands. */
  readonly elementChanges: number;
  /** Chains flushed as stale by this sync. */
  readonly staleChains: readonly string[];
  /** Stale chains deleted by this sync. */
  readonly deletedChains: readonly string[];
  /** Wall time in milliseconds (clock). */
  readonly durationMs: number;
  /** Ports skipped for bad input. */
  readonly errors: readonly InvalidServicePortError[];
}

/** Applies snapshots through an executor. Not re-entrant: the caller's loop serialises calls. */
export class NftSyncer {
  /** The renderer. */
  readonly renderer: NftRenderer;
  /** The planner holding the mirror. */
  readonly planner: NftSyncPlanner;
  readonly #executor: NftExecutor;
  readonly #clock: Clock;
  readonly #log: Logger;

  /** @param options executor, renderer options, policy. */
  constructor(options: NftSyncerOptions) {
    this.renderer = new NftRenderer(options.render);
    this.planner = new NftSyncPlanner(options);
    this.#executor = options.executor;
    this.#clock = options.clock ?? realClock;
    this.#log = options.logger ?? noopLogger;
  }

  /**
   * Syncs a snapshot: full when the caller asks (`options.full`) or when there is no mirror to
   * diff against (the first call, after a failure); partial otherwise. The snapshot's
   * `fullSyncRequired` is an input to the caller's decision, not read here.
   * @throws the executor's error
   */
  async sync(snapshot: ProxySnapshot, options: NftSyncOptions = {}): Promise<NftSyncResult> {
    const start = this.#clock.now();
    const { ruleset, errors } = this.renderer.render(snapshot);
    const full = (options.full ?? false) || this.planner.needsFull;
    let plan: ReturnType<NftSyncPlanner['planFull']>;
    try {
      if (full) {
        const existing = this.planner.needsFull
          ? await this.#executor.listObjects(ruleset.family, ruleset.table)
          : undefined;
        plan = this.planner.planFull(ruleset, start, existing);
      } else {
        plan = this.planner.planPartial(
          ruleset,
          start,
          snapshot.changedServices,
          options.deleteStaleChains ?? true,
        );
      }
      if (plan.text !== '') await this.#executor.apply(plan.text);
    } catch (err) {
      this.planner.invalidate();
      this.#log.error({ err, full }, 'nftables sync failed; next sync is full');
      throw err;
    }
    plan.commit();
    for (const e of errors)
      this.#log.warn({ servicePort: e.servicePortName, problems: e.problems }, e.message);
    const result: NftSyncResult = {
      full,
      bytes: Buffer.byteLength(plan.text),
      lines: plan.lines,
      rewrittenPorts: plan.rewrittenPorts,
      elementChanges: plan.elementChanges,
      staleChains: plan.staleChains,
      deletedChains: plan.deletedChains,
      durationMs: this.#clock.now() - start,
      errors,
    };
    this.#log.debug({ ...result, errors: errors.length }, 'nftables sync done');
    return result;
  }

  /** Clock time at which stale chains become deletable, if any (schedule {@link cleanup} then). */
  nextCleanupAt(): number | undefined {
    return this.planner.nextCleanupAt();
  }

  /** Deletes stale chains whose delay has passed, in their own transaction; returns their names. */
  async cleanup(): Promise<readonly string[]> {
    const o = this.renderer.options;
    const plan = this.planner.planCleanup({ family: o.family, table: o.table }, this.#clock.now());
    if (plan.text === '') return [];
    try {
      await this.#executor.apply(plan.text);
    } catch (err) {
      this.planner.invalidate();
      throw err;
    }
    plan.commit();
    return plan.deletedChains;
  }
}

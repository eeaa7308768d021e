/**
 * Keeps a kernel's IPVS state equal to the latest plan: each sync reads the current state and
 * connection counts, diffs, and applies. Real servers that still carry connections drain at
 * weight 0 and are re-checked every `checkIntervalMs` (kube-proxy: one minute) until they can
 * be deleted.
 *
 * @module
 */
import {
  type Clock,
  definedFields,
  InvalidOptionsError,
  type Logger,
  noopLogger,
  parseCIDR,
  realClock,
  type Timer,
} from '@nodeagent/core';
import { type ConnectionCounts, type DiffIpvsOptions, diffIpvs, type TerminatingRealServer } from './diff.js';
import type { IpvsExecutor, IpvsStatsSource } from './executor.js';
import type { IpvsState } from './model.js';
import type { IpvsOperation } from './operations.js';

/** Options of {@link IpvsReconciler}. */
export interface IpvsReconcilerOptions {
  /** Reads and changes the kernel state. */
  readonly executor: IpvsExecutor;
  /**
   * Connection counts for graceful termination.
   * @default none: removed real servers are deleted at once
   */
  readonly stats?: IpvsStatsSource;
  /**
   * Time and timers.
   * @default realClock
   */
  readonly clock?: Clock;
  /**
   * Logger.
   * @default noopLogger
   */
  readonly logger?: Logger;
  /**
   * How often draining real servers are re-checked (kube-proxy's `rsCheckDeleteInterval`).
   * @default 60000
   */
  readonly checkIntervalMs?: number;
  /**
   * Delete a draining real server after this long even with connections left.
   * @default Infinity (kube-proxy waits for the connections to end)
   */
  readonly gracefulTimeoutMs?: number;
  /**
   * Only manage this family's virtual servers and addresses (dual-stack nodes run two reconcilers).
   * @default undefined (everything)
   */
  readonly ipFamily?: 4 | 6;
  /**
   * `--ipvs-exclude-cidrs`: virtual servers in these CIDRs that no plan has are never deleted
   * (other programs' IPVS services), see {@link DiffIpvsOptions.excludeCIDRs}.
   * @default none
   */
  readonly excludeCIDRs?: readonly string[];
}

/** What one sync did. */
export interface IpvsSyncResult {
  /** The operations applied. */
  readonly operations: readonly IpvsOperation[];
  /** Real servers draining afterwards. */
  readonly terminating: readonly TerminatingRealServer[];
}

/** Applies plans incrementally, with graceful termination. Call {@link IpvsReconciler.close} when done. */
export class IpvsReconciler {
  readonly #executor: IpvsExecutor;
  readonly #stats: IpvsStatsSource | undefined;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  readonly #family: 4 | 6 | undefined;
  readonly #excludeCIDRs: readonly string[];
  #terminating: ReadonlyMap<string, TerminatingRealServer> = new Map();
  #desired: IpvsState | undefined;
  #timer: Timer | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #closed = false;

  /** @param options executor, stats, clock, intervals. */
  constructor(options: IpvsReconcilerOptions) {
    this.#executor = options.executor;
    this.#stats = options.stats;
    this.#clock = options.clock ?? realClock;
    this.#log = options.logger ?? noopLogger;
    this.#intervalMs = options.checkIntervalMs ?? 60_000;
    this.#timeoutMs = options.gracefulTimeoutMs ?? Number.POSITIVE_INFINITY;
    this.#family = options.ipFamily;
    if (!(this.#intervalMs > 0)) throw new RangeError(`checkIntervalMs ${this.#intervalMs} must be positive`);
    this.#excludeCIDRs = (options.excludeCIDRs ?? []).map((c, i) => {
      const parsed = parseCIDR(String(c).trim());
      if (!parsed) {
        throw new InvalidOptionsError(
          'IpvsReconciler',
          `excludeCIDRs[${i}]: ${JSON.stringify(c)} must be a valid CIDR`,
        );
      }
      return parsed.cidr;
    });
  }

  /** Real servers currently draining. */
  get terminating(): readonly TerminatingRealServer[] {
    return [...this.#terminating.values()];
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(fn, fn);
    this.#chain = next.catch(() => {});
    return next;
  }

  async #connections(): Promise<ReadonlyMap<string, ConnectionCounts>> {
    return this.#stats ? this.#stats.readConnections() : new Map();
  }

  async #diff(desired: IpvsState) {
    const [current, connections] = await Promise.all([this.#executor.read(), this.#connections()]);
    const options: DiffIpvsOptions = {
      terminating: this.#terminating,
      connections,
      nowMs: this.#clock.now(),
      gracefulTimeoutMs: this.#timeoutMs,
      excludeCIDRs: this.#excludeCIDRs,
      ...definedFields({ ipFamily: this.#family }),
    };
    return diffIpvs(current, desired, options);
  }

  /**
   * Makes the kernel match `desired`. On failure the draining queue is kept as it was, and the
   * next sync recomputes everything from the kernel's state.
   */
  sync(desired: IpvsState): Promise<IpvsSyncResult> {
    return this.#serial(async () => {
      if (this.#closed) throw new Error('IpvsReconciler is closed');
      this.#desired = desired;
      const diff = await this.#diff(desired);
      await this.#executor.apply(diff.operations);
      this.#terminating = diff.terminating;
      this.#schedule();
      return { operations: diff.operations, terminating: this.terminating };
    });
  }

  /**
   * Deletes draining real servers whose connections have ended (or whose timeout passed); runs
   * by itself every `checkIntervalMs` while any are draining. Returns the operations applied.
   */
  checkTerminating(): Promise<readonly IpvsOperation[]> {
    return this.#serial(async () => {
      const desired = this.#desired;
      if (this.#closed || desired === undefined || this.#terminating.size === 0) return [];
      const before = this.#terminating;
      const diff = await this.#diff(desired);
      // Only finish draining here; everything else waits for the next sync.
      const ops = diff.operations.filter(
        (o) =>
          o.kind === 'delete-real-server' &&
          [...before.values()].some(
            (t) =>
              t.virtualServer.address === o.virtualServer.address &&
              t.virtualServer.port === o.virtualServer.port &&
              t.virtualServer.protocol === o.virtualServer.protocol &&
              t.realServer.address === o.realServer.address &&
              t.realServer.port === o.realServer.port,
          ),
      );
      await this.#executor.apply(ops);
      const left = new Map<string, TerminatingRealServer>();
      for (const [k, t] of before) if (diff.terminating.has(k)) left.set(k, t);
      this.#terminating = left;
      if (ops.length > 0)
        this.#log.info({ deleted: ops.length, draining: left.size }, 'drained IPVS real servers deleted');
      this.#schedule();
      return ops;
    });
  }

  #schedule(): void {
    if (this.#closed || this.#timer !== undefined || this.#terminating.size === 0) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.checkTerminating().catch((e: unknown) => {
        this.#log.warn({ err: e }, 'checking draining IPVS real servers failed');
        this.#schedule();
      });
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops the periodic check. Further syncs are refused. */
  close(): void {
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
  }
}

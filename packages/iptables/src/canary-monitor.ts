/**
 * kube-proxy's canary: an empty `KUBE-PROXY-CANARY` chain in mangle, nat and filter. When
 * another program flushes iptables the canary disappears, which tells us to run a full
 * sync (our jump rules and chains are gone too).
 *
 * @module
 */
import {
  type Clock,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { KUBE_PROXY_CANARY } from './chain-names.js';
import type { IptablesExecutor } from './executor.js';

/** Options of {@link CanaryMonitor}. */
export interface CanaryMonitorOptions {
  /** The executor to poll with. */
  readonly executor: IptablesExecutor;
  /** Called once per detected flush, after the canaries were recreated. */
  readonly onFlush: () => void;
  /**
   * Poll period (kube-proxy uses its `syncPeriod`).
   * @default 30_000
   */
  readonly intervalMs?: number;
  /**
   * Tables holding a canary, checked in order.
   * @default ['mangle', 'nat', 'filter']
   */
  readonly tables?: readonly string[];
  /** @default 'KUBE-PROXY-CANARY' */
  readonly chain?: string;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** Polls the canary chains and reports flushes. Nothing runs until {@link start}. */
export class CanaryMonitor implements Lifecycle {
  readonly #o: Required<Omit<CanaryMonitorOptions, 'logger' | 'clock'>> & { clock: Clock; logger: Logger };
  readonly #once = new StartOnce('CanaryMonitor');
  #timer: Timer | undefined;
  #busy: Promise<boolean> | undefined;
  #stopped = false;

  /** @param options executor, callback and timing. */
  constructor(options: CanaryMonitorOptions) {
    this.#o = {
      executor: options.executor,
      onFlush: options.onFlush,
      intervalMs: options.intervalMs ?? 30_000,
      tables: options.tables ?? ['mangle', 'nat', 'filter'],
      chain: options.chain ?? KUBE_PROXY_CANARY,
      clock: options.clock ?? realClock,
      logger: options.logger ?? noopLogger,
    };
  }

  /**
   * Creates the canaries and starts polling; resolves once the canaries exist. `signal`
   * bounds only that wait (an abort rejects and leaves the monitor stopped). A second
   * `start` rejects.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        await this.#ensureAll();
        if (this.#stopped) return;
        this.#timer ??= this.#o.clock.setInterval(() => void this.check(), this.#o.intervalMs);
      },
      () => this.stop(),
    );
  }

  /** Stops polling; resolves once a poll in progress finished. Idempotent; safe before `start`. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#busy;
  }

  async #ensureAll(): Promise<void> {
    for (const t of this.#o.tables) await this.#o.executor.ensureChain(t, this.#o.chain);
  }

  /**
   * One poll: if any canary is gone, recreates them all and calls `onFlush`. Returns true if a
   * flush was detected. Errors are logged, not thrown (the next poll retries).
   */
  async check(): Promise<boolean> {
    if (this.#busy) return false;
    const poll = this.#poll();
    this.#busy = poll;
    try {
      return await poll;
    } finally {
      this.#busy = undefined;
    }
  }

  async #poll(): Promise<boolean> {
    try {
      for (const t of this.#o.tables) {
        if (!(await this.#o.executor.chainExists(t, this.#o.chain))) {
          this.#o.logger.info(
            { table: t, chain: this.#o.chain },
            'iptables canary missing: rules were flushed',
          );
          await this.#ensureAll();
          this.#o.onFlush();
          return true;
        }
      }
      return false;
    } catch (err) {
      this.#o.logger.warn({ err }, 'iptables canary check failed');
      return false;
    }
  }
}

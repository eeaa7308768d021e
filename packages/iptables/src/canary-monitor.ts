/**
 * kube-proxy's canary: an empty `KUBE-PROXY-CANARY` chain in mangle, nat and filter. When
 * another program flushes iptables the canary disappears, which tells us to run a full
 * sync (our jump rules and chains are gone too).
 *
 * @module
 */
import { type Clock, type Logger, noopLogger, realClock, type Timer } from '@nodeagent/core';
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
export class CanaryMonitor {
  readonly #o: Required<Omit<CanaryMonitorOptions, 'logger' | 'clock'>> & { clock: Clock; logger: Logger };
  #timer: Timer | undefined;
  #busy = false;

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

  /** Creates the canaries (awaited) and starts polling. */
  async start(): Promise<void> {
    await this.#ensureAll();
    this.#timer ??= this.#o.clock.setInterval(() => void this.check(), this.#o.intervalMs);
  }

  /** Stops polling. */
  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
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
    this.#busy = true;
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
    } finally {
      this.#busy = false;
    }
  }
}

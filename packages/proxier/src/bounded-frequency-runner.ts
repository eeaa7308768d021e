/**
 * kube-proxy's `BoundedFrequencyRunner` (`pkg/proxy/runner`): runs one async function no more
 * often than `minIntervalMs` (counted from the END of the previous run), at least every
 * `maxIntervalMs`, again within `retryIntervalMs` after a failure, coalescing every `run()`
 * request that arrives meanwhile, and never twice at once.
 *
 * @module
 */
import {
  type Clock,
  InvalidOptionsError,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { FULL_SYNC_PERIOD_MS } from '@nodeagent/proxy-state';

/** Options of a {@link BoundedFrequencyRunner}. */
export interface BoundedFrequencyRunnerOptions {
  /** Used in logs and errors. */
  readonly name: string;
  /** The work; a rejection (or throw) counts as a failed run. */
  readonly fn: () => unknown;
  /**
   * Least time between the END of one run and the start of the next (kube-proxy's
   * `--iptables-min-sync-period`).
   * @default 1000
   */
  readonly minIntervalMs?: number;
  /**
   * After a failed run, the next one starts no later than this (capped at `maxIntervalMs`;
   * kube-proxy's `--iptables-sync-period`).
   * @default 30000
   */
  readonly retryIntervalMs?: number;
  /**
   * A run happens at least this often. Must be ≥ `minIntervalMs`.
   * @default FULL_SYNC_PERIOD_MS (one hour, as kube-proxy builds its runner)
   */
  readonly maxIntervalMs?: number;
  /**
   * Time and timers.
   * @default realClock
   */
  readonly clock?: Clock;
  /**
   * Logger (failed runs at warn).
   * @default noopLogger
   */
  readonly logger?: Logger;
  /** Called with the error of every failed run (after which a retry is scheduled). */
  readonly onError?: (error: unknown) => void;
}

type State = 'stopped' | 'idle' | 'running' | 'cooldown';

/**
 * Runs `fn` with bounded frequency. Nothing runs before {@link start}; after it, the first run
 * happens on the first {@link run} request or after `maxIntervalMs`, whichever comes first
 * (kube-proxy requests the first run once its informers have synced).
 *
 * @example
 * ```ts
 * const runner = new BoundedFrequencyRunner({
 *   name: 'sync-proxy-rules',
 *   fn: syncRules,
 *   minIntervalMs: 1_000,
 *   retryIntervalMs: 30_000,
 *   maxIntervalMs: FULL_SYNC_PERIOD_MS, // from @nodeagent/proxy-state
 * });
 * await runner.start();
 * runner.run(); // a change arrived: sync as soon as the min interval allows
 * ```
 */
export class BoundedFrequencyRunner {
  /** The runner's name (logs). */
  readonly name: string;
  readonly #fn: () => unknown;
  readonly #minMs: number;
  readonly #retryMs: number;
  readonly #maxMs: number;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #onError: ((error: unknown) => void) | undefined;
  #state: State = 'stopped';
  readonly #once = new StartOnce('BoundedFrequencyRunner');
  #stopped = false;
  /** A `run()` request not yet served. */
  #requested = false;
  /** The max/retry timer fired while a run or cooldown was in progress. */
  #due = false;
  #nextRunTimer: Timer | undefined;
  #minTimer: Timer | undefined;
  #inFlight: Promise<void> | undefined;
  #runs = 0;

  /**
   * @param options - Name, work, intervals, clock, logger, error callback.
   * @throws InvalidOptionsError for negative or non-finite intervals or `maxIntervalMs < minIntervalMs`.
   */
  constructor(options: BoundedFrequencyRunnerOptions) {
    const { name, fn } = options;
    const minIntervalMs = options.minIntervalMs ?? 1_000;
    const retryIntervalMs = options.retryIntervalMs ?? 30_000;
    const maxIntervalMs = options.maxIntervalMs ?? FULL_SYNC_PERIOD_MS;
    for (const [k, v] of [
      ['minIntervalMs', minIntervalMs],
      ['retryIntervalMs', retryIntervalMs],
      ['maxIntervalMs', maxIntervalMs],
    ] as const) {
      if (!(v >= 0) || !Number.isFinite(v))
        throw new InvalidOptionsError(
          'BoundedFrequencyRunner',
          `${name}: ${k} must be a finite number ≥ 0, got ${v}`,
        );
    }
    if (maxIntervalMs < minIntervalMs) {
      throw new InvalidOptionsError(
        'BoundedFrequencyRunner',
        `${name}: maxIntervalMs (${maxIntervalMs}) must be >= minIntervalMs (${minIntervalMs})`,
      );
    }
    this.name = name;
    this.#fn = fn;
    this.#minMs = minIntervalMs;
    this.#retryMs = retryIntervalMs;
    this.#maxMs = maxIntervalMs;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'bounded-frequency-runner', runner: name });
    this.#onError = options.onError;
  }

  /** How many runs have started. */
  get runs(): number {
    return this.#runs;
  }

  /** True while `fn` is executing. */
  get running(): boolean {
    return this.#state === 'running';
  }

  /**
   * Starts the loop: arms the `maxIntervalMs` timer and serves {@link run} requests (also one
   * made before `start`). Resolves at once (there is nothing to wait for); `signal` only
   * matters when it is already aborted, which rejects and leaves the runner stopped. A
   * second `start` rejects with `AlreadyStartedError`; {@link stop} ends the loop.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        if (this.#stopped) return;
        this.#state = 'idle';
        this.#armNextRun(this.#maxMs);
        if (this.#requested) this.#kick();
      },
      () => this.stop(),
    );
  }

  /**
   * Requests a run as soon as allowed. Requests made while a run is pending, executing or
   * cooling down are coalesced into one run.
   */
  run(): void {
    this.#requested = true;
    if (this.#state === 'idle') this.#kick();
  }

  /** Stops the loop; resolves once an executing run has finished. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#state = 'stopped';
    this.#nextRunTimer?.cancel();
    this.#minTimer?.cancel();
    this.#nextRunTimer = undefined;
    this.#minTimer = undefined;
    await this.#inFlight;
  }

  #armNextRun(delayMs: number): void {
    this.#nextRunTimer?.cancel();
    this.#nextRunTimer = this.#clock.setTimeout(() => {
      this.#nextRunTimer = undefined;
      this.#due = true;
      if (this.#state === 'idle') this.#kick();
    }, delayMs);
    this.#nextRunTimer.unref();
  }

  /** Starts a run on a fresh microtask, so `run()` never executes `fn` inside its caller. */
  #kick(): void {
    this.#state = 'running';
    this.#inFlight = Promise.resolve().then(() => this.#execute());
  }

  async #execute(): Promise<void> {
    if (this.#state !== 'running') return;
    this.#requested = false;
    this.#due = false;
    this.#nextRunTimer?.cancel();
    this.#nextRunTimer = undefined;
    this.#runs++;
    let failed = false;
    try {
      await this.#fn();
    } catch (err) {
      failed = true;
      this.#log.warn({ err }, 'run failed; retry scheduled');
      try {
        this.#onError?.(err);
      } catch (cbErr) {
        this.#log.error({ err: cbErr }, 'onError callback threw');
      }
    }
    if (this.#state !== 'running') return; // stopped meanwhile
    this.#armNextRun(failed ? Math.min(this.#retryMs, this.#maxMs) : this.#maxMs);
    this.#state = 'cooldown';
    if (this.#minMs === 0) {
      this.#afterCooldown();
      return;
    }
    this.#minTimer = this.#clock.setTimeout(() => {
      this.#minTimer = undefined;
      this.#afterCooldown();
    }, this.#minMs);
    this.#minTimer.unref();
  }

  #afterCooldown(): void {
    if (this.#state !== 'cooldown') return;
    this.#state = 'idle';
    if (this.#requested || this.#due) this.#kick();
  }
}

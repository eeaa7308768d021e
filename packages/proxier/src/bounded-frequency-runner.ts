/**
 * kube-proxy's `BoundedFrequencyRunner` (`pkg/proxy/runner`): runs one async function no more
 * often than `minIntervalMs` (counted from the END of the previous run), at least every
 * `maxIntervalMs`, again within `retryIntervalMs` after a failure, coalescing every `run()`
 * request that arrives meanwhile, and never twice at once.
 *
 * @module
 */
import { type Clock, type Logger, noopLogger, realClock, type Timer } from '@nodeagent/core';

/** Options of a {@link BoundedFrequencyRunner} besides its intervals. */
export interface BoundedFrequencyRunnerOptions {
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

/** Interval values that cannot work together. */
export class InvalidRunnerIntervalsError extends Error {
  override readonly name = 'InvalidRunnerIntervalsError';
}

type State = 'stopped' | 'idle' | 'running' | 'cooldown';

/**
 * Runs `fn` with bounded frequency. Nothing runs before {@link start}; after it, the first run
 * happens on the first {@link run} request or after `maxIntervalMs`, whichever comes first
 * (kube-proxy requests the first run once its informers have synced).
 *
 * @example
 * ```ts
 * const runner = new BoundedFrequencyRunner('sync-proxy-rules', syncRules, 1_000, 30_000, 3_600_000);
 * runner.start(signal);
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
  #started = false;
  /** A `run()` request not yet served. */
  #requested = false;
  /** The max/retry timer fired while a run or cooldown was in progress. */
  #due = false;
  #nextRunTimer: Timer | undefined;
  #minTimer: Timer | undefined;
  #inFlight: Promise<void> | undefined;
  #runs = 0;

  /**
   * @param name - Used in logs.
   * @param fn - The work; a rejection (or throw) counts as a failed run.
   * @param minIntervalMs - Least time between the end of one run and the start of the next.
   * @param retryIntervalMs - After a failed run, the next one starts no later than this (capped at `maxIntervalMs`).
   * @param maxIntervalMs - A run happens at least this often. Must be ≥ `minIntervalMs`.
   * @param options - Clock, logger, error callback.
   * @throws InvalidRunnerIntervalsError for negative intervals or `maxIntervalMs < minIntervalMs`.
   */
  constructor(
    name: string,
    fn: () => unknown,
    minIntervalMs: number,
    retryIntervalMs: number,
    maxIntervalMs: number,
    options: BoundedFrequencyRunnerOptions = {},
  ) {
    for (const [k, v] of [
      ['minIntervalMs', minIntervalMs],
      ['retryIntervalMs', retryIntervalMs],
      ['maxIntervalMs', maxIntervalMs],
    ] as const) {
      if (!(v >= 0) || !Number.isFinite(v))
        throw new InvalidRunnerIntervalsError(`${name}: ${k} must be a finite number ≥ 0, got ${v}`);
    }
    if (maxIntervalMs < minIntervalMs) {
      throw new InvalidRunnerIntervalsError(
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
   * made before `start`). Stops when `signal` aborts. Starting twice throws.
   */
  start(signal?: AbortSignal): void {
    if (this.#started) throw new Error(`runner ${this.name} was already started`);
    this.#started = true;
    if (signal?.aborted) return;
    signal?.addEventListener('abort', () => void this.stop(), { once: true });
    this.#state = 'idle';
    this.#armNextRun(this.#maxMs);
    if (this.#requested) this.#kick();
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
    this.#started = true;
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

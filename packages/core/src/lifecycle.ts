/**
 * The one lifecycle of every long-running `@nodeagent` piece (informers, PLEG, proxier,
 * health servers, the fake runtime, ...).
 *
 * The rule, everywhere:
 * - `start(signal?)` starts the piece and resolves once it is running (synced, listening,
 *   ...). The `signal` bounds **only that wait**: aborting it before `start` resolves
 *   rejects `start` with the signal's reason and leaves the piece stopped; aborting it later
 *   does nothing. So `start(AbortSignal.timeout(60_000))` means "give up if not ready within
 *   a minute", never "run for a minute".
 * - `stop()` ends it: timers cleared, sockets closed, children stopped. It is idempotent,
 *   safe before `start`, and resolves when everything is released.
 * - A piece is started at most once; calling `start` again rejects.
 *
 * Handles that have nothing to start (a CRI client connection, a lister-watcher) are
 * released with `close()` instead.
 *
 * @module
 */
import { abortReason } from './clock.js';

/** A long-running piece with {@link Lifecycle | the one lifecycle}. */
export interface Lifecycle {
  /**
   * Starts the piece; resolves when it is running.
   * @param signal bounds the wait for readiness only; an abort after `start` resolved is ignored.
   */
  start(signal?: AbortSignal): Promise<void>;
  /** Stops the piece and releases what it holds. Idempotent; safe before `start`. */
  stop(): Promise<void>;
}

/** Thrown by a second `start` of a piece. */
export class AlreadyStartedError extends Error {
  override readonly name = 'AlreadyStartedError';
  /** @param component the piece that was started twice. */
  constructor(readonly component: string) {
    super(`${component} was already started`);
  }
}

/**
 * Waits for `promise`, rejecting with the abort reason as soon as `signal` aborts. The work
 * behind `promise` is not cancelled: the caller stops it (usually with `stop()`).
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      promise.catch(() => {});
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Runs `start` once with the lifecycle rule: a second call rejects with
 * {@link AlreadyStartedError}, `signal` bounds the wait, and when the wait fails (abort or
 * error) `stop` runs before the rejection so nothing is left half-started.
 *
 * @example
 * ```ts
 * class Poller implements Lifecycle {
 *   readonly #once = new StartOnce('Poller');
 *   start(signal?: AbortSignal) {
 *     return this.#once.run(signal, () => this.#connect(), () => this.stop());
 *   }
 *   ...
 * }
 * ```
 */
export class StartOnce {
  #started = false;
  /** @param component names the piece in {@link AlreadyStartedError}. */
  constructor(readonly component: string) {}

  /** True once `run` was called. */
  get started(): boolean {
    return this.#started;
  }

  /** Starts with `start`, bounded by `signal`; runs `stop` when that fails. */
  async run(
    signal: AbortSignal | undefined,
    start: () => Promise<void>,
    stop: () => Promise<void>,
  ): Promise<void> {
    if (this.#started) throw new AlreadyStartedError(this.component);
    this.#started = true;
    try {
      await raceAbort(start(), signal);
    } catch (error) {
      await stop();
      throw error;
    }
  }
}

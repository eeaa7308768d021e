/**
 * When a worker's pod is synced again after a sync (the kubelet's `completeWork`): at once
 * after a phase transition, after the resync interval after a success (sooner when the sync
 * asked for it with `requeueAfterMs`, e.g. when a container's CrashLoopBackOff expires), after a short
 * back-off when the network is not ready, after the back-off period after any other error.
 * Every delay is jittered up by half, as `wait.Jitter(d, 0.5)`.
 *
 * @module
 */
import { Backoff, type BackoffOptions, type Clock } from '@nodeagent/core';

/** The kubelet's `syncFrequency` default: resync a healthy pod every minute, in ms. */
export const DEFAULT_RESYNC_INTERVAL_MS = 60_000;

/** The kubelet's `backOffPeriod`: retry a failed sync after 10 s, in ms. */
export const DEFAULT_BACK_OFF_PERIOD_MS = 10_000;

/** The kubelet's `backOffOnTransientErrorPeriod`: retry after 1 s when the network is not ready, in ms. */
export const BACK_OFF_ON_TRANSIENT_ERROR_PERIOD_MS = 1_000;

/** The kubelet's `workerResyncIntervalJitterFactor`: resyncs land in [interval, 1.5 × interval). */
export const WORKER_RESYNC_INTERVAL_JITTER_FACTOR = 0.5;

/** The kubelet's `workerBackOffPeriodJitterFactor`: retries land in [period, 1.5 × period). */
export const WORKER_BACK_OFF_PERIOD_JITTER_FACTOR = 0.5;

/** The cap of the optional per-pod error back-off unless `errorBackoff.capMs` says otherwise, in ms. */
export const DEFAULT_ERROR_BACKOFF_CAP_MS = 300_000;

/** An error whose message contains this is retried after the short transient back-off (the kubelet's `NetworkNotReadyErrorMsg`). */
export const NETWORK_NOT_READY_ERROR_MSG = 'network is not ready';

/**
 * `wait.Jitter`: `durationMs` plus a random share of up to `maxFactor × durationMs`.
 *
 * @param random a source in [0, 1).
 */
export function jitter(durationMs: number, maxFactor: number, random: () => number): number {
  return durationMs + random() * maxFactor * durationMs;
}

/** Why a requeue happens (`back-off`: a successful sync asked to be due sooner, see `SyncPodResult.requeueAfterMs`). */
export type RequeueReason = 'phase-transition' | 'success' | 'back-off' | 'network-not-ready' | 'error';

/** Whether `err` reports that the pod network is not ready yet (matched on the message, as upstream). */
export function isNetworkNotReadyError(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return message.includes(NETWORK_NOT_READY_ERROR_MSG);
}

/** The timing settings of {@link RequeuePolicy}. */
export interface RequeuePolicyOptions {
  /** Resync interval after a success, in ms. */
  readonly resyncIntervalMs: number;
  /** Retry delay after an error, in ms (the start of the sequence when `errorBackoff` is set). */
  readonly backOffPeriodMs: number;
  /** Per-pod exponential back-off for repeated errors; `undefined`: the fixed period, as upstream. */
  readonly errorBackoff: Omit<BackoffOptions, 'clock' | 'random'> | undefined;
  /** Source of time for the per-pod back-off's reset. */
  readonly clock: Clock;
  /** Random source in [0, 1) for the jitter. */
  readonly random: () => number;
}

/**
 * Computes requeue delays and keeps the per-pod error back-off state.
 * @internal
 */
export class RequeuePolicy {
  readonly #backoffs = new Map<string, Backoff>();

  readonly #options: RequeuePolicyOptions;

  constructor(options: RequeuePolicyOptions) {
    this.#options = options;
  }

  /** The reason and delay (ms) of the requeue after a sync of `uid` that ended this way. */
  delayFor(
    uid: string,
    phaseTransition: boolean,
    err: unknown,
    requeueAfterMs?: number,
  ): { reason: RequeueReason; delayMs: number } {
    const { random } = this.#options;
    if (phaseTransition) return { reason: 'phase-transition', delayMs: 0 };
    if (err === undefined) {
      this.#backoffs.get(uid)?.reset();
      const delayMs = jitter(this.#options.resyncIntervalMs, WORKER_RESYNC_INTERVAL_JITTER_FACTOR, random);
      if (requeueAfterMs !== undefined && requeueAfterMs < delayMs) {
        return { reason: 'back-off', delayMs: Math.max(0, requeueAfterMs) };
      }
      return { reason: 'success', delayMs };
    }
    if (isNetworkNotReadyError(err)) {
      const delayMs = jitter(
        BACK_OFF_ON_TRANSIENT_ERROR_PERIOD_MS,
        WORKER_BACK_OFF_PERIOD_JITTER_FACTOR,
        random,
      );
      return { reason: 'network-not-ready', delayMs };
    }
    const backoffOptions = this.#options.errorBackoff;
    if (backoffOptions === undefined) {
      const delayMs = jitter(this.#options.backOffPeriodMs, WORKER_BACK_OFF_PERIOD_JITTER_FACTOR, random);
      return { reason: 'error', delayMs };
    }
    let backoff = this.#backoffs.get(uid);
    if (backoff === undefined) {
      backoff = new Backoff({
        initialMs: this.#options.backOffPeriodMs,
        capMs: DEFAULT_ERROR_BACKOFF_CAP_MS,
        jitter: WORKER_BACK_OFF_PERIOD_JITTER_FACTOR,
        // A success resets it explicitly; a time-based reset would fire between long retries.
        resetAfterMs: Number.POSITIVE_INFINITY,
        ...backoffOptions,
        clock: this.#options.clock,
        random,
      });
      this.#backoffs.set(uid, backoff);
    }
    return { reason: 'error', delayMs: backoff.next() };
  }

  /** Drops the back-off state of a forgotten pod. */
  forget(uid: string): void {
    this.#backoffs.delete(uid);
  }
}

/**
 * The options of {@link PodWorkers}: the callbacks and peers it needs, and the timing and
 * concurrency settings with the kubelet's defaults.
 *
 * @module
 */
import type { BackoffOptions, Clock, Logger } from '@nodeagent/core';
import type { PodWorkersMetricsOptions } from './metrics.js';
import type { PodEventRecorder, PodStatusProvider, PodSyncer, PodWorkQueue, RunningPod } from './types.js';

/** Options for {@link PodWorkers}. */
export interface PodWorkersOptions<S, R extends RunningPod = RunningPod> {
  /** The sync callbacks: what to do for a pod in each state. */
  readonly syncer: PodSyncer<S, R>;
  /** Where workers wait for a pod status newer than their last sync. */
  readonly statusProvider: PodStatusProvider<S>;
  /**
   * Where workers schedule resyncs and retries (`WorkQueue<string>` from `@nodeagent/core`
   * fits). The caller turns due UIDs back into `updatePod({ updateType: 'sync' })`.
   */
  readonly workQueue: PodWorkQueue;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /** Receives the kubelet's pod events (`FailedSync`, `ExceededGracePeriod`). @default none */
  readonly recorder?: PodEventRecorder;
  /**
   * The resync interval after a successful sync, in ms; jittered into [interval, 1.5 × interval).
   * @default 60_000 (the kubelet's `syncFrequency`)
   */
  readonly resyncIntervalMs?: number;
  /**
   * The retry delay after a failed sync, in ms; jittered into [period, 1.5 × period).
   * @default 10_000 (the kubelet's `backOffPeriod`)
   */
  readonly backOffPeriodMs?: number;
  /**
   * A per-pod exponential back-off for repeated errors instead of the fixed period (the
   * kubelet has none): starts at `backOffPeriodMs`, ×2, capped at 300 s, jitter 0.5, reset by a
   * success; any field can be overridden. `undefined`: the fixed period, as upstream.
   * @default undefined
   */
  readonly errorBackoff?: Omit<BackoffOptions, 'clock' | 'random'>;
  /**
   * How many sync callbacks may run at once, across all pods. Minimum: 1.
   * @default Infinity (no limit, as the kubelet)
   */
  readonly concurrency?: number;
  /**
   * A callback running longer than this (ms) stops counting against `concurrency` and keeps
   * running, so a hung pod never holds back the others for longer.
   * @default 10_000
   */
  readonly maxSlotHoldMs?: number;
  /** Registers the kubelet's pod-worker metrics on this registry. @default no metrics */
  readonly metrics?: PodWorkersMetricsOptions;
  /** Random source in [0, 1) for jitter. @default Math.random */
  readonly random?: () => number;
  /**
   * A pod whose deletion began before this process first saw it (its first update already
   * carries `metadata.deletionTimestamp`, as after an agent restart mid-deletion) gets only the
   * grace it has left: the time until `deletionTimestamp` (which the API server sets to the
   * deletion time plus the grace), rounded up, at least 1 s and at most
   * `deletionGracePeriodSeconds` (see {@link remainingGracePeriodSeconds}). `false`: upstream's
   * behaviour, a fresh full grace period from `deletionGracePeriodSeconds`.
   * @default false
   */
  readonly remainingGraceOnAdoption?: boolean;
}

/**
 * The grace-period rules of a terminating pod (the kubelet's
 * `calculateEffectiveGracePeriod`) and the timeout of a kill that waits.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';

/** The API server's default for `spec.terminationGracePeriodSeconds`, in seconds. */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

/** The shortest grace period ever handed to `syncTerminatingPod`, in seconds. */
export const MIN_GRACE_PERIOD_SECONDS = 1;

/** The shortest time {@link PodWorkers.killPodAndWait} waits, in seconds (room for SIGKILL round trips). */
export const MIN_KILL_WAIT_SECONDS = 10;

/** What {@link calculateEffectiveGracePeriod} returns. */
export interface EffectiveGracePeriod {
  /** The grace period to use, in whole seconds, never below {@link MIN_GRACE_PERIOD_SECONDS}. */
  readonly gracePeriodSeconds: number;
  /** It is shorter than the one already in force: a running termination must restart with it. */
  readonly shortened: boolean;
}

/**
 * Computes the grace period of a terminating pod. Candidates in order, each winning when
 * nothing is set yet or it is shorter: the pod's `metadata.deletionGracePeriodSeconds` (the
 * API server's word), then the kill's override (eviction, preemption, shutdown). If neither
 * set one, `spec.terminationGracePeriodSeconds` (30 when absent, the API default). The result
 * is never below 1 s, and never longer than `currentSeconds` once that is set: grace only
 * shrinks.
 *
 * As upstream (its `overridden` flag), a candidate of 0 still applies: a force delete
 * (`kubectl delete --grace-period=0 --force`, deletion grace 0) or an override of 0 yields 0,
 * which the final clamp turns into 1 s. Only when no candidate applied does the spec value
 * fill in.
 *
 * @param currentSeconds the grace period in force, 0 if none yet.
 * @param pod the pod, for its deletion grace and spec.
 * @param overrideSeconds the kill's `podTerminationGracePeriodSecondsOverride`, if any.
 */
export function calculateEffectiveGracePeriod(
  currentSeconds: number,
  pod: V1Pod,
  overrideSeconds: number | undefined,
): EffectiveGracePeriod {
  let grace = currentSeconds;
  let overridden = false;
  const deletionGrace = pod.metadata?.deletionGracePeriodSeconds;
  if (deletionGrace !== undefined && deletionGrace !== null && (grace === 0 || deletionGrace < grace)) {
    grace = deletionGrace;
    overridden = true;
  }
  if (overrideSeconds !== undefined && (grace === 0 || overrideSeconds < grace)) {
    grace = overrideSeconds;
    overridden = true;
  }
  if (!overridden && grace === 0)
    grace = pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  grace = Math.max(MIN_GRACE_PERIOD_SECONDS, Math.floor(grace));
  return { gracePeriodSeconds: grace, shortened: currentSeconds !== 0 && currentSeconds !== grace };
}

/**
 * The grace a pod being deleted has left at `nowMs`: the whole seconds until its
 * `metadata.deletionTimestamp` (the API server sets it to the deletion time plus the grace),
 * rounded up, at least {@link MIN_GRACE_PERIOD_SECONDS} and at most
 * `metadata.deletionGracePeriodSeconds` when that is set. Undefined when the pod is not being
 * deleted or its timestamp does not parse. Not an upstream rule: the kubelet restarts a full
 * grace period; see `PodWorkersOptions.remainingGraceOnAdoption`.
 *
 * @param pod the pod being deleted.
 * @param nowMs the current time, ms since the Unix epoch.
 */
export function remainingGracePeriodSeconds(pod: V1Pod, nowMs: number): number | undefined {
  const ts = pod.metadata?.deletionTimestamp as Date | string | undefined | null;
  if (ts === undefined || ts === null) return undefined;
  const at = ts instanceof Date ? ts.getTime() : Date.parse(ts);
  if (!Number.isFinite(at)) return undefined;
  let left = Math.max(MIN_GRACE_PERIOD_SECONDS, Math.ceil((at - nowMs) / 1000));
  const deletionGrace = pod.metadata?.deletionGracePeriodSeconds;
  if (deletionGrace !== undefined && deletionGrace !== null) {
    left = Math.min(left, Math.max(MIN_GRACE_PERIOD_SECONDS, deletionGrace));
  }
  return left;
}

/**
 * How long a kill that waits gives the pod, in seconds: the grace period plus half of it
 * (integer seconds), at least {@link MIN_KILL_WAIT_SECONDS}: 30 → 45, 1 → 10.
 *
 * @param pod the pod being killed.
 * @param overrideSeconds the kill's grace override; else the pod's spec value; else 0.
 */
export function killPodWaitTimeoutSeconds(pod: V1Pod, overrideSeconds: number | undefined): number {
  const grace = Math.max(0, Math.floor(overrideSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 0));
  return Math.max(grace + Math.floor(grace / 2), MIN_KILL_WAIT_SECONDS);
}

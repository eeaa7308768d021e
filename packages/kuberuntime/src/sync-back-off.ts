/**
 * Which sync failures are back-offs and when a pod backing off is synced again (upstream
 * kubelet `SyncPod`: a result whose only failures are `ErrCrashLoopBackOff` or
 * `ErrImagePullBackOff` is not an error; any other failure is, and the pod worker retries it
 * after `backOffPeriod`). The back-off expiry is computed here so the embedder's pod syncer
 * requeues the pod when the restart becomes due instead of at the next resync.
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { PodStatus } from '@nodeagent/kubecontainer';
import { SyncErrorReason } from './errors.js';
import type { PodSyncResult, SyncResult } from './sync-result.js';

/** The sync error reasons that are back-offs, not errors (upstream `ErrCrashLoopBackOff`, `ErrImagePullBackOff`). */
const BACK_OFF_REASONS = new Set<string>([
  SyncErrorReason.CrashLoopBackOff,
  SyncErrorReason.ImagePullBackOff,
]);

/** The least delay of a back-off requeue, ms (so a just-expired back-off does not spin). */
export const MIN_BACK_OFF_REQUEUE_MS = 100;

/** The retry delay of a pod whose image pull backs off, unless configured, ms (the kubelet's `imageBackOffPeriod`). */
export const DEFAULT_IMAGE_PULL_BACK_OFF_REQUEUE_MS = 10_000;

/** What the pod worker does after a `syncPod` (see {@link syncOutcome}). */
export interface SyncOutcome {
  /** The failure to report and retry after the pod workers' back-off period; `undefined` when the sync counts as successful. */
  readonly error: Error | undefined;
  /** Sync the pod again after this many ms (when a back-off expires); `undefined`: at the usual resync. */
  readonly requeueAfterMs: number | undefined;
}

/** What {@link syncOutcome} needs besides the result. */
export interface SyncOutcomeContext {
  /** Now, ms since the epoch. */
  readonly nowMs: number;
  /** The current CrashLoopBackOff delay of a container, ms. */
  readonly crashLoopDelayMs: (pod: V1Pod, container: V1Container) => number;
  /** Retry delay while an image pull backs off, ms. @default 10_000 */
  readonly imagePullBackOffMs?: number;
}

/** Whether a step failed with a back-off (CrashLoopBackOff or ImagePullBackOff) rather than an error. */
export function isBackOff(step: SyncResult): boolean {
  return step.error !== undefined && BACK_OFF_REASONS.has(step.error.reason);
}

/**
 * Classifies a `syncPod` result as the kubelet does: an error unless every failed step is a
 * back-off; for back-offs, the delay until the first one expires (a crashed container's
 * `finishedAt` plus its CrashLoopBackOff delay; the image pull back-off period), at least
 * {@link MIN_BACK_OFF_REQUEUE_MS}.
 */
export function syncOutcome(
  pod: V1Pod,
  status: PodStatus,
  result: PodSyncResult,
  context: SyncOutcomeContext,
): SyncOutcome {
  if (result.error() === undefined) return { error: undefined, requeueAfterMs: undefined };
  const failed = result.results.filter((r) => r.error !== undefined);
  const hard = result.syncError ?? failed.find((r) => !isBackOff(r))?.error;
  if (hard !== undefined) return { error: hard, requeueAfterMs: undefined };
  let delayMs = Number.POSITIVE_INFINITY;
  for (const r of failed) {
    if (r.error?.reason === SyncErrorReason.ImagePullBackOff) {
      delayMs = Math.min(delayMs, context.imagePullBackOffMs ?? DEFAULT_IMAGE_PULL_BACK_OFF_REQUEUE_MS);
      continue;
    }
    const container = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find(
      (c) => c.name === r.target,
    );
    const exited = status.containerStatuses.find((c) => c.name === r.target && c.state === 'exited');
    if (container === undefined || exited === undefined) continue;
    delayMs = Math.min(delayMs, exited.finishedAt + context.crashLoopDelayMs(pod, container) - context.nowMs);
  }
  return {
    error: undefined,
    requeueAfterMs: Number.isFinite(delayMs) ? Math.max(delayMs, MIN_BACK_OFF_REQUEUE_MS) : undefined,
  };
}

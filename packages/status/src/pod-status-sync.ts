/**
 * One pod's trip to the API (upstream `syncPod` of the status manager): GET the pod, check its
 * UID, merge with what the API has, PATCH if anything differs, and DELETE a finished pod that is
 * being deleted. The manager keeps the cache; this module only talks to the API.
 *
 * @module
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { Clock, Logger } from '@nodeagent/core';
import { apiErrorCode, errorMessage, type StatusApi } from './api.js';
import { countedCall, type StatusMetrics } from './metrics.js';
import { mergePodStatus } from './pod-conditions.js';
import type { MirrorPodTranslator } from './pod-status-manager-options.js';
import { normalizePodStatus } from './pod-status-normalize.js';
import { podStatusPatch } from './pod-status-patch.js';
import { canBeDeleted } from './pod-status-rules.js';
import { rfc3339Seconds } from './time.js';

/** What one sync talks to. */
export interface PodStatusSyncDeps {
  readonly api: StatusApi;
  readonly metrics: StatusMetrics;
  readonly log: Logger;
  readonly clock: Clock;
  readonly mirror: MirrorPodTranslator;
  readonly couldHaveRunningContainers: ((pod: V1Pod) => boolean) | undefined;
}

/** The cached status to bring to the API. */
export interface PodStatusTarget {
  readonly status: V1PodStatus;
  readonly version: number;
  readonly podName: string;
  readonly podNamespace: string;
  readonly podIsFinished: boolean;
}

/** How a sync ended. */
export type PodStatusSyncOutcome =
  /** GET failed or the pod is not in the API: try again later. */
  | { readonly kind: 'retry' }
  /** The name belongs to another pod now: drop our status. */
  | { readonly kind: 'recreated' }
  /** The API has our version (`wrote`: a PATCH was needed); `deleted`: the pod is gone for good. */
  | { readonly kind: 'synced'; readonly apiUid: string; readonly wrote: boolean; readonly deleted: boolean };

/** Brings `target` (the cached status of the pod `uid`) to the API. Never throws. */
export async function syncPodStatus(
  d: PodStatusSyncDeps,
  uid: string,
  target: PodStatusTarget,
): Promise<PodStatusSyncOutcome> {
  const ref = `${target.podNamespace}/${target.podName}`;
  const path = `/api/v1/namespaces/${target.podNamespace}/pods/${target.podName}`;
  let pod: V1Pod | undefined;
  try {
    pod = await countedCall(d.metrics, 'pods', 'get', () => d.api.get<V1Pod>(path));
  } catch (err) {
    d.log.info({ podUID: uid, pod: ref, err: errorMessage(err) }, 'Failed to get status for pod');
    return { kind: 'retry' };
  }
  if (pod === undefined) {
    // Dropped by removeOrphanedStatuses once the pod source drops it.
    d.log.debug({ podUID: uid, pod: ref }, 'Pod does not exist on the server');
    return { kind: 'retry' };
  }
  const apiUid = pod.metadata?.uid ?? '';
  const translated = d.mirror.staticPodUid(apiUid) ?? apiUid;
  if (translated !== '' && translated !== uid) {
    d.log.info(
      { pod: ref, oldPodUID: uid, podUID: translated },
      'Pod was deleted and then recreated, skipping status update',
    );
    return { kind: 'recreated' };
  }
  const apiStatus = normalizePodStatus(pod, pod.status ?? {});
  const delay = d.couldHaveRunningContainers?.(pod) ?? false;
  const merged = normalizePodStatus(
    pod,
    mergePodStatus(apiStatus, target.status, delay, rfc3339Seconds(d.clock.now())),
  );
  const { patch, unchanged } = podStatusPatch(apiUid, apiStatus, merged);
  if (!unchanged) {
    try {
      pod = await countedCall(d.metrics, 'pods', 'patch', () =>
        d.api.patch<V1Pod>(`${path}/status`, 'strategic', patch),
      );
      d.log.debug({ pod: ref, statusVersion: target.version, patch }, 'Status for pod updated successfully');
    } catch (err) {
      // 409: the name now belongs to another pod (UID precondition); the next GET sees it.
      d.log.info(
        { pod: ref, code: apiErrorCode(err), err: errorMessage(err) },
        'Failed to update status for pod',
      );
      return { kind: 'retry' };
    }
  } else {
    d.log.debug({ pod: ref, statusVersion: target.version }, 'Status for pod is up-to-date');
  }
  const deleted = canBeDeleted(pod, target.podIsFinished) && (await deleteFinal(d, pod, ref, path));
  return { kind: 'synced', apiUid, wrote: !unchanged, deleted };
}

/** The final zero-grace DELETE with the UID precondition; true when nothing is left to delete. */
async function deleteFinal(d: PodStatusSyncDeps, pod: V1Pod, ref: string, path: string): Promise<boolean> {
  try {
    await countedCall(d.metrics, 'pods', 'delete', () =>
      d.api.delete(path, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid ?? '' } }),
    );
    d.log.info({ pod: ref }, 'Pod fully terminated and removed from etcd');
    return true;
  } catch (err) {
    const code = apiErrorCode(err);
    // 404: already gone; 409: the name belongs to a new pod. Either way nothing is left to delete.
    if (code === 404 || code === 409) return true;
    d.log.info({ pod: ref, err: errorMessage(err) }, 'Failed to delete status for pod');
    return false;
  }
}

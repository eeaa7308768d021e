/**
 * Where workers read container IDs, states and the pod IP (upstream: the status manager's cache).
 *
 * @module
 */
import type { V1PodStatus } from '@kubernetes/client-node';

/**
 * The latest status of a pod by UID, or `undefined` when the pod is not known (yet, or any
 * more). Workers read it before every probe: it must be cheap and must not block. It should
 * carry `containerStatuses[].started` as last computed by
 * {@link ProbeManager.updatePodStatus} (liveness and readiness wait for `started`, as upstream).
 */
export interface PodStatusProvider {
  /** The status of the pod with `uid`. */
  getPodStatus(uid: string): V1PodStatus | undefined;
}

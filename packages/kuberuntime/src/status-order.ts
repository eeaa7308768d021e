/**
 * Makes sure a pod's container statuses are newest first (kubecontainer's
 * `sortContainerStatusesByCreationTime` order),
 * whatever `PodStatusSource` produced them: "newest" decides the restart count and the next
 * action.
 *
 * @module
 */
import { type PodStatus, sortContainerStatusesByCreationTime } from '@nodeagent/kubecontainer';

/** `status` with `containerStatuses` newest first (creation time, then restart count). */
export function newestFirst(status: PodStatus): PodStatus {
  const sorted = sortContainerStatusesByCreationTime(status.containerStatuses);
  return sorted.every((s, i) => s === status.containerStatuses[i])
    ? status
    : { ...status, containerStatuses: sorted };
}

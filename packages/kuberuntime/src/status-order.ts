/**
 * Makes sure a pod's container statuses are newest first (pleg's `byNewestContainer` order),
 * whatever `PodStatusSource` produced them: "newest" decides the restart count and the next
 * action.
 *
 * @module
 */
import { byNewestContainer, type PodStatus } from '@nodeagent/pleg';

/** `status` with `containerStatuses` newest first (creation time, then restart count). */
export function newestFirst(status: PodStatus): PodStatus {
  const sorted = [...status.containerStatuses].sort(byNewestContainer);
  return sorted.every((s, i) => s === status.containerStatuses[i])
    ? status
    : { ...status, containerStatuses: sorted };
}

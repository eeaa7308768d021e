/**
 * Orders a pod's container statuses newest first, breaking creation-time ties by restart
 * count: millisecond timestamps tie when a container crashes fast, and "newest" decides the
 * restart count and the next action.
 *
 * @module
 */
import type { PodStatus } from '@nodeagent/pleg';

/** `status` with `containerStatuses` newest first (creation time, then restart count). */
export function newestFirst(status: PodStatus): PodStatus {
  const sorted = [...status.containerStatuses].sort(
    (a, b) => b.createdAt - a.createdAt || b.restartCount - a.restartCount,
  );
  return sorted.every((s, i) => s === status.containerStatuses[i])
    ? status
    : { ...status, containerStatuses: sorted };
}

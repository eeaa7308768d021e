/**
 * The order of container and sandbox statuses: newest first (upstream `containerStatusByCreated`,
 * `podSandboxByCreated`). "Newest" decides the restart count and the next sync action, so PLEG
 * and the runtime manager must agree on it.
 *
 * @module
 */
import type { ContainerRuntimeStatus } from './pod-status.js';

/** Newest first by creation time (sandboxes, listed containers). */
export function byCreatedDesc<T extends { readonly createdAt: bigint | number }>(a: T, b: T): number {
  return a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : 0;
}

/**
 * A copy of `statuses` newest first: by creation time, then by restart count. Creation times
 * are whole milliseconds, so instances of a fast crash loop can tie; the restart count (which
 * only grows) then decides which one is current.
 *
 * @example
 * ```ts
 * const [current] = sortContainerStatusesByCreationTime(status.containerStatuses);
 * ```
 */
export function sortContainerStatusesByCreationTime<
  T extends Pick<ContainerRuntimeStatus, 'createdAt' | 'restartCount'>,
>(statuses: readonly T[]): T[] {
  return [...statuses].sort((a, b) => b.createdAt - a.createdAt || b.restartCount - a.restartCount);
}

/**
 * Pod status straight from a CRI container event (upstream `GeneratePodStatus`), and the IP
 * preservation rule both PLEGs apply before caching.
 *
 * @module
 */
import { type ContainerEventResponse, PodSandboxState } from '@nodeagent/cri';
import { byNewestContainer, nsToMs, sandboxIps, toContainerRuntimeStatus } from './cri-convert.js';
import type { PodStatus } from './pod-status.js';
import type { PodStatusCache } from './pod-status-cache.js';

/**
 * The pod status an event carries: its sandbox status (the only sandbox listed), the
 * statuses of the sandbox's containers (newest first) and the sandbox's IPs; stamped with the
 * event's `created_at`. `undefined` when the event has no sandbox status or metadata.
 */
export function podStatusFromContainerEvent(event: ContainerEventResponse): PodStatus | undefined {
  const sandbox = event.podSandboxStatus;
  const metadata = sandbox?.metadata;
  if (sandbox === undefined || metadata === undefined) return undefined;
  return {
    id: metadata.uid,
    name: metadata.name,
    namespace: metadata.namespace,
    ips: sandboxIps(sandbox),
    containerStatuses: event.containersStatuses.map(toContainerRuntimeStatus).sort(byNewestContainer),
    sandboxStatuses: [sandbox],
    timestamp: nsToMs(event.createdAt),
  };
}

/**
 * `status` with the previously cached IPs kept when it has none and no sandbox is ready:
 * the API expects a finished pod to keep its IP after its network is torn down (upstream
 * `getPodIPs`).
 */
export function withPreservedPodIps(cache: PodStatusCache, uid: string, status: PodStatus): PodStatus {
  if (status.ips.length > 0) return status;
  const cached = cache.get(uid);
  if (cached.error !== undefined || cached.status.ips.length === 0) return status;
  if (status.sandboxStatuses.some((s) => s.state === PodSandboxState.SANDBOX_READY)) return status;
  return { ...status, ips: cached.status.ips };
}

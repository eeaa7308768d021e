/**
 * The IP preservation rule both PLEGs apply before caching a pod status.
 *
 * @module
 */

import { PodSandboxState } from '@nodeagent/cri';
import type { PodStatus } from '@nodeagent/kubecontainer';
import type { PodStatusCache } from './pod-status-cache.js';

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

/**
 * The kubelet's pod lifecycle event generator (PLEG) for Node.js: a relisting
 * {@link GenericPLEG} (1 s relist over CRI, per-container diff, the kubelet's events, bounded
 * buffer, 3-minute health check), an {@link EventedPLEG} over CRI `GetContainerEvents` that
 * falls back to relisting, and the {@link PodStatusCache} with `getNewerThan` reads that pod
 * workers wait on. The runtime pod model it caches (`PodStatus`, `criPodStatusSource`,
 * `criRuntimeLister`) is `@nodeagent/kubecontainer`; in-memory fakes are in
 * `@nodeagent/pleg/testing`.
 *
 * @example
 * ```ts
 * import { createCriClient } from '@nodeagent/cri';
 * import { criPodStatusSource, criRuntimeLister } from '@nodeagent/kubecontainer';
 * import { GenericPLEG } from '@nodeagent/pleg';
 *
 * const cri = createCriClient('unix:///run/containerd/containerd.sock');
 * const pleg = new GenericPLEG({ lister: criRuntimeLister(cri), statusSource: criPodStatusSource(cri) });
 * await pleg.start();
 * for await (const event of pleg.events()) {
 *   const { status } = pleg.cache.get(event.id);
 *   console.log(event.type, status.namespace, status.name, event.data.slice(0, 13));
 * }
 * ```
 *
 * @packageDocumentation
 */
export {
  computePodEvents,
  generateEvents,
  type PlegContainerState,
  toPlegContainerState,
} from './compute-events.js';
export {
  EVENTED_PLEG_MAX_STREAM_RETRIES,
  EVENTED_PLEG_RELIST_PERIOD_MS,
  EVENTED_PLEG_RELIST_THRESHOLD_MS,
  EventedPLEG,
  type EventedPlegNotifications,
  type EventedPlegOptions,
  type FallbackReason,
} from './evented-pleg.js';
export {
  isSyncPodWorthy,
  type PlegHealth,
  type PodLifecycleEvent,
  type PodLifecycleEventType,
} from './events.js';
export {
  DEFAULT_PLEG_CHANNEL_CAPACITY,
  GENERIC_PLEG_RELIST_PERIOD_MS,
  GENERIC_PLEG_RELIST_THRESHOLD_MS,
  GenericPLEG,
  type GenericPlegNotifications,
  type GenericPlegOptions,
  newPlegEventChannel,
  type RelistResult,
  type UpdateCacheResult,
} from './generic-pleg.js';
export type { PlegMetricsOptions } from './metrics.js';
export { type CachedPodStatus, PodStatusCache, type PodStatusCacheOptions } from './pod-status-cache.js';

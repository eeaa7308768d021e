/**
 * The kubelet's pod lifecycle event generator (PLEG) for Node.js: a relisting
 * {@link GenericPLEG} (1 s relist over CRI, per-container diff, the kubelet's events, bounded
 * buffer, 3-minute health check), an {@link EventedPLEG} over CRI `GetContainerEvents` that
 * falls back to relisting, and the {@link PodStatusCache} with `getNewerThan` reads that pod
 * workers wait on. Also the kubelet's runtime pod-status model ({@link PodStatus}) and its
 * CRI implementation ({@link criPodStatusSource}), shared with `@nodeagent/kuberuntime`.
 *
 * @example
 * ```ts
 * import { createCriClient } from '@nodeagent/cri';
 * import { GenericPLEG, criPodStatusSource, criRuntimeLister } from '@nodeagent/pleg';
 *
 * const cri = createCriClient('unix:///run/containerd/containerd.sock');
 * const pleg = new GenericPLEG({ lister: criRuntimeLister(cri), statusSource: criPodStatusSource(cri) });
 * const stop = new AbortController();
 * pleg.start(stop.signal);
 * for await (const event of pleg.events(stop.signal)) {
 *   const { status } = pleg.cache.get(event.id);
 *   console.log(event.type, status.namespace, status.name, event.data.slice(0, 13));
 * }
 * ```
 *
 * @packageDocumentation
 */
export * from './compute-events.js';
export * from './cri-convert.js';
export * from './cri-pod-status-source.js';
export * from './event-channel.js';
export * from './evented-pleg.js';
export * from './events.js';
export * from './generic-pleg.js';
export * from './labels.js';
export type { PlegMetricsOptions } from './metrics.js';
export * from './pod-status.js';
export * from './pod-status-cache.js';
export * from './pod-status-from-event.js';
export * from './runtime-lister.js';

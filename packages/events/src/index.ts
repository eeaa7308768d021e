/**
 * The kubelet's event recorder: core/v1 Events with client-go's correlation (similar events
 * aggregated, repeats counted by patching `count` and `lastTimestamp`, a per-object spam
 * filter of 25 events then one every 5 minutes), a bounded queue that never blocks the
 * caller, upstream's retries, and the kubelet's event reasons.
 *
 * @example
 * ```ts
 * import { apiClientEventSink, containerReference, EventRecorder, HttpJsonClient, PulledImage } from '@nodeagent/events';
 *
 * const recorder = new EventRecorder({
 *   sink: apiClientEventSink(new HttpJsonClient({ server: 'http://127.0.0.1:8080' })),
 *   host: 'node-1',
 * });
 * await recorder.start();
 * recorder.event(containerReference(pod, 'web'), 'Normal', PulledImage, 'Container image "nginx:1.27" already present on machine');
 * ```
 *
 * @packageDocumentation
 */
export {
  type AggregatorSettings,
  aggregateKeyByReason,
  aggregateMessageByReason,
  EventAggregator,
  eventKey,
} from './aggregator.js';
export {
  type CorrelateResult,
  type CorrelatorOptions,
  DEFAULT_AGGREGATE_INTERVAL_MS,
  DEFAULT_AGGREGATE_MAX_EVENTS,
  DEFAULT_SPAM_BURST,
  DEFAULT_SPAM_QPS,
  EventCorrelator,
  MAX_LRU_CACHE_ENTRIES,
} from './correlator.js';
export {
  type CoreEvent,
  EVENT_TYPES,
  type EventSource,
  type EventType,
  formatTime,
  type ObjectReference,
} from './event.js';
export { sprintf } from './format.js';
export { HttpJsonClient, type HttpJsonClientOptions } from './http-json-client.js';
export { type DropReason, EVENT_METRIC_NAMES } from './metrics.js';
export {
  containerReference,
  InvalidReferenceError,
  nodeReference,
  objectReference,
  podReference,
  type ReferencedObject,
  type ReferencedPod,
} from './object-reference.js';
export { type PodEventRecorder, podEventRecorder } from './pod-event-recorder.js';
export * from './reasons.js';
export { EventRecorder, type EventTarget, InvalidEventTypeError } from './recorder.js';
export {
  DEFAULT_MAX_QUEUED_EVENTS,
  DEFAULT_MAX_TRIES,
  DEFAULT_RETRY_SLEEP_MS,
  DEFAULT_WRITE_BURST,
  DEFAULT_WRITE_QPS,
  type EventRecorderOptions,
} from './recorder-options.js';
export { apiClientEventSink, type EventSink, EventSinkError, type JsonApiClient, statusOf } from './sink.js';
export { EventSpamFilter, type SpamFilterSettings, spamKey } from './spam-filter.js';

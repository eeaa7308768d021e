/**
 * A client-go grade informer for Node.js: a reflector that lists (paginated) and watches
 * with client-go's resource-version rules, 410 handling, bookmarks, idle detection and
 * jittered backoff forever; a delta queue with tombstones; an indexed cache with listers;
 * and a shared informer whose handlers each get their own buffer. Objects are plain API
 * JSON everywhere.
 *
 * @example
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { objectOf, SharedInformerFactory } from '@nodeagent/informer';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const factory = new SharedInformerFactory({ kubeConfig: kc });
 * const pods = factory.pods({ fieldSelector: 'spec.nodeName=node-1' });
 * pods.addEventHandler({
 *   onAdd: (pod, initial) => console.log('add', pod.metadata?.name, initial),
 *   onUpdate: (_old, pod) => console.log('update', pod.metadata?.name),
 *   onDelete: (pod) => console.log('delete', objectOf(pod).metadata?.name),
 * });
 * // Give up if the caches are not filled within a minute; once started, the informers run
 * // until factory.stop().
 * await factory.start(AbortSignal.timeout(60_000));
 * console.log(pods.lister.list().length, 'pods on this node');
 * ```
 *
 * @packageDocumentation
 */
export {
  type Delta,
  DeltaFIFO,
  type DeltaFIFOOptions,
  type DeltaType,
  type KnownObjects,
  type PoppedDeltas,
} from './delta-fifo.js';
export {
  InformerStoppedError,
  ObjectKeyError,
  StatusError,
  TlsVerificationError,
  WatchDecodeError,
  WatchIdleTimeoutError,
} from './errors.js';
export {
  type ApiObject,
  type FactoryInformerOptions,
  type InformerRequest,
  RESOURCES,
  type ScopeOptions,
  SharedInformerFactory,
  type SharedInformerFactoryOptions,
} from './factory.js';
export {
  type EventHandler,
  HANDLER_YIELD_AFTER_MS,
  type HandlerOptions,
  type HandlerRegistration,
  MINIMUM_RESYNC_PERIOD_MS,
} from './handler.js';
export {
  IndexError,
  IndexedStore,
  type Indexers,
  type IndexFunc,
  NAMESPACE_INDEX,
  namespaceIndexFunc,
  type ReadonlyIndexer,
} from './indexed-store.js';
export {
  type DeletedFinalStateUnknown,
  isTombstone,
  objectKey,
  objectOf,
  splitKey,
  tombstone,
} from './keys.js';
export { Lister, matchesLabels, type NamespaceLister, type ObjectFilter } from './lister.js';
export type { ActivityCallback, ListerWatcher } from './lister-watcher.js';
export {
  createInformerMetrics,
  INFORMER_METRIC_NAMES,
  type InformerMetrics,
  noopInformerMetrics,
  type RelistReason,
  type WatchRestartReason,
} from './metrics.js';
export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_REFLECTOR_BACKOFF,
  HEALTHY_WATCH_MS,
  Reflector,
  type ReflectorDeps,
  type ReflectorOptions,
  type ReflectorSink,
  ShortWatchError,
  type WatchErrorContext,
  type WatchErrorHandler,
} from './reflector.js';
export {
  createRestClientMetrics,
  noopRestClientMetrics,
  REST_CLIENT_DURATION_BUCKETS,
  REST_CLIENT_ERROR_CODE,
  REST_CLIENT_METRIC_NAMES,
  type RestClientMetrics,
} from './rest-client-metrics.js';
export {
  DEFAULT_REST_CLIENT_BURST,
  DEFAULT_REST_CLIENT_QPS,
  EXTRA_LONG_THROTTLE_LATENCY_MS,
  LONG_THROTTLE_LATENCY_MS,
  type RequestThrottle,
  type RestClientRateLimitOptions,
  restClientRateLimiter,
  throttleRequest,
} from './rest-client-throttle.js';
export {
  collectionPath,
  type ResourceRef,
  RestListerWatcher,
  type RestListerWatcherOptions,
} from './rest-lister-watcher.js';
export { SharedInformer, type SharedInformerEvents, type SharedInformerOptions } from './shared-informer.js';
export {
  INITIAL_EVENTS_END_ANNOTATION,
  type KubeObject,
  type ListMeta,
  type ListOptions,
  type ObjectList,
  type ObjectMeta,
  type Selectors,
  type Status,
  type WatchEvent,
  type WatchEventType,
  type WatchOptions,
} from './types.js';
export { type DecodeResult, decodeLine, WatchDecoder } from './watch-decoder.js';

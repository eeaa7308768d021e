/**
 * Shares one informer (one list/watch) per resource, namespace and selectors
 * (client-go's `SharedInformerFactory`).
 *
 * @module
 */
import type {
  KubeConfig,
  V1ConfigMap,
  V1EndpointSlice,
  V1Lease,
  V1Namespace,
  V1Node,
  V1Pod,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import { definedFields, type Lifecycle, type RequestRateLimiter, StartOnce } from '@nodeagent/core';
import type { ListerWatcher } from './lister-watcher.js';
import { collectionPath, type ResourceRef, RestListerWatcher } from './rest-lister-watcher.js';
import { SharedInformer, type SharedInformerOptions } from './shared-informer.js';
import type { KubeObject, Selectors } from './types.js';

/** What identifies a shared informer: resource, namespace and selectors. */
export interface InformerRequest extends ResourceRef, Selectors {}

/** Per-informer options the factory passes through (selectors come from the request). */
export type FactoryInformerOptions = Omit<SharedInformerOptions, 'labelSelector' | 'fieldSelector' | 'name'>;

/** Options of a {@link SharedInformerFactory}. */
export interface SharedInformerFactoryOptions {
  /** Builds the ListerWatcher of each informer. Defaults to a {@link RestListerWatcher} on `kubeConfig`. */
  readonly listerWatcherFor?: (request: InformerRequest) => ListerWatcher;
  /** Required unless `listerWatcherFor` is given. */
  readonly kubeConfig?: KubeConfig;
  /** Defaults applied to every informer (logger, clock, metrics, backoff, transform, …). */
  readonly defaults?: FactoryInformerOptions;
  /**
   * The client config's request limiter, shared by the lists of every informer (and by any
   * other client of the same config), as client-go's clientset shares one per config. See
   * `restClientRateLimiter`. No client-side limit when unset. Ignored with `listerWatcherFor`.
   */
  readonly rateLimiter?: RequestRateLimiter;
}

/** Common resources of a node agent, by group/version/resource. */
export const RESOURCES = {
  pods: { group: '', version: 'v1', resource: 'pods' },
  nodes: { group: '', version: 'v1', resource: 'nodes' },
  services: { group: '', version: 'v1', resource: 'services' },
  endpoints: { group: '', version: 'v1', resource: 'endpoints' },
  namespaces: { group: '', version: 'v1', resource: 'namespaces' },
  configMaps: { group: '', version: 'v1', resource: 'configmaps' },
  secrets: { group: '', version: 'v1', resource: 'secrets' },
  events: { group: '', version: 'v1', resource: 'events' },
  endpointSlices: { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' },
  leases: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' },
} as const satisfies Record<string, ResourceRef>;

/** Namespace and selectors of a typed helper (`factory.pods({ fieldSelector })`). */
export type ScopeOptions = Omit<InformerRequest, 'group' | 'version' | 'resource'>;

/**
 * A client-node model type as the informer delivers it: plain API JSON typed with
 * `@kubernetes/client-node`'s interface (`V1Pod`, ...). Note that timestamps are RFC 3339
 * strings at run time, although client-node types them as `Date`.
 */
export type ApiObject<T> = T & KubeObject;

/**
 * Creates and shares informers. Lifecycle ({@link Lifecycle}): {@link SharedInformerFactory.start | start(signal?)}
 * starts every informer created so far (and later ones on creation) and resolves when they
 * synced; {@link SharedInformerFactory.stop | stop()} stops them all.
 */
export class SharedInformerFactory implements Lifecycle {
  readonly #options: SharedInformerFactoryOptions;
  readonly #informers = new Map<string, SharedInformer>();
  readonly #once = new StartOnce('SharedInformerFactory');
  #stopped = false;

  constructor(options: SharedInformerFactoryOptions) {
    if (!options.listerWatcherFor && !options.kubeConfig) {
      throw new TypeError('SharedInformerFactory needs kubeConfig or listerWatcherFor');
    }
    this.#options = options;
  }

  /** The informer for `request`, created on first use and shared afterwards. */
  informerFor<T extends KubeObject = KubeObject>(request: InformerRequest): SharedInformer<T> {
    const key = requestKey(request);
    let informer = this.#informers.get(key);
    if (!informer) {
      const lw = this.#options.listerWatcherFor
        ? this.#options.listerWatcherFor(request)
        : new RestListerWatcher({
            kubeConfig: this.#options.kubeConfig as KubeConfig,
            path: collectionPath(request),
            // The informers' metrics registry also gets the client's rest_client_* metrics.
            ...definedFields({
              metrics: this.#options.defaults?.metrics,
              rateLimiter: this.#options.rateLimiter,
              logger: this.#options.defaults?.logger,
              clock: this.#options.defaults?.clock,
            }),
          });
      informer = new SharedInformer(lw, {
        ...this.#options.defaults,
        name: key,
        ...definedFields({ labelSelector: request.labelSelector, fieldSelector: request.fieldSelector }),
      });
      this.#informers.set(key, informer);
      // Informers requested after start() start right away (and stop at once after stop()).
      if (this.#stopped) void informer.stop();
      else if (this.#once.started) void informer.start().catch(() => {});
    }
    return informer as unknown as SharedInformer<T>;
  }

  /** core/v1 pods; e.g. `pods({ fieldSelector: 'spec.nodeName=node-1' })`. */
  pods<T extends KubeObject = ApiObject<V1Pod>>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.pods, ...scope });
  }

  /** core/v1 nodes. */
  nodes<T extends KubeObject = ApiObject<V1Node>>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.nodes, ...scope });
  }

  /** core/v1 services. */
  services<T extends KubeObject = ApiObject<V1Service>>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.services, ...scope });
  }

  /** discovery.k8s.io/v1 endpointslices. */
  endpointSlices<T extends KubeObject = ApiObject<V1EndpointSlice>>(
    scope: ScopeOptions = {},
  ): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.endpointSlices, ...scope });
  }

  /** core/v1 namespaces. */
  namespaces<T extends KubeObject = ApiObject<V1Namespace>>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.namespaces, ...scope });
  }

  /** core/v1 configmaps. */
  configMaps<T extends KubeObject = ApiObject<V1ConfigMap>>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.configMaps, ...scope });
  }

  /** core/v1 secrets. */
  secrets<T extends KubeObject = ApiObject<V1Secret>>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.secrets, ...scope });
  }

  /** coordination.k8s.io/v1 leases. */
  leases<T extends KubeObject = ApiObject<V1Lease>>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.leases, ...scope });
  }

  /**
   * Starts every informer created so far (and later ones on creation); resolves when all
   * of them synced. `signal` bounds only that wait: when it aborts first, every informer
   * stops and `start` rejects with the signal's reason. A second call rejects.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        await Promise.all(
          [...this.#informers.values()].map((i) => (i.isStarted ? i.waitForSync() : i.start())),
        );
      },
      () => this.stop(),
    );
  }

  /** Resolves when every informer created so far has synced. */
  async waitForCacheSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
  }

  /** Stops every informer; resolves when their loops exited. Idempotent, safe before `start`. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all([...this.#informers.values()].map((i) => i.stop()));
  }
}

function requestKey(r: InformerRequest): string {
  const gvr = `${r.group || 'core'}/${r.version}/${r.resource}`;
  return `${gvr}|ns=${r.namespace ?? ''}|l=${r.labelSelector ?? ''}|f=${r.fieldSelector ?? ''}`;
}

/**
 * Shares one informer (one list/watch) per resource, namespace and selectors
 * (client-go's `SharedInformerFactory`).
 *
 * @module
 */
import type { KubeConfig } from '@kubernetes/client-node';
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
  /** Defaults applied to every informer (logger, clock, registry, backoff, transform, …). */
  readonly defaults?: FactoryInformerOptions;
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

/** Creates and shares informers; `start` starts every informer created so far. */
export class SharedInformerFactory {
  private readonly options: SharedInformerFactoryOptions;
  private readonly informers = new Map<string, SharedInformer>();
  private signal: AbortSignal | undefined;

  constructor(options: SharedInformerFactoryOptions) {
    if (!options.listerWatcherFor && !options.kubeConfig) {
      throw new TypeError('SharedInformerFactory needs kubeConfig or listerWatcherFor');
    }
    this.options = options;
  }

  /** The informer for `request`, created on first use and shared afterwards. */
  informerFor<T extends KubeObject = KubeObject>(request: InformerRequest): SharedInformer<T> {
    const key = requestKey(request);
    let informer = this.informers.get(key);
    if (!informer) {
      const lw = this.options.listerWatcherFor
        ? this.options.listerWatcherFor(request)
        : new RestListerWatcher({
            kubeConfig: this.options.kubeConfig as KubeConfig,
            path: collectionPath(request),
          });
      informer = new SharedInformer(lw, {
        ...this.options.defaults,
        name: key,
        ...(request.labelSelector !== undefined ? { labelSelector: request.labelSelector } : {}),
        ...(request.fieldSelector !== undefined ? { fieldSelector: request.fieldSelector } : {}),
      });
      this.informers.set(key, informer);
      // Informers requested after start() start right away.
      if (this.signal) void informer.start(this.signal).catch(() => {});
    }
    return informer as unknown as SharedInformer<T>;
  }

  /** core/v1 pods; e.g. `pods({ fieldSelector: 'spec.nodeName=node-1' })`. */
  pods<T extends KubeObject = KubeObject>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.pods, ...scope });
  }

  /** core/v1 nodes. */
  nodes<T extends KubeObject = KubeObject>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.nodes, ...scope });
  }

  /** core/v1 services. */
  services<T extends KubeObject = KubeObject>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.services, ...scope });
  }

  /** discovery.k8s.io/v1 endpointslices. */
  endpointSlices<T extends KubeObject = KubeObject>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.endpointSlices, ...scope });
  }

  /** core/v1 namespaces. */
  namespaces<T extends KubeObject = KubeObject>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.namespaces, ...scope });
  }

  /** core/v1 configmaps. */
  configMaps<T extends KubeObject = KubeObject>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.configMaps, ...scope });
  }

  /** core/v1 secrets. */
  secrets<T extends KubeObject = KubeObject>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.secrets, ...scope });
  }

  /** coordination.k8s.io/v1 leases. */
  leases<T extends KubeObject = KubeObject>(scope: ScopeOptions = {}): SharedInformer<T> {
    return this.informerFor<T>({ ...RESOURCES.leases, ...scope });
  }

  /**
   * Starts every informer created so far (and later ones on creation); resolves when all
   * of them synced. Rejects with `InformerStoppedError` when `signal` aborts first.
   */
  async start(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    await Promise.all(
      [...this.informers.values()].map((i) => (i.isStarted ? i.waitForSync(signal) : i.start(signal))),
    );
  }

  /** Resolves when every informer created so far has synced. */
  async waitForCacheSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
  }

  /** Stops every informer. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}

function requestKey(r: InformerRequest): string {
  const gvr = `${r.group || 'core'}/${r.version}/${r.resource}`;
  return `${gvr}|ns=${r.namespace ?? ''}|l=${r.labelSelector ?? ''}|f=${r.fieldSelector ?? ''}`;
}

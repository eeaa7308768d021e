/**
 * The proxier: informers for Services, EndpointSlices and this Node feed `ProxyState`; a
 * bounded-frequency runner syncs the checkout into a backend (proxy-state's `DataPlaneBackend`),
 * deciding alone whether each sync is full or partial; around it the healthz
 * server, the health-check node ports, stale UDP conntrack cleanup and the `kubeproxy_*`
 * metrics — kube-proxy's loop as a library.
 *
 * @module
 */
import type { KubeConfig, V1EndpointSlice, V1Node, V1Service, V1ServiceCIDR } from '@kubernetes/client-node';
import {
  type Clock,
  definedFields,
  type Lifecycle,
  type Logger,
  type MetricsOptions,
  noopLogger,
  realClock,
  StartOnce,
} from '@nodeagent/core';
import {
  type FactoryInformerOptions,
  type HandlerRegistration,
  type InformerRequest,
  type KubeObject,
  type ListerWatcher,
  objectOf,
  SharedInformerFactory,
} from '@nodeagent/informer';
import {
  collectServiceCIDRs,
  type DataPlaneBackend,
  FULL_SYNC_PERIOD_MS,
  type IPFamily,
  LABEL_TOPOLOGY_ZONE,
  ProxyState,
  type ProxyStateError,
} from '@nodeagent/proxy-state';
import { EventEmitter } from 'eventemitter3';
import { BoundedFrequencyRunner } from './bounded-frequency-runner.js';
import { type ConntrackCleaner, SpawnConntrackCleaner } from './conntrack.js';
import {
  createProxierMetrics,
  type NfacctCounterSource,
  noopProxierMetrics,
  type ProxierMetrics,
  registerNfacctCollectors,
} from './metrics.js';
import { ProxyHealthServer } from './proxy-health-server.js';
import { ServiceHealthServer } from './service-health-server.js';
import { type ProxierSyncResult, SyncLoop } from './sync-loop.js';

/** `networking.k8s.io/v1` ServiceCIDRs (cluster-scoped). */
const SERVICE_CIDRS = { group: 'networking.k8s.io', version: 'v1', resource: 'servicecidrs' } as const;

/** Options of {@link Proxier}. */
export interface ProxierOptions {
  /** This node's name: local endpoints, node hints, and the Node object watched for labels. */
  readonly nodeName: string;
  /**
   * The data plane: `IptablesBackend` (`@nodeagent/iptables`), `NftablesBackend`
   * (`@nodeagent/nftables`), `IpvsBackend` (`@nodeagent/ipvs`) or your own; see
   * {@link loadBackendModule} to load one by mode name.
   */
  readonly backend: DataPlaneBackend;
  /**
   * An existing informer factory to share: the proxier takes its Services, EndpointSlices,
   * Node (`metadata.name=<nodeName>`) and ServiceCIDRs informers from it, so an agent that
   * watches the same resources (its kubelet half) opens one watch per resource. The owner of
   * the factory starts and stops it: the proxier's `start` waits until its own informers synced
   * (so it resolves only once the factory is started, before or after), and its `stop` removes
   * the proxier's handlers without stopping the factory. `informer` options do not apply to it.
   * @default a factory of the proxier's own, built from `kubeConfig` / `listerWatcherFor`, started and stopped with it
   */
  readonly informerFactory?: SharedInformerFactory;
  /** API access; required unless `listerWatcherFor` or `informerFactory` is given. */
  readonly kubeConfig?: KubeConfig;
  /** Builds each informer's ListerWatcher (tests: `FakeListerWatcher`); unused with `informerFactory`. */
  readonly listerWatcherFor?: (request: InformerRequest) => ListerWatcher;
  /** This node's IPs (primary first). @default taken from the Node's addresses */
  readonly nodeIPs?: readonly string[];
  /**
   * kube-proxy's `--iptables-sync-period`: retry interval after a failed sync; the health
   * timeout is twice this.
   * @default 30000
   */
  readonly syncPeriodMs?: number;
  /**
   * kube-proxy's `--iptables-min-sync-period`: least time between the end of one sync and the
   * start of the next; changes arriving meanwhile are coalesced.
   * @default 1000
   */
  readonly minSyncPeriodMs?: number;
  /**
   * A full sync at least this often (and a sync at least this often without changes):
   * kube-proxy's `proxyutil.FullSyncPeriod`. The proxier's sync loop is the one place that
   * decides whether a sync is full; see `FULL_SYNC_PERIOD_MS` in `@nodeagent/proxy-state`.
   * @default FULL_SYNC_PERIOD_MS (3600000, one hour)
   */
  readonly fullSyncPeriodMs?: number;
  /**
   * The healthz server (`/healthz`, `/livez`); `false` disables it.
   * @default { bindAddress: '0.0.0.0:10256' }
   */
  readonly healthz?: false | { readonly bindAddress?: string };
  /**
   * Health-check node ports of `externalTrafficPolicy: Local` services; `false` disables them.
   * @default { bindAddresses: [] } (every address)
   */
  readonly healthCheckNodePorts?: false | { readonly bindAddresses?: readonly string[] };
  /**
   * Stale UDP conntrack cleanup after each sync; `false` disables it.
   * @default new SpawnConntrackCleaner()
   */
  readonly conntrack?: false | ConntrackCleaner;
  /** Honour node hints (`PreferSameNode`). @default true */
  readonly preferSameTrafficDistribution?: boolean;
  /**
   * Watch `ServiceCIDR` objects (`networking.k8s.io/v1`) and hand their CIDRs to the backend
   * (`setServiceCIDRs`), as kube-proxy does for nftables' `cluster-ips-check`. The watch does
   * not hold back the first sync (kube-proxy waits for Services and EndpointSlices only).
   * @default true when the backend implements `setServiceCIDRs`
   */
  readonly serviceCIDRs?: boolean;
  /** Options for every informer (backoff, idle timeout, …). @default {} */
  readonly informer?: FactoryInformerOptions;
  /**
   * iptables mode: the nfacct counters behind `kubeproxy_iptables_ct_state_invalid_dropped_packets_total`
   * and `kubeproxy_iptables_localhost_nodeports_accepted_packets_total`, read on each scrape
   * (with `metrics`). @default no nfacct metrics
   */
  readonly nfacct?: NfacctCounterSource;
  /** Where the `kubeproxy_*` metrics go. @default no metrics */
  readonly metrics?: MetricsOptions;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** Events of a {@link Proxier} (eventemitter3, typed). */
export interface ProxierEvents {
  /** A Service or EndpointSlice was skipped as invalid (its previous version withdrawn); others are still programmed. */
  objectError: [error: ProxyStateError];
  /** The backend skipped a service port for bad input; others were programmed. */
  renderError: [error: Error, family: IPFamily];
  /** A family's sync failed; a full sync is retried after `syncPeriodMs`. */
  syncError: [error: unknown, family: IPFamily];
  /** A sync finished (successfully or not, see `result.failed`). */
  synced: [result: ProxierSyncResult];
  /** Deleting stale conntrack entries failed. */
  conntrackError: [error: unknown];
  /** A health-check node port could not be opened (retried on the next sync). */
  healthCheckError: [error: Error, service: string, port: number];
  /** An informer list/watch failed (it retries on its own). */
  informerError: [error: Error, resource: string];
}

/**
 * kube-proxy as a library. Nothing happens before {@link start}; no rule is written before the
 * Service, EndpointSlice and Node informers have synced.
 *
 * @example
 * ```ts
 * const proxier = new Proxier({
 *   kubeConfig, nodeName: 'node-a',
 *   backend: new NftablesBackend({ ipv4: { executor: new SpawnNftExecutor() } }),
 * });
 * proxier.on('objectError', (e) => console.warn(e.message));
 * await proxier.start(signal);
 * ```
 */
export class Proxier extends EventEmitter<ProxierEvents> implements Lifecycle {
  /** The proxy-side state the informers feed. */
  readonly state: ProxyState;
  /** The backend. */
  readonly backend: DataPlaneBackend;
  /** The healthz server, unless disabled. */
  readonly healthz: ProxyHealthServer | undefined;
  /** The health-check node-port servers, unless disabled. */
  readonly healthCheckServer: ServiceHealthServer | undefined;
  /** The sync runner (min/retry/max intervals). */
  readonly runner: BoundedFrequencyRunner;
  readonly #options: ProxierOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #loop: SyncLoop;
  #metrics: ProxierMetrics = noopProxierMetrics;
  #factory: SharedInformerFactory | undefined;
  /** False when the factory was given (`informerFactory`): it is not ours to stop. */
  #ownsFactory = true;
  /** Aborts the wait for the informers when the proxier is stopped during `start`. */
  #startAbort: AbortController | undefined;
  #registrations: HandlerRegistration[] = [];
  #initialized = false;
  readonly #once = new StartOnce('Proxier');
  #stopped = false;
  #node: { readonly zone: string; readonly addresses: string } = { zone: '', addresses: '' };

  /**
   * @param options - See {@link ProxierOptions}.
   * @throws TypeError without `informerFactory`, `kubeConfig` or `listerWatcherFor`.
   */
  constructor(options: ProxierOptions) {
    super();
    if (!options.informerFactory && !options.kubeConfig && !options.listerWatcherFor) {
      throw new TypeError('Proxier needs informerFactory, kubeConfig or listerWatcherFor');
    }
    this.#options = options;
    this.backend = options.backend;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'proxier', backend: options.backend.name });
    const syncPeriodMs = options.syncPeriodMs ?? 30_000;
    this.state = new ProxyState({
      nodeName: options.nodeName,
      ...definedFields({
        nodeIPs: options.nodeIPs,
        preferSameTrafficDistribution: options.preferSameTrafficDistribution,
      }),
      logger: this.#log,
    });
    const metrics: ProxierMetrics = {
      ...noopProxierMetrics,
      healthRequest: (e, c) => this.#metrics.healthRequest(e, c),
    };
    this.healthz =
      options.healthz === false
        ? undefined
        : new ProxyHealthServer({
            healthTimeoutMs: 2 * syncPeriodMs,
            clock: this.#clock,
            logger: this.#log,
            metrics,
            ...definedFields({ bindAddress: options.healthz?.bindAddress }),
          });
    this.healthCheckServer =
      options.healthCheckNodePorts === false
        ? undefined
        : new ServiceHealthServer({
            bindAddresses: options.healthCheckNodePorts?.bindAddresses ?? [],
            proxyHealthy: () => this.healthz?.isHealthy() ?? true,
            onListenError: (svc, port, err) => this.emit('healthCheckError', err, svc, port),
            logger: this.#log,
          });
    this.#loop = new SyncLoop({
      state: this.state,
      backend: this.backend,
      clock: this.#clock,
      logger: this.#log,
      fullSyncPeriodMs: options.fullSyncPeriodMs ?? FULL_SYNC_PERIOD_MS,
      healthz: this.healthz,
      healthCheckServer: this.healthCheckServer,
      conntrack: options.conntrack === false ? undefined : (options.conntrack ?? new SpawnConntrackCleaner()),
      metrics: () => this.#metrics,
      emit: (event, ...args) => (this.emit as (e: string, ...a: unknown[]) => boolean)(event, ...args),
      requestRun: () => this.runner.run(),
    });
    this.runner = new BoundedFrequencyRunner({
      name: 'sync-proxy-rules',
      fn: () => this.#loop.sync(),
      minIntervalMs: options.minSyncPeriodMs ?? 1_000,
      retryIntervalMs: syncPeriodMs,
      maxIntervalMs: options.fullSyncPeriodMs ?? FULL_SYNC_PERIOD_MS,
      clock: this.#clock,
      logger: this.#log,
    });
    this.backend.attach?.({
      requestFullSync: (reason) => {
        this.#log.info({ reason }, 'backend requested a full sync');
        this.#loop.requestFullSync();
        if (this.#initialized && !this.#stopped) this.#queueSync();
      },
    });
  }

  /** True once the informers synced and the first sync was requested. */
  get initialized(): boolean {
    return this.#initialized;
  }

  /** Syncs run so far (successful or not). */
  get syncCount(): number {
    return this.#loop.syncCount;
  }

  /** The result of the latest sync. */
  get lastSyncResult(): ProxierSyncResult | undefined {
    return this.#loop.lastResult;
  }

  /**
   * Starts metrics, the healthz server, the runner and the informers; resolves once the
   * informers synced and the first sync was requested. `signal` bounds only that wait: when
   * it aborts first, `start` rejects with its reason and everything started is stopped;
   * aborting it later does nothing (end the proxier with {@link stop}). A second `start`
   * rejects with `AlreadyStartedError`.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      () => this.#start(signal),
      () => this.stop(),
    );
  }

  async #start(signal: AbortSignal | undefined): Promise<void> {
    const o = this.#options;
    if (o.metrics) this.#metrics = createProxierMetrics(o.metrics);
    if (o.metrics && o.nfacct) registerNfacctCollectors(o.metrics, o.nfacct, this.#log);
    await this.healthz?.start(signal);
    await this.runner.start();
    const factory =
      o.informerFactory ??
      new SharedInformerFactory({
        ...definedFields({ kubeConfig: o.kubeConfig, listerWatcherFor: o.listerWatcherFor }),
        defaults: { logger: this.#log, ...o.informer },
      });
    this.#factory = factory;
    this.#ownsFactory = o.informerFactory === undefined;
    const services = factory.services<V1Service & KubeObject>();
    const slices = factory.endpointSlices<V1EndpointSlice & KubeObject>();
    const nodes = factory.nodes<V1Node & KubeObject>({ fieldSelector: `metadata.name=${o.nodeName}` });
    for (const [name, inf] of [
      ['services', services],
      ['endpointslices', slices],
      ['nodes', nodes],
    ] as const) {
      inf.on('watchError', (err) => this.emit('informerError', err, name));
    }
    this.#registrations = [
      services.addEventHandler(
        {
          onAdd: (s) => this.#changed(this.state.onServiceAdd(s)),
          onUpdate: (old, s) => this.#changed(this.state.onServiceUpdate(old, s)),
          onDelete: (s) => this.#changed(this.state.onServiceDelete(objectOf(s))),
        },
        { name: 'proxier' },
      ),
      slices.addEventHandler(
        {
          onAdd: (s) => this.#changed(this.state.onEndpointSliceAdd(s)),
          onUpdate: (old, s) => this.#changed(this.state.onEndpointSliceUpdate(old, s)),
          onDelete: (s) => this.#changed(this.state.onEndpointSliceDelete(objectOf(s))),
        },
        { name: 'proxier' },
      ),
      nodes.addEventHandler(
        {
          onAdd: (n) => this.#nodeChanged(n),
          onUpdate: (_old, n) => this.#nodeChanged(n),
          onDelete: () => {
            // A deleted Node is not eligible for traffic (healthz 503); rules stay as they are.
            this.healthz?.syncNode({ metadata: { name: o.nodeName, deletionTimestamp: new Date(0) } });
          },
        },
        { name: 'proxier' },
      ),
    ];
    const ac = new AbortController();
    this.#startAbort = ac;
    if (this.#stopped) ac.abort(new Error('Proxier stopped before its informers synced'));
    const abort = () => ac.abort(signal?.reason);
    signal?.addEventListener('abort', abort, { once: true });
    try {
      if (this.#ownsFactory) await factory.start(ac.signal);
      // A shared factory is started by its owner (before or after us): wait for our informers.
      else await Promise.all([services, slices, nodes].map((i) => i.waitForSync(ac.signal)));
      // The informers synced; wait until our handlers have processed the initial lists.
      while (!this.#registrations.every((r) => r.hasSynced())) {
        if (this.#stopped) throw new Error('Proxier stopped before its informers synced');
        await new Promise<void>((r) => setImmediate(r));
      }
    } finally {
      signal?.removeEventListener('abort', abort);
    }
    if (this.#stopped) throw new Error('Proxier stopped before its informers synced');
    this.#watchServiceCIDRs(factory);
    this.#initialized = true;
    this.#loop.initialized = true;
    this.#log.info({ node: o.nodeName }, 'informers synced; first sync requested');
    this.#queueSync();
  }

  /** Stops informers, the runner and every server. Rules stay in place (see `backend.cleanup()`). */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#loop.close();
    this.#startAbort?.abort(new Error('Proxier stopped before its informers synced'));
    if (this.#ownsFactory) await this.#factory?.stop();
    else for (const r of this.#registrations) r.remove();
    await this.runner.stop();
    await this.healthz?.stop();
    await this.healthCheckServer?.close();
    this.backend.close?.();
  }

  #changed(result: { readonly pending: boolean; readonly error: ProxyStateError | null }): void {
    if (result.error) this.emit('objectError', result.error);
    this.#metrics.changes(this.state.changeCounts);
    if (result.pending && this.#initialized) this.#queueSync();
  }

  #nodeChanged(node: V1Node): void {
    this.healthz?.syncNode(node);
    const zone = node.metadata?.labels?.[LABEL_TOPOLOGY_ZONE] ?? '';
    const addresses = (node.status?.addresses ?? []).map((a) => `${a.type}=${a.address}`).join(',');
    const result = this.state.onNodeUpdate(node);
    const before = this.#node;
    this.#node = { zone, addresses };
    // A topology label change touches every service (kube-proxy: needFullSync + Sync).
    const zoneChanged = before.zone !== zone;
    if (zoneChanged) this.#loop.requestFullSync();
    const changed = zoneChanged || before.addresses !== addresses;
    if (this.#initialized && (result.pending || changed)) this.#queueSync();
  }

  #watchServiceCIDRs(factory: SharedInformerFactory): void {
    const backend = this.backend;
    if (this.#options.serviceCIDRs === false || backend.setServiceCIDRs === undefined) return;
    // Started after the others synced: the factory does not wait for it.
    const informer = factory.informerFor<V1ServiceCIDR & KubeObject>(SERVICE_CIDRS);
    informer.on('watchError', (err) => this.emit('informerError', err, 'servicecidrs'));
    const changed = () => {
      const all = informer.lister.list();
      const cidrs = [...collectServiceCIDRs(all, 4).cidrs, ...collectServiceCIDRs(all, 6).cidrs];
      if (backend.setServiceCIDRs?.(cidrs)) {
        this.#log.info({ cidrs }, 'service CIDRs changed');
        this.#loop.requestFullSync();
        if (!this.#stopped) this.#queueSync();
      }
    };
    this.#registrations.push(
      informer.addEventHandler(
        { onAdd: changed, onUpdate: changed, onDelete: changed },
        { name: 'proxier-servicecidrs' },
      ),
    );
  }

  #queueSync(): void {
    for (const f of this.backend.families) this.healthz?.queuedUpdate(f);
    this.#metrics.lastQueuedTimestamp(this.#clock.now() / 1000);
    this.runner.run();
  }
}

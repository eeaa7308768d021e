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
  type RequestRateLimiter,
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
  type ProxySnapshot,
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
   *
   * Dual-stack as kube-proxy runs it: an array with one backend per IP family (primary family
   * first), each configured for its family only. Each gets a sync loop and a runner of its own
   * (kube-proxy's per-family proxiers behind its MetaProxier): a family syncs when its own
   * Services or EndpointSlices changed, fails and retries on its own, and reports its own
   * `ip_family`-labelled metrics; healthz is healthy only while every family is. One backend
   * configured for both families also works (one loop syncs both together).
   */
  readonly backend: DataPlaneBackend | readonly DataPlaneBackend[];
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
  /**
   * The client config's request limiter for the proxier's own factory's lists (kube-proxy's
   * `clientConnection.qps`/`burst`, built with `restClientRateLimiter` of `@nodeagent/informer`).
   * Unused with `informerFactory` (its own limiter applies). @default no client-side limit
   */
  readonly rateLimiter?: RequestRateLimiter;
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

/** One family runner of a {@link Proxier}: a backend with its own sync loop and runner. */
interface FamilyRunner {
  readonly backend: DataPlaneBackend;
  readonly loop: SyncLoop;
  readonly runner: BoundedFrequencyRunner;
}

/**
 * The backends of `option`, checked: at least one, and no family programmed by two.
 * @throws TypeError naming the backends that share a family
 */
function backendsOf(option: DataPlaneBackend | readonly DataPlaneBackend[]): readonly DataPlaneBackend[] {
  const list: readonly DataPlaneBackend[] = Array.isArray(option)
    ? (option as readonly DataPlaneBackend[])
    : [option as DataPlaneBackend];
  if (list.length === 0) throw new TypeError('Proxier needs at least one backend');
  const owner = new Map<IPFamily, string>();
  for (const b of list) {
    for (const f of b.families) {
      const other = owner.get(f);
      if (other !== undefined) {
        throw new TypeError(
          `Proxier backends ${other} and ${b.name} both program IPv${f}: give one backend per IP family`,
        );
      }
      owner.set(f, b.name);
    }
  }
  return list;
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
  /** This node's Node object was added or updated (kube-proxy's `NodeManager.OnNodeChange`). */
  nodeChanged: [node: V1Node];
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
  /** The backend (the first of {@link backends}: the primary family's in dual-stack). */
  readonly backend: DataPlaneBackend;
  /** Every backend, one per family runner (one unless dual-stack with a backend per family). */
  readonly backends: readonly DataPlaneBackend[];
  /** The healthz server, unless disabled. */
  readonly healthz: ProxyHealthServer | undefined;
  /** The health-check node-port servers, unless disabled. */
  readonly healthCheckServer: ServiceHealthServer | undefined;
  /** The sync runner (min/retry/max intervals) of the first backend. */
  readonly runner: BoundedFrequencyRunner;
  /** One runner per backend (per family in dual-stack), in the order of {@link backends}. */
  readonly runners: readonly BoundedFrequencyRunner[];
  readonly #options: ProxierOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #runners: readonly FamilyRunner[];
  /** Each family's latest snapshot, for the shared health-check node ports. */
  readonly #latest = new Map<IPFamily, ProxySnapshot>();
  #lastResult: ProxierSyncResult | undefined;
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
    this.backends = backendsOf(options.backend);
    this.backend = this.backends[0]!;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'proxier', backend: this.backend.name });
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
    const conntrack =
      options.conntrack === false ? undefined : (options.conntrack ?? new SpawnConntrackCleaner());
    const dualRunners = this.backends.length > 1;
    this.#runners = this.backends.map((backend) => {
      const log = dualRunners ? this.#log.child({ ipFamily: backend.families.join(',') }) : this.#log;
      let runner: BoundedFrequencyRunner | undefined;
      const loop = new SyncLoop({
        state: this.state,
        backend,
        clock: this.#clock,
        logger: log,
        fullSyncPeriodMs: options.fullSyncPeriodMs ?? FULL_SYNC_PERIOD_MS,
        healthz: this.healthz,
        healthCheckServer: this.healthCheckServer,
        conntrack,
        metrics: () => this.#metrics,
        emit: (event, ...args) => {
          if (event === 'synced') this.#lastResult = args[0] as ProxierSyncResult;
          (this.emit as (e: string, ...a: unknown[]) => boolean)(event, ...args);
        },
        requestRun: () => runner?.run(),
        ...(dualRunners
          ? {
              healthCheckSnapshots: (own: readonly ProxySnapshot[]) => {
                for (const snap of own) this.#latest.set(snap.ipFamily, snap);
                return [...this.#latest.values()];
              },
            }
          : {}),
      });
      runner = new BoundedFrequencyRunner({
        name: 'sync-proxy-rules',
        fn: () => loop.sync(),
        minIntervalMs: options.minSyncPeriodMs ?? 1_000,
        retryIntervalMs: syncPeriodMs,
        maxIntervalMs: options.fullSyncPeriodMs ?? FULL_SYNC_PERIOD_MS,
        clock: this.#clock,
        logger: log,
      });
      return { backend, loop, runner };
    });
    this.runners = this.#runners.map((r) => r.runner);
    this.runner = this.runners[0]!;
    for (const fr of this.#runners) {
      fr.backend.attach?.({
        requestFullSync: (reason) => {
          this.#log.info(
            { reason, ipFamily: fr.backend.families.join(',') },
            'backend requested a full sync',
          );
          fr.loop.requestFullSync();
          if (this.#initialized && !this.#stopped) this.#queueSync([fr]);
        },
      });
    }
  }

  /** True once the informers synced and the first sync was requested. */
  get initialized(): boolean {
    return this.#initialized;
  }

  /** Syncs run so far (successful or not). */
  get syncCount(): number {
    let n = 0;
    for (const r of this.#runners) n += r.loop.syncCount;
    return n;
  }

  /** The result of the latest sync (of any family runner). */
  get lastSyncResult(): ProxierSyncResult | undefined {
    return this.#lastResult;
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
    for (const r of this.#runners) await r.runner.start();
    const factory =
      o.informerFactory ??
      new SharedInformerFactory({
        ...definedFields({
          kubeConfig: o.kubeConfig,
          listerWatcherFor: o.listerWatcherFor,
          rateLimiter: o.rateLimiter,
        }),
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
    for (const r of this.#runners) r.loop.initialized = true;
    this.#log.info({ node: o.nodeName }, 'informers synced; first sync requested');
    this.#queueSync();
  }

  /** Stops informers, the runner and every server. Rules stay in place (see `backend.cleanup()`). */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const r of this.#runners) r.loop.close();
    this.#startAbort?.abort(new Error('Proxier stopped before its informers synced'));
    if (this.#ownsFactory) await this.#factory?.stop();
    else for (const r of this.#registrations) r.remove();
    for (const r of this.#runners) await r.runner.stop();
    await this.healthz?.stop();
    await this.healthCheckServer?.close();
    for (const r of this.#runners) r.backend.close?.();
  }

  #changed(result: { readonly pending: boolean; readonly error: ProxyStateError | null }): void {
    if (result.error) this.emit('objectError', result.error);
    this.#metrics.changes(this.state.changeCounts);
    if (!result.pending || !this.#initialized) return;
    // Each family runner syncs only when its own families have something pending (kube-proxy's
    // per-family proxiers each decide from their own change trackers).
    this.#queueSync(
      this.#runners.length === 1
        ? this.#runners
        : this.#runners.filter((r) => r.backend.families.some((f) => this.state.hasPending(f))),
    );
  }

  #nodeChanged(node: V1Node): void {
    this.healthz?.syncNode(node);
    this.emit('nodeChanged', node);
    const zone = node.metadata?.labels?.[LABEL_TOPOLOGY_ZONE] ?? '';
    const addresses = (node.status?.addresses ?? []).map((a) => `${a.type}=${a.address}`).join(',');
    const result = this.state.onNodeUpdate(node);
    const before = this.#node;
    this.#node = { zone, addresses };
    // A topology label change touches every service (kube-proxy: needFullSync + Sync).
    const zoneChanged = before.zone !== zone;
    if (zoneChanged) for (const r of this.#runners) r.loop.requestFullSync();
    const changed = zoneChanged || before.addresses !== addresses;
    if (this.#initialized && (result.pending || changed)) this.#queueSync();
  }

  #watchServiceCIDRs(factory: SharedInformerFactory): void {
    const withCIDRs = this.#runners.filter((r) => r.backend.setServiceCIDRs !== undefined);
    if (this.#options.serviceCIDRs === false || withCIDRs.length === 0) return;
    // Started after the others synced: the factory does not wait for it.
    const informer = factory.informerFor<V1ServiceCIDR & KubeObject>(SERVICE_CIDRS);
    informer.on('watchError', (err) => this.emit('informerError', err, 'servicecidrs'));
    const changed = () => {
      const all = informer.lister.list();
      const cidrs = [...collectServiceCIDRs(all, 4).cidrs, ...collectServiceCIDRs(all, 6).cidrs];
      const rewrite = withCIDRs.filter((r) => r.backend.setServiceCIDRs?.(cidrs));
      if (rewrite.length === 0) return;
      this.#log.info({ cidrs }, 'service CIDRs changed');
      for (const r of rewrite) r.loop.requestFullSync();
      if (!this.#stopped) this.#queueSync(rewrite);
    };
    this.#registrations.push(
      informer.addEventHandler(
        { onAdd: changed, onUpdate: changed, onDelete: changed },
        { name: 'proxier-servicecidrs' },
      ),
    );
  }

  #queueSync(runners: readonly FamilyRunner[] = this.#runners): void {
    if (runners.length === 0) return;
    for (const r of runners) for (const f of r.backend.families) this.healthz?.queuedUpdate(f);
    this.#metrics.lastQueuedTimestamp(this.#clock.now() / 1000);
    for (const r of runners) r.runner.run();
  }
}

/**
 * `runAgent`: wires the packages into a node agent — API access (an embedded
 * `@nodeagent/mini-apiserver` or a kubeconfig), a CRI runtime (an in-process fake or a
 * real endpoint), PLEG, the pod workers with the {@link AgentPodSyncer} callbacks, the pod
 * sources (API server, manifest directory, URL) with admission and mirror pods, node
 * registration/status/lease and `/healthz` — and stops it all cleanly.
 *
 * @module
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { KubeConfig, type V1Node, type V1Taint } from '@kubernetes/client-node';
import {
  type PodAdmitHandler,
  PodAdmitter,
  PredicateAdmitHandler,
  SysctlAllowlist,
} from '@nodeagent/admission';
import {
  type Clock,
  createPromMetricsProvider,
  definedFields,
  type Logger,
  noopLogger,
  realClock,
  WorkQueue,
} from '@nodeagent/core';
import { type CriClient, createCriClient } from '@nodeagent/cri';
import type { FakeRuntime } from '@nodeagent/cri/testing';
import {
  apiClientEventSink,
  EventRecorder,
  nodeReference,
  podEventRecorder,
  StartingKubelet,
} from '@nodeagent/events';
import { type ApiObject, restClientRateLimiter, SharedInformerFactory } from '@nodeagent/informer';
import { criPodStatusSource, criRuntimeLister } from '@nodeagent/kubecontainer';
import { HealthzServer, type KubeletServer } from '@nodeagent/kubelet-server';
import { KubeRuntimeManager } from '@nodeagent/kuberuntime';
import { type MiniApiServer, startMiniApiServer } from '@nodeagent/mini-apiserver';
import { type CachedPodStatus, GenericPLEG } from '@nodeagent/pleg';
import { isPodPhaseTerminal, PodWorkers } from '@nodeagent/pod-workers';
import { criCommandRunner, ProbeManager } from '@nodeagent/prober';
import type { SummaryProvider } from '@nodeagent/stats';
import {
  type MachineInfo,
  type NodeLease,
  type NodePressureProvider,
  type NodeStatusManager,
  type PodStatusManager,
  type ResourceList,
  readMachineInfo,
} from '@nodeagent/status';
import type { VolumeManager } from '@nodeagent/volumes';
import { ApiClient } from './api-client.js';
import {
  type CgroupFlags,
  CgroupPodSyncer,
  createPodCgroups,
  runtimeRunsPod,
  startOrphanCgroupCleanup,
} from './cgroups-wiring.js';
import { SimulatedNodeMemory } from './demo-memory-pressure.js';
import { type DnsSettings, dnsOptions } from './dns-wiring.js';
import { type EmbeddedImagePolicy, startEmbeddedRuntime } from './embedded-runtime.js';
import { PodEnvSources } from './env-sources-wiring.js';
import { createEvictionParts, type EvictionSettings } from './eviction-wiring.js';
import { type InClusterOptions, inClusterKubeConfig } from './in-cluster.js';
import {
  createEmbeddedKubeletClient,
  type EmbeddedKubeletClient,
  type KubeletServerSettings,
  startKubeletServer,
} from './kubelet-server-wiring.js';
import { createLogRotation, type LogRotationSettings } from './log-rotation-wiring.js';
import { createAgentMetrics } from './metrics-wiring.js';
import { DEFAULT_NODE_TUNING, imagePullLimit, type NodeTuningSettings } from './node-tuning-wiring.js';
import { PodLifecycle, type PodObject } from './pod-lifecycle.js';
import { type PodSources, startPodSources } from './pod-sources.js';
import { AgentPodSyncer } from './pod-syncer.js';
import { type AgentProxy, type ProxySettings, startAgentProxy } from './proxy-wiring.js';
import { createAgentStats, podVolumeLister } from './stats-wiring.js';
import { createStatusParts, runtimeAllocatable } from './status-wiring.js';
import { enforceSwapPolicy } from './swap-check.js';
import { TrackedSyncer } from './tracked-syncer.js';
import { createVolumeParts } from './volumes-wiring.js';

/** The kubelet's `SyncLoopHealthCheck` bound: max(2 × syncFrequency, 5 min). */
const SYNC_LOOP_HEALTH_MS = 5 * 60_000;

/** Options of {@link runAgent}. Timings default to the kubelet's. */
export interface AgentOptions {
  /**
   * Cancels a start that is still waiting (kube-proxy's wait for the Node's PodCIDRs with
   * `--detect-local-mode NodeCIDR`): `runAgent` cleans up and rejects with the signal's reason.
   */
  readonly startSignal?: AbortSignal | undefined;
  /** This node's name. */
  readonly nodeName: string;
  /** Use this kubeconfig's API server instead of starting the embedded one. @default embedded */
  readonly kubeconfigPath?: string | undefined;
  /** CRI endpoint (`unix:///…`) of a real runtime instead of the in-process fake. @default fake */
  readonly runtimeEndpoint?: string | undefined;
  /** `spec.podCIDR`, also sent to the runtime (UpdateRuntimeConfig). @default none */
  readonly podCidr?: string | undefined;
  /** The node's InternalIP (pods' hostIP); `a,b` for dual stack (`--node-ip`). @default the machine's first IPv4 address */
  readonly nodeIp?: string | undefined;
  /** Labels set at registration (`--node-labels`). @default none */
  readonly nodeLabels?: Readonly<Record<string, string>> | undefined;
  /** Taints set at registration (`--register-with-taints`). @default none */
  readonly registerWithTaints?: readonly V1Taint[] | undefined;
  /** `--kube-reserved`. @default none */
  readonly kubeReserved?: ResourceList | undefined;
  /** `--system-reserved`. @default none */
  readonly systemReserved?: ResourceList | undefined;
  /** `--cgroup-driver`, `--cgroup-root`, `--cgroups-per-qos`, `--enforce-node-allocatable` (real runtimes only). @default the kubelet's */
  readonly cgroups?: Partial<CgroupFlags> | undefined;
  /** `--max-pods`. @default 110 */
  readonly maxPods?: number | undefined;
  /** Pod DNS: `--cluster-dns`, `--cluster-domain`, `--resolv-conf`. @default no cluster DNS, `cluster.local`, `/etc/resolv.conf` */
  readonly dns?: DnsSettings | undefined;
  /** Memory/disk/PID pressure for the node conditions (an eviction manager). @default no pressure */
  readonly pressure?: NodePressureProvider | undefined;
  /** Eviction thresholds and GC policy (kubelet flags, see eviction-wiring.ts). @default the kubelet's */
  readonly eviction?: EvictionSettings | undefined;
  /** Container log rotation (kubelet flags, see log-rotation-wiring.ts). @default the kubelet's (10Mi, 5 files) */
  readonly logRotation?: LogRotationSettings | undefined;
  /** The kubelet's `volumeStatsAggPeriod`: how often pod volumes are measured for `pods[].volume`, ms (≤ 0: off). @default 60_000 */
  readonly volumeStatsAggPeriodMs?: number | undefined;
  /** Node and pod stats for eviction (`@nodeagent/stats`). @default none: eviction off, GC on */
  readonly summaryProvider?: SummaryProvider | undefined;
  /**
   * Embedded demo: eviction sees a node with this much memory used only by the pods' working
   * sets (demo-memory-pressure.ts), not the machine's. @default the machine's memory
   */
  readonly simulatedNodeMemoryBytes?: number | undefined;
  /** Pod directories (volumes, container files). @default `<rootDir>/pods`, else a temp dir removed at stop */
  readonly podsRoot?: string | undefined;
  /** The kubelet's `--root-dir`; pod directories go to `<rootDir>/pods`. @default none (see `podsRoot`) */
  readonly rootDir?: string | undefined;
  /**
   * Memory-backed volumes (emptyDir `medium: Memory`, secret, downwardAPI, projected): on tmpfs
   * (the kubelet's way; needs root) or, for the fake runtime without root, in plain directories
   * (`--volume-memory-medium=directory`; secrets then touch the disk). @default 'tmpfs'
   */
  readonly volumeMemoryMedium?: 'tmpfs' | 'directory' | undefined;
  /** Pod log directories. @default a temp dir removed at stop */
  readonly podLogsRoot?: string | undefined;
  /** Serve `/healthz` on 127.0.0.1:port (0: any free port); overrides the kubelet server's healthz port. @default off */
  readonly healthPort?: number | undefined;
  /** Serve the kubelet API (`@nodeagent/kubelet-server`, kubelet-server-wiring.ts). @default off */
  readonly kubeletServer?: KubeletServerSettings | undefined;
  /**
   * `--kube-api-qps`, `--kube-api-burst`, `--event-qps`, `--event-burst`, `--node-status-max-images`, `--pods-per-core`,
   * `--register-node`, `--pod-max-pids`, `--runtime-request-timeout`, `--serialize-image-pulls`
   * (with `maxParallelImagePulls`), `--enable-server` (node-tuning-wiring.ts).
   * @default the kubelet's (DEFAULT_NODE_TUNING)
   */
  readonly nodeTuning?: Partial<NodeTuningSettings> | undefined;
  /** CrashLoopBackOff cap, ms (`maxContainerRestartPeriod`; below 10 s it also lowers the first delay). @default 300_000 */
  readonly crashLoopBackOffMaxMs?: number | undefined;
  /** PLEG relist period, ms. @default 1000 */
  readonly relistPeriodMs?: number;
  /** Housekeeping period, ms. @default 2000 */
  readonly housekeepingMs?: number;
  /** Pod resync after a successful sync, ms. @default 60_000 */
  readonly resyncIntervalMs?: number;
  /** Pod retry after a failed sync, ms. @default 10_000 */
  readonly backOffPeriodMs?: number;
  /** Node status computation period, ms. @default 10_000 */
  readonly nodeStatusUpdateMs?: number;
  /** `--pod-manifest-path`: static pod manifests (a directory or one file). @default none */
  readonly podManifestPath?: string | undefined;
  /** `--manifest-url`: a URL serving a Pod or PodList. @default none */
  readonly manifestUrl?: string | undefined;
  /** `--manifest-url-header`: request headers of the manifest URL. @default none */
  readonly manifestUrlHeaders?: readonly (readonly [string, string])[] | undefined;
  /** Manifest directory and URL re-read period, ms (`fileCheckFrequency`, `httpCheckFrequency`). @default 20_000 */
  readonly manifestCheckMs?: number | undefined;
  /** `--allowed-unsafe-sysctls`: sysctls (or `prefix*`) pods may set besides the safe ones. @default none */
  readonly allowedUnsafeSysctls?: readonly string[] | undefined;
  /** Lease duration, s (renewed every quarter). @default 40 */
  readonly leaseDurationSeconds?: number | undefined;
  /** How often an unchanged node status is still posted, ms (`nodeStatusReportFrequency`). @default 300_000 */
  readonly nodeStatusReportFrequencyMs?: number | undefined;
  /**
   * Without `kubeconfigPath`: use the in-cluster configuration (in-cluster.ts) instead of the
   * embedded API server. The CLI sets it when `KUBERNETES_SERVICE_HOST`/`PORT` are set.
   * @default undefined (embedded API server)
   */
  readonly inCluster?: InClusterOptions | undefined;
  /** `--fail-swap-on` (swap-check.ts). @default true on a real runtime; on the embedded fake runtime a warning only */
  readonly failSwapOn?: boolean | undefined;
  /** The file swap is read from (tests). @default '/proc/swaps' */
  readonly procSwapsPath?: string | undefined;
  /** `--embedded-image-policy`: images the embedded fake runtime lacks are simulated, or fail. @default 'simulate' */
  readonly embeddedImagePolicy?: EmbeddedImagePolicy | undefined;
  /**
   * kube-proxy in the agent (proxy-wiring.ts): `--proxy-mode` and the other proxy flags.
   * The CLI's default is `iptables` rendered in memory on the embedded fake runtime, `none` on
   * a real one (cli.ts). @default none
   */
  readonly proxy?: ProxySettings | undefined;
  /** Machine facts. @default read from the host */
  readonly machine?: MachineInfo;
  /** @default noopLogger */
  readonly logger?: Logger;
  /** @default realClock */
  readonly clock?: Clock;
}

/** A running agent: its parts (for tests and embedding) and `stop()`. */
export interface RunningAgent {
  /** This node's name. */
  readonly nodeName: string;
  /** The kubeconfig in use (written to a temp dir for the embedded API server); empty with the in-cluster configuration. */
  readonly kubeconfigPath: string;
  /** The embedded API server, when no kubeconfig was given. */
  readonly apiServer: MiniApiServer | undefined;
  /** The in-process fake runtime, when no runtime endpoint was given. */
  readonly fakeRuntime: FakeRuntime | undefined;
  /** API access with the agent's credentials. */
  readonly api: ApiClient;
  /** The informer factory (pods of this node and anything else you ask for). */
  readonly informers: SharedInformerFactory;
  /** The CRI client. */
  readonly cri: CriClient;
  /** The PLEG. */
  readonly pleg: GenericPLEG;
  /** The pod workers. */
  readonly workers: PodWorkers<CachedPodStatus>;
  /** The pod runtime manager. */
  readonly runtime: KubeRuntimeManager;
  /** Node registration and status. */
  readonly nodeStatus: NodeStatusManager;
  /** The pod status manager (what the agent reports for its pods). */
  readonly podStatus: PodStatusManager;
  /** The node lease. */
  readonly lease: NodeLease;
  /** The pod loop. */
  readonly lifecycle: PodLifecycle;
  /** The merged pod sources, admission and mirror pods. */
  readonly podSources: PodSources;
  /** The prober (liveness, readiness and startup probes of the node's pods). */
  readonly prober: ProbeManager;
  /** The event recorder (source `kubelet` on this node) the prober, runtime and node status report to. */
  readonly events: EventRecorder;
  /** The volume manager (volumes-wiring.ts). */
  readonly volumes: VolumeManager;
  /** `/healthz` base URL, when enabled. */
  readonly healthUrl: string | undefined;
  /** The kubelet API server, when enabled. */
  readonly kubeletServer: KubeletServer | undefined;
  /** kube-proxy in the agent (proxy-wiring.ts), unless `--proxy-mode none`. */
  readonly proxy: AgentProxy | undefined;
  /** Stops everything; idempotent. */
  stop(): Promise<void>;
}

/** Starts the agent; resolves once the node is registered and the pod informer has synced. */
export async function runAgent(options: AgentOptions): Promise<RunningAgent> {
  const log = options.logger ?? noopLogger;
  const clock = options.clock ?? realClock;
  const cleanups: (() => Promise<void> | void)[] = [];
  const stop = async () => {
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'error during shutdown');
      }
    }
  };
  try {
    return await start(options, log, clock, cleanups, stop);
  } catch (err) {
    await stop();
    throw err;
  }
}

async function tempDir(cleanups: (() => Promise<void> | void)[], prefix: string): Promise<string> {
  const dir = await mkdtemp(join(os.tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function start(
  options: AgentOptions,
  log: Logger,
  clock: Clock,
  cleanups: (() => Promise<void> | void)[],
  stop: () => Promise<void>,
): Promise<RunningAgent> {
  const { nodeName } = options;
  const tuning = options.nodeTuning ?? {};
  // --- metrics (metrics-wiring.ts): /metrics and /metrics/probes registries, passed to every part ---
  const agentMetrics = createAgentMetrics(nodeName);
  const metrics = agentMetrics.metrics;
  // --- end metrics ---
  const lifetime = new AbortController();
  cleanups.push(() => lifetime.abort());

  // API: a kubeconfig, or the embedded server with its kubeconfig in a temp dir.
  let apiServer: MiniApiServer | undefined;
  let embeddedKubeletClient: EmbeddedKubeletClient | undefined;
  let kubeconfigPath = options.kubeconfigPath;
  let kubeConfig = new KubeConfig();
  // --- in-cluster hook (in-cluster.ts): no kubeconfig, in a pod ---
  if (kubeconfigPath === undefined && options.inCluster !== undefined) {
    kubeConfig = inClusterKubeConfig({ logger: log, ...options.inCluster });
    kubeconfigPath = '';
    log.info({ server: kubeConfig.getCurrentCluster()?.server }, 'Using the in-cluster configuration');
  } else if (kubeconfigPath === undefined) {
    // --- end in-cluster hook ---
    kubeconfigPath = join(await tempDir(cleanups, 'nodeagent-kubeconfig-'), 'kubeconfig');
    // --- kubelet server hook: the embedded API server reaches the kubelet with a client certificate ---
    embeddedKubeletClient = options.kubeletServer ? await createEmbeddedKubeletClient() : undefined;
    apiServer = await startMiniApiServer({
      endpointSliceController: true,
      // `kubectl run` / `kubectl create deployment` pods have no nodeName: the minimal scheduler binds them.
      schedule: true,
      kubeconfigPath,
      clock,
      ...(embeddedKubeletClient ? { kubeletClient: embeddedKubeletClient.client } : {}),
    });
    cleanups.push(() => apiServer?.stop());
    kubeConfig.loadFromString(apiServer.kubeconfig);
    log.info({ url: apiServer.url, kubeconfig: kubeconfigPath }, 'Embedded API server listening');
  } else {
    kubeConfig.loadFromFile(kubeconfigPath);
  }
  // --- API client rate limit (node-tuning-wiring.ts): --kube-api-qps / --kube-api-burst ---
  // One token bucket for the client config, as client-go's clientset: the informers' lists
  // (kube-proxy's included) and every write. Events have their own client, limited by
  // --event-qps / --event-burst in the recorder, as the kubelet's event client.
  const kubeApiLimiter = restClientRateLimiter({
    qps: tuning.kubeApiQps ?? DEFAULT_NODE_TUNING.kubeApiQps,
    burst: tuning.kubeApiBurst ?? DEFAULT_NODE_TUNING.kubeApiBurst,
    clock,
  });
  const api = new ApiClient(kubeConfig, { rateLimiter: kubeApiLimiter, metrics, logger: log, clock });
  cleanups.push(() => api.close());
  const eventsApi = new ApiClient(kubeConfig, { metrics, logger: log, clock });
  cleanups.push(() => eventsApi.close());
  // --- end API client rate limit ---
  // One recorder for the node, as the kubelet's (source kubelet/<node>); at stop, what is
  // queued gets two seconds to be written.
  const events = new EventRecorder({
    sink: apiClientEventSink(eventsApi),
    host: nodeName,
    clock,
    logger: log,
    metrics,
    // --event-qps / --event-burst (node-tuning-wiring.ts)
    ...definedFields({ writeQps: tuning.eventQps, writeBurst: tuning.eventBurst }),
  });
  cleanups.push(async () => {
    await events.flush(AbortSignal.timeout(2_000)).catch(() => {});
    await events.stop();
  });
  await events.start();
  events.event(nodeReference(nodeName), 'Normal', StartingKubelet, 'Starting kubelet.');
  const recordPodEvent = podEventRecorder(events);

  // --- swap check (swap-check.ts): --fail-swap-on, before any runtime work ---
  await enforceSwapPolicy({
    failSwapOn: options.failSwapOn,
    embeddedRuntime: options.runtimeEndpoint === undefined,
    path: options.procSwapsPath,
    logger: log,
  });
  // --- end swap check ---
  // Runtime: a real CRI endpoint, or the in-process fake.
  let fakeRuntime: FakeRuntime | undefined;
  let endpoint = options.runtimeEndpoint;
  if (endpoint === undefined) {
    const embedded = await startEmbeddedRuntime({
      podCidr: options.podCidr,
      imagePolicy: options.embeddedImagePolicy,
      logger: log,
    });
    fakeRuntime = embedded.runtime;
    endpoint = embedded.endpoint;
    cleanups.push(() => embedded.stop());
    log.info({ endpoint }, 'Embedded fake runtime listening');
  }
  const cri = createCriClient(endpoint, {
    logger: log,
    metrics,
    ...definedFields({ timeoutMs: tuning.runtimeRequestTimeoutMs }),
  });
  cleanups.push(() => cri.close());
  await cri.waitForReady({ timeoutMs: 30_000, signal: lifetime.signal });
  if (options.podCidr !== undefined) {
    await cri.runtime.updateRuntimeConfig({ runtimeConfig: { networkConfig: { podCidr: options.podCidr } } });
  }

  const machine = options.machine ?? readMachineInfo();
  const tempPodsRoot = options.podsRoot === undefined && options.rootDir === undefined;
  const podsRoot =
    options.podsRoot ??
    (options.rootDir !== undefined
      ? join(options.rootDir, 'pods')
      : await tempDir(cleanups, 'nodeagent-pods-'));
  const podLogsRoot = options.podLogsRoot ?? (await tempDir(cleanups, 'nodeagent-pod-logs-'));
  const restartMaxMs = options.crashLoopBackOffMaxMs ?? 300_000;

  const pleg = new GenericPLEG({
    lister: criRuntimeLister(cri),
    statusSource: criPodStatusSource(cri, { clock }),
    clock,
    logger: log,
    metrics,
    ...definedFields({ relistPeriodMs: options.relistPeriodMs }),
  });
  const queue = new WorkQueue<string>({
    name: 'pod-workers',
    clock,
    logger: log,
    metrics: createPromMetricsProvider(metrics),
  });
  let workers: PodWorkers<CachedPodStatus> | undefined;
  let lifecycleRef: PodLifecycle | undefined;
  let podSourcesRef: PodSources | undefined;

  // --- cgroups (cgroups-wiring.ts): kubepods/QoS/pod cgroups on a real runtime, none on the fake.
  const podCgroups = createPodCgroups({
    flags: options.cgroups,
    realRuntime: fakeRuntime === undefined,
    machine,
    kubeReserved: options.kubeReserved,
    systemReserved: options.systemReserved,
    activePods: () => podSourcesRef?.config.pods().filter((p) => !isPodPhaseTerminal(p)) ?? [],
    podPidsLimit: tuning.podMaxPids,
    clock,
    logger: log,
  });
  cleanups.push(() => podCgroups.stop());
  await podCgroups.start(lifetime.signal);
  // --- end cgroups

  const nodeIps = options.nodeIp?.split(',').map((ip) => ip.trim()) ?? [];
  // --- stats (stats-wiring.ts): the Summary for eviction and the kubelet server ---
  let volumesRef: VolumeManager | undefined;
  const stats = createAgentStats({
    nodeName,
    cri,
    embedded: fakeRuntime !== undefined,
    cgroupRoot: options.cgroups?.cgroupRoot,
    podLogsRoot,
    rootDir: options.rootDir,
    metrics,
    // pods[].volume: the volume manager (created below) of the pods the agent knows.
    volumeStatsAggPeriodMs: options.volumeStatsAggPeriodMs,
    volumes: podVolumeLister(
      () => volumesRef,
      () => podSourcesRef?.config.pods().map((p) => p.metadata?.uid ?? '') ?? [],
    ),
    clock,
    logger: log,
  });
  await stats.provider.start();
  cleanups.push(() => stats.provider.stop());
  // --- end stats ---
  // --- eviction manager and container/image GC (eviction-wiring.ts) ---
  let admitterRef: PodAdmitter | undefined;
  const pressureParts = createEvictionParts({
    settings: options.eviction,
    summaryProvider:
      options.summaryProvider ??
      // --- demo: simulated node memory (demo-memory-pressure.ts) ---
      (options.simulatedNodeMemoryBytes === undefined
        ? stats.provider
        : new SimulatedNodeMemory(stats.provider, options.simulatedNodeMemoryBytes)),
    cri,
    podLogsRoot,
    nodeName,
    activePods: () => admitterRef?.admittedPods() ?? [],
    killPodAndWait: async (pod, grace, podStatusFunc) =>
      workers?.killPodAndWait(pod, { evict: true, gracePeriodSecondsOverride: grace, podStatusFunc }),
    podState: {
      shouldPodContentBeRemoved: (uid) => workers?.shouldPodContentBeRemoved(uid) ?? false,
      shouldPodRuntimeBeRemoved: (uid) => workers?.shouldPodRuntimeBeRemoved(uid) ?? false,
    },
    allSourcesReady: () => podSourcesRef?.config.seenAllSources() ?? false,
    recordNodeEvent: (type, reason, message) => events.event(nodeReference(nodeName), type, reason, message),
    recordPodEvent: (pod, type, reason, message, annotations) =>
      events.event(pod, type, reason, message, annotations),
    metrics,
    clock,
    logger: log,
  });
  // --- end eviction ---
  let podsRef: { hasSynced(): boolean } | undefined;
  // --- kubelet server hook: the API (and /healthz) listens before the node registers its port ---
  let podStatusRef: PodStatusManager | undefined;
  const healthChecks = {
    pleg: () => {
      const h = pleg.healthy();
      return h.ok ? undefined : h.message;
    },
    syncloop: () => {
      const lifecycle = lifecycleRef;
      if (lifecycle === undefined) return 'sync loop has not started yet';
      const last = lifecycle.lastHousekeepingAt;
      if (last === undefined) return podsRef?.hasSynced() ? undefined : 'pod source has not synced yet';
      const age = clock.now() - last;
      return age > SYNC_LOOP_HEALTH_MS ? `sync loop last ran ${Math.round(age / 1000)}s ago` : undefined;
    },
  };
  let kubeletServer: KubeletServer | undefined;
  if (options.kubeletServer !== undefined) {
    const settings =
      options.healthPort === undefined
        ? options.kubeletServer
        : { ...options.kubeletServer, healthzPort: options.healthPort };
    const server = await startKubeletServer({
      settings: {
        ...settings,
        fallbackToFreePort: apiServer !== undefined,
        ...definedFields({ enableServer: tuning.enableServer }),
      },
      nodeName,
      kubeConfig,
      api,
      cri,
      pods: () => podSourcesRef?.config.pods() ?? [],
      podStatus: (uid) => podStatusRef?.getPodStatus(uid),
      healthChecks,
      summary: stats.provider,
      resourceMetrics: stats.resourceMetrics,
      cadvisorMetrics: stats.cadvisorMetrics,
      metrics: agentMetrics.text,
      probeMetrics: agentMetrics.probeText,
      clientCa: embeddedKubeletClient?.clientCa,
      clock,
      logger: log,
    });
    kubeletServer = server;
    cleanups.push(() => server.stop());
  }
  // --- end kubelet server hook ---
  const { podStatus, nodeStatus, lease } = createStatusParts({
    api,
    cri,
    nodeName,
    machine,
    plegHealth: () => pleg.healthy(),
    podLookup: (uid) => lifecycleRef?.podByUid(uid),
    couldHaveRunningContainers: (uid) => workers?.couldHaveRunningContainers(uid) ?? true,
    podCidr: options.podCidr,
    nodeIps,
    nodeLabels: options.nodeLabels,
    registerWithTaints: options.registerWithTaints,
    kubeReserved: options.kubeReserved,
    systemReserved: options.systemReserved,
    maxPods: options.maxPods,
    podsPerCore: tuning.podsPerCore,
    nodeStatusMaxImages: tuning.nodeStatusMaxImages,
    registerNode: tuning.registerNode,
    statusUpdateFrequencyMs: options.nodeStatusUpdateMs,
    leaseDurationSeconds: options.leaseDurationSeconds,
    statusReportFrequencyMs: options.nodeStatusReportFrequencyMs,
    pressure: options.pressure ?? pressureParts.pressure,
    evictionHard: options.eviction?.thresholds.evictionHard,
    // Resolved late: the pod sources need the Node's UID, which node registration brings.
    mirrorPods: {
      mirrorPodUid: (uid) => podSourcesRef?.mirrorPodTranslator.mirrorPodUid(uid),
      staticPodUid: (uid) => podSourcesRef?.mirrorPodTranslator.staticPodUid(uid),
    },
    recordNodeEvent: (type, reason, message) => events.event(nodeReference(nodeName), type, reason, message),
    // --enable-server=false still reports the configured port, as the kubelet's daemonEndpoints.
    kubeletPort: tuning.enableServer === false ? options.kubeletServer?.port : kubeletServer?.port,
    metrics,
    clock,
    logger: log,
  });
  podStatusRef = podStatus;
  // The prober reads what the agent last reported (container IDs, states, `started`, pod IP),
  // as upstream's reads the status manager; exec probes go through CRI ExecSync.
  const prober = new ProbeManager({
    statusProvider: { getPodStatus: (uid) => podStatus.getPodStatus(uid) },
    commandRunner: criCommandRunner(cri),
    recorder: recordPodEvent,
    metrics: agentMetrics.probes,
    ...definedFields({ runtimeRequestTimeoutMs: tuning.runtimeRequestTimeoutMs }),
    clock,
    logger: log,
  });
  // --- volumes (volumes-wiring.ts) ---
  let nodeRef: (() => V1Node | undefined) | undefined;
  let podsSynced: () => boolean = () => false;
  // Memory-backed volumes need root for tmpfs. On the embedded fake runtime without root (the
  // default `npm run agent`), they are plain directories instead, said once in the log.
  let memoryMedium = options.volumeMemoryMedium;
  if (memoryMedium === undefined && fakeRuntime !== undefined && process.getuid?.() !== 0) {
    memoryMedium = 'directory';
    log.warn(
      {},
      'not root: memory-backed volumes (secret, projected, downwardAPI, emptyDir Memory) are plain directories on disk for the embedded runtime (--volume-memory-medium=directory)',
    );
  }
  const volumes = createVolumeParts({
    api,
    podsDir: podsRoot,
    memoryMedium,
    node: () => nodeRef?.(),
    recordPodEvent: (pod, type, reason, message) => events.event(pod, type, reason, message),
    podDirInUse: (uid) =>
      !podsSynced() ||
      lifecycleRef?.podByUid(uid) !== undefined ||
      (workers?.couldHaveRunningContainers(uid) ?? true),
    clock,
    logger: log,
  });
  // A temp pods dir is removed at stop: unmount what is left in it first.
  // Pods still running at stop keep their volumes (as the kubelet leaves them), but a temp dir
  // is this process's own: every pod's volumes are torn down (tmpfs unmounted) before it goes.
  if (tempPodsRoot)
    cleanups.push(async () => {
      for (const uid of await readdir(podsRoot).catch(() => [] as string[])) {
        await volumes.manager
          .unmountPodVolumes(uid)
          .catch((err: unknown) => log.warn({ err, uid }, 'tearing down the volumes of a temp pod dir'));
      }
      await volumes.manager.cleanupOrphanedPodDirs(() => false);
    });
  cleanups.push(() => volumes.manager.stop());
  await volumes.manager.start(lifetime.signal);
  volumesRef = volumes.manager;
  // --- end volumes ---
  const envSources = new PodEnvSources(api);
  const runtime = new KubeRuntimeManager({
    cri,
    envSources,
    metrics,
    clock,
    logger: log,
    podsRoot,
    podVolumes: volumes.podVolumes,
    podLogsRoot,
    recorder: recordPodEvent,
    hostIps: nodeIps.length > 0 ? nodeIps : [machine.internalIp],
    // OOM score adjustments against the machine's memory; unset limits in `resourceFieldRef`
    // resolve to the allocatable the Node reports.
    memoryCapacityBytes: BigInt(machine.memoryBytes),
    nodeAllocatable: runtimeAllocatable(machine, {
      kubeReserved: options.kubeReserved,
      systemReserved: options.systemReserved,
      evictionHard: options.eviction?.thresholds.evictionHard,
    }),
    ...dnsOptions(options.dns, nodeIps.length > 0 ? nodeIps : [machine.internalIp], log),
    crashLoopBackOff: { initialMs: Math.min(10_000, restartMaxMs), maxMs: restartMaxMs },
    // --runtime-request-timeout, --serialize-image-pulls / maxParallelImagePulls (node-tuning-wiring.ts)
    ...definedFields({
      runtimeRequestTimeoutMs: tuning.runtimeRequestTimeoutMs,
      maxParallelImagePulls: imagePullLimit({
        serializeImagePulls: tuning.serializeImagePulls ?? true,
        maxParallelImagePulls: tuning.maxParallelImagePulls,
      }),
    }),
    isPodTerminationRequested: (uid) => workers?.isPodTerminationRequested(uid) ?? false,
    cgroupParent: (pod) => podCgroups.podCgroupParent(pod),
    // Readiness and startup results set `ready` / `started` and the Ready conditions; a liveness
    // or startup failure kills the container with the probe's grace period and restarts it.
    probes: {
      liveness: prober.resultLookup('liveness'),
      readiness: prober.resultLookup('readiness'),
      startup: prober.resultLookup('startup'),
    },
  });
  const syncer = new TrackedSyncer(
    new AgentPodSyncer({
      runtime,
      statuses: podStatus,
      prober,
      volumes: volumes.hooks,
      // env-sources-wiring.ts: ConfigMaps/Secrets named in env, read on each pod sync.
      envSources,
      // cgroups: the pod cgroup goes after the volumes, before the API object may be deleted.
      afterVolumesUnmounted: (pod) => podCgroups.destroyPodCgroup(pod),
      // A sync that started or killed containers reads that pod back at once: its new state
      // reaches the status without waiting for the next PLEG relist (a difference from
      // upstream's generic PLEG).
      inspectPod: (uid, known) => pleg.inspectPod(uid, known, lifetime.signal),
      logger: log,
    }),
  );
  // cgroups: the pod cgroup before SyncPod, removed after SyncTerminatedPod (cgroups-wiring.ts).
  const isTerminationRequested = (uid: string) => workers?.isPodTerminationRequested(uid) ?? false;
  const podSyncer = new CgroupPodSyncer(syncer, podCgroups, isTerminationRequested, recordPodEvent);
  workers = new PodWorkers<CachedPodStatus>({
    syncer: podSyncer,
    // The PLEG's cache; a worker that would wait for the next relist relists its pod at once.
    statusProvider: pleg,
    workQueue: queue,
    metrics,
    clock,
    logger: log,
    // Issue 13: a pod adopted mid-deletion (kill -9, restart) keeps its remaining grace, not a
    // fresh one (upstream's kubelet restarts the full grace; the package's default).
    remainingGraceOnAdoption: true,
    ...definedFields({ resyncIntervalMs: options.resyncIntervalMs }),
    ...definedFields({ backOffPeriodMs: options.backOffPeriodMs }),
  });

  const informers = new SharedInformerFactory({
    kubeConfig,
    defaults: { logger: log, clock, metrics },
    ...definedFields({ rateLimiter: kubeApiLimiter }),
  });
  const pods = informers.pods<PodObject>({ fieldSelector: `spec.nodeName=${nodeName}` });
  podsRef = pods;
  const node = informers.nodes<ApiObject<V1Node>>({ fieldSelector: `metadata.name=${nodeName}` });
  nodeRef = () => node.lister.list()[0];
  // Admission as the kubelet orders it (the eviction manager's pressure check joins first
  // once it exists): sysctls, then the predicates against the Node object.
  const admitter = new PodAdmitter({
    handlers: [
      ...([pressureParts.admitHandler].filter((h) => h !== undefined) as PodAdmitHandler[]),
      new SysctlAllowlist(options.allowedUnsafeSysctls ?? []),
      new PredicateAdmitHandler({ node: () => node.lister.list()[0] }),
    ],
  });
  const podSources = startPodSources({
    api,
    pods,
    nodeName,
    nodeUid: () => nodeStatus.nodeUid,
    isStaticPodTerminating: (fullName) => workers?.isPodForMirrorPodTerminatingByFullName(fullName) ?? false,
    // A new mirror starts with an empty status: send the static pod's again.
    onMirrorPodCreated: (pod) => {
      podStatus.deletePodStatus(pod.metadata?.uid ?? '');
      workers?.updatePod({ updateType: 'sync', pod });
    },
    podManifestPath: options.podManifestPath,
    manifestUrl: options.manifestUrl,
    manifestUrlHeaders: options.manifestUrlHeaders,
    checkMs: options.manifestCheckMs,
    clock,
    logger: log,
  });
  podSourcesRef = podSources;
  admitterRef = admitter;
  const lifecycle = new PodLifecycle({
    config: podSources.config,
    admitter,
    afterUpdate: () => podSources.reconcileMirrorPods(),
    workers: workers as PodWorkers<unknown>,
    pleg,
    queue,
    statuses: podStatus,
    recordRejection: (pod, reason, message) => events.event(pod, 'Warning', reason, message),
    prober,
    clock,
    logger: log,
    ...definedFields({ housekeepingMs: options.housekeepingMs }),
  });
  lifecycleRef = lifecycle;
  // Pod directories are judged only once every source was seen and housekeeping ran (upstream sourcesReady).
  podsSynced = () => lifecycle.lastHousekeepingAt !== undefined;

  // Start order as the kubelet: PLEG, node registration, then the pod source and the loops.
  cleanups.push(() => pleg.stop());
  await pleg.start(lifetime.signal);
  cleanups.push(() => prober.stop());
  await prober.start(lifetime.signal);
  // Stopped after the workers drained, so their last statuses are still written.
  cleanups.push(() => podStatus.stop());
  await podStatus.start(lifetime.signal);
  cleanups.push(() => syncer.drain(10_000));
  cleanups.push(() => lease.stop());
  void lease.start();
  cleanups.push(() => nodeStatus.stop());
  await nodeStatus.start(lifetime.signal);
  cleanups.push(() => lifecycle.stop());
  await lifecycle.start(lifetime.signal);
  cleanups.push(() => queue.shutDown());
  cleanups.push(() => informers.stop());
  cleanups.push(() => lifetime.abort());
  await informers.start(lifetime.signal);
  cleanups.push(() => podSources.stop());
  await podSources.start(lifetime.signal);
  cleanups.push(
    startOrphanCgroupCleanup({
      cgroups: podCgroups,
      possiblyRunning: (uid) =>
        (workers?.couldHaveRunningContainers(uid) ?? true) || runtimeRunsPod(pleg.cache, uid),
      podsRoot,
      periodMs: options.housekeepingMs ?? 2_000,
      clock,
      logger: log,
    }),
  );
  cleanups.push(() => pressureParts.stop());
  await pressureParts.start(lifetime.signal);
  // --- container log rotation (log-rotation-wiring.ts) ---
  const logRotation = createLogRotation({ settings: options.logRotation, cri, clock, logger: log });
  cleanups.push(() => logRotation.stop());
  await logRotation.start(lifetime.signal);
  // --- end log rotation ---
  // The kubelet's /healthz without the kubelet server: up before kube-proxy's start, which may
  // wait up to 5 minutes for the Node's spec.podCIDRs (--detect-local-mode NodeCIDR).
  let health: HealthzServer | undefined;
  if (options.healthPort !== undefined && kubeletServer === undefined) {
    health = new HealthzServer({ checks: healthChecks, port: options.healthPort });
    cleanups.push(() => health?.stop());
    await health.start(lifetime.signal);
    log.info({ url: `${health.url}/healthz` }, 'Health server listening');
  }
  // --- kube-proxy (proxy-wiring.ts): the proxier on this informer factory ---
  const proxySettings = options.proxy ?? { mode: 'none' };
  let proxy: AgentProxy | undefined;
  if (proxySettings.mode !== 'none') {
    proxy = await startAgentProxy({
      settings: proxySettings,
      nodeName,
      nodeIPs: nodeIps.length > 0 ? nodeIps : [machine.internalIp],
      // kube-proxy's NodeCIDR detection waits for the Node's spec.podCIDRs (the agent registers
      // its Node with --pod-cidr; a cluster's node IPAM may set it later).
      node: () => nodeRef?.(),
      informers,
      metrics,
      metricsText: agentMetrics.text,
      rootDir: options.rootDir,
      embeddedRuntime: fakeRuntime !== undefined,
      fallbackToFreePort: apiServer !== undefined,
      signal:
        options.startSignal === undefined
          ? lifetime.signal
          : AbortSignal.any([lifetime.signal, options.startSignal]),
      clock,
      logger: log,
    });
    cleanups.push(() => proxy?.stop());
  }
  // --- end kube-proxy ---
  log.info({ node: nodeName }, 'Pod sources started, node agent running');

  const healthUrl = kubeletServer?.healthzUrl ?? health?.url;

  return {
    nodeName,
    kubeconfigPath,
    apiServer,
    fakeRuntime,
    api,
    informers,
    cri,
    pleg,
    workers,
    runtime,
    nodeStatus,
    podStatus,
    lease,
    lifecycle,
    podSources,
    prober,
    events,
    volumes: volumes.manager,
    healthUrl,
    kubeletServer,
    proxy,
    stop,
  };
}

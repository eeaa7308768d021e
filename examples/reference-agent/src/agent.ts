/**
 * `runAgent`: wires the packages into a node agent — API access (an embedded
 * `@nodeagent/mini-apiserver` or a kubeconfig), a CRI runtime (an in-process fake or a
 * real endpoint), PLEG, the pod workers with the {@link AgentPodSyncer} callbacks, the pod
 * informer loop, node registration/status/lease and `/healthz` — and stops it all cleanly.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { type Clock, definedFields, type Logger, noopLogger, realClock, WorkQueue } from '@nodeagent/core';
import { type CriClient, createCriClient } from '@nodeagent/cri';
import type { FakeRuntime } from '@nodeagent/cri/testing';
import { SharedInformerFactory } from '@nodeagent/informer';
import { criPodStatusSource, criRuntimeLister } from '@nodeagent/kubecontainer';
import { KubeRuntimeManager } from '@nodeagent/kuberuntime';
import { type MiniApiServer, startMiniApiServer } from '@nodeagent/mini-apiserver';
import { type CachedPodStatus, GenericPLEG } from '@nodeagent/pleg';
import { PodWorkers } from '@nodeagent/pod-workers';
import { criCommandRunner, type ProbeEventRecorder, ProbeManager } from '@nodeagent/prober';
import { ApiClient } from './api-client.js';
import { startEmbeddedRuntime } from './embedded-runtime.js';
import { HealthServer } from './health-server.js';
import { type MachineInfo, readMachineInfo } from './node-info.js';
import { NodeLease } from './node-lease.js';
import { NodeStatusReporter } from './node-status.js';
import { PodLifecycle, type PodObject } from './pod-lifecycle.js';
import { PodStatusWriter } from './pod-status-writer.js';
import { AgentPodSyncer } from './pod-syncer.js';
import { TrackedSyncer } from './tracked-syncer.js';

/** The kubelet's `SyncLoopHealthCheck` bound: max(2 × syncFrequency, 5 min). */
const SYNC_LOOP_HEALTH_MS = 5 * 60_000;

/** Options of {@link runAgent}. Timings default to the kubelet's. */
export interface AgentOptions {
  /** This node's name. */
  readonly nodeName: string;
  /** Use this kubeconfig's API server instead of starting the embedded one. @default embedded */
  readonly kubeconfigPath?: string | undefined;
  /** CRI endpoint (`unix:///…`) of a real runtime instead of the in-process fake. @default fake */
  readonly runtimeEndpoint?: string | undefined;
  /** `spec.podCIDR`, also sent to the runtime (UpdateRuntimeConfig). @default none */
  readonly podCidr?: string | undefined;
  /** The node's InternalIP (pods' hostIP). @default the machine's first IPv4 address */
  readonly nodeIp?: string | undefined;
  /** Pod directories (emptyDir volumes). @default a temp dir removed at stop */
  readonly podsRoot?: string | undefined;
  /** Pod log directories. @default a temp dir removed at stop */
  readonly podLogsRoot?: string | undefined;
  /** Serve `/healthz` on 127.0.0.1:port (0: any free port). @default off */
  readonly healthPort?: number | undefined;
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
  /** Lease duration, s (renewed every quarter). @default 40 */
  readonly leaseDurationSeconds?: number;
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
  /** The kubeconfig in use (written to a temp dir for the embedded API server). */
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
  readonly nodeStatus: NodeStatusReporter;
  /** The node lease. */
  readonly lease: NodeLease;
  /** The pod loop. */
  readonly lifecycle: PodLifecycle;
  /** The prober (liveness, readiness and startup probes of the node's pods). */
  readonly prober: ProbeManager;
  /** `/healthz` base URL, when enabled. */
  readonly healthUrl: string | undefined;
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

/** The probe events as log lines (the agent has no event recorder): `Warning Unhealthy ...` at warn. */
function probeEventLogger(log: Logger): ProbeEventRecorder {
  return (pod, container, type, reason, message) => {
    const fields = {
      pod: `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`,
      container: container.name,
      type,
      reason,
    };
    if (type === 'Warning') log.warn(fields, message);
    else log.info(fields, message);
  };
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
  const lifetime = new AbortController();
  cleanups.push(() => lifetime.abort());

  // API: a kubeconfig, or the embedded server with its kubeconfig in a temp dir.
  let apiServer: MiniApiServer | undefined;
  let kubeconfigPath = options.kubeconfigPath;
  const kubeConfig = new KubeConfig();
  if (kubeconfigPath === undefined) {
    kubeconfigPath = join(await tempDir(cleanups, 'nodeagent-kubeconfig-'), 'kubeconfig');
    apiServer = await startMiniApiServer({ endpointSliceController: true, kubeconfigPath, clock });
    cleanups.push(() => apiServer?.stop());
    kubeConfig.loadFromString(apiServer.kubeconfig);
    log.info({ url: apiServer.url, kubeconfig: kubeconfigPath }, 'Embedded API server listening');
  } else {
    kubeConfig.loadFromFile(kubeconfigPath);
  }
  const api = new ApiClient(kubeConfig);
  cleanups.push(() => api.close());

  // Runtime: a real CRI endpoint, or the in-process fake.
  let fakeRuntime: FakeRuntime | undefined;
  let endpoint = options.runtimeEndpoint;
  if (endpoint === undefined) {
    const embedded = await startEmbeddedRuntime({ podCidr: options.podCidr, logger: log });
    fakeRuntime = embedded.runtime;
    endpoint = embedded.endpoint;
    cleanups.push(() => embedded.stop());
    log.info({ endpoint }, 'Embedded fake runtime listening');
  }
  const cri = createCriClient(endpoint, { logger: log });
  cleanups.push(() => cri.close());
  await cri.waitForReady({ timeoutMs: 30_000, signal: lifetime.signal });
  if (options.podCidr !== undefined) {
    await cri.runtime.updateRuntimeConfig({ runtimeConfig: { networkConfig: { podCidr: options.podCidr } } });
  }

  const machine = options.machine ?? readMachineInfo();
  const podsRoot = options.podsRoot ?? (await tempDir(cleanups, 'nodeagent-pods-'));
  const podLogsRoot = options.podLogsRoot ?? (await tempDir(cleanups, 'nodeagent-pod-logs-'));
  const restartMaxMs = options.crashLoopBackOffMaxMs ?? 300_000;

  const pleg = new GenericPLEG({
    lister: criRuntimeLister(cri),
    statusSource: criPodStatusSource(cri, { clock }),
    clock,
    logger: log,
    ...definedFields({ relistPeriodMs: options.relistPeriodMs }),
  });
  const queue = new WorkQueue<string>({ name: 'pod-workers', clock, logger: log });
  const writer = new PodStatusWriter(api, log);
  let workers: PodWorkers<CachedPodStatus> | undefined;
  // The prober reads what the agent last reported (container IDs, states, `started`, pod IP),
  // as upstream's reads the status manager; exec probes go through CRI ExecSync.
  const prober = new ProbeManager({
    statusProvider: { getPodStatus: (uid) => writer.lastSent(uid) },
    commandRunner: criCommandRunner(cri),
    recorder: probeEventLogger(log),
    clock,
    logger: log,
  });
  const runtime = new KubeRuntimeManager({
    cri,
    clock,
    logger: log,
    podsRoot,
    podLogsRoot,
    hostIps: [options.nodeIp ?? machine.internalIp],
    crashLoopBackOff: { initialMs: Math.min(10_000, restartMaxMs), maxMs: restartMaxMs },
    isPodTerminationRequested: (uid) => workers?.isPodTerminationRequested(uid) ?? false,
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
      writer,
      prober,
      logger: log,
    }),
  );
  workers = new PodWorkers<CachedPodStatus>({
    syncer,
    statusProvider: pleg.cache,
    workQueue: queue,
    clock,
    logger: log,
    ...definedFields({ resyncIntervalMs: options.resyncIntervalMs }),
    ...definedFields({ backOffPeriodMs: options.backOffPeriodMs }),
  });

  const nodeStatus = new NodeStatusReporter({
    api,
    cri,
    nodeName,
    machine,
    plegHealth: () => pleg.healthy(),
    podCidr: options.podCidr,
    nodeIp: options.nodeIp,
    clock,
    logger: log,
    ...definedFields({ statusUpdateMs: options.nodeStatusUpdateMs }),
  });
  const lease = new NodeLease({
    api,
    nodeName,
    nodeUid: () => nodeStatus.nodeUid,
    clock,
    logger: log,
    ...definedFields({ leaseDurationSeconds: options.leaseDurationSeconds }),
  });
  const informers = new SharedInformerFactory({ kubeConfig, defaults: { logger: log, clock } });
  const pods = informers.pods<PodObject>({ fieldSelector: `spec.nodeName=${nodeName}` });
  const lifecycle = new PodLifecycle({
    pods,
    workers: workers as PodWorkers<unknown>,
    pleg,
    queue,
    writer,
    prober,
    clock,
    logger: log,
    ...definedFields({ housekeepingMs: options.housekeepingMs }),
  });

  // Start order as the kubelet: PLEG, node registration, then the pod source and the loops.
  cleanups.push(() => pleg.stop());
  await pleg.start(lifetime.signal);
  cleanups.push(() => prober.stop());
  await prober.start(lifetime.signal);
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
  log.info({ node: nodeName }, 'Pod informer synced, node agent running');

  let health: HealthServer | undefined;
  if (options.healthPort !== undefined) {
    health = new HealthServer({
      checks: {
        ping: () => undefined,
        pleg: () => {
          const h = pleg.healthy();
          return h.ok ? undefined : h.message;
        },
        syncloop: () => {
          const last = lifecycle.lastHousekeepingAt;
          if (last === undefined) return pods.hasSynced() ? undefined : 'pod source has not synced yet';
          const age = clock.now() - last;
          return age > SYNC_LOOP_HEALTH_MS ? `sync loop last ran ${Math.round(age / 1000)}s ago` : undefined;
        },
      },
      port: options.healthPort,
    });
    cleanups.push(() => health?.stop());
    await health.start(lifetime.signal);
    log.info({ url: `${health.url}/healthz` }, 'Health server listening');
  }

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
    lease,
    lifecycle,
    prober,
    healthUrl: health?.url,
    stop,
  };
}

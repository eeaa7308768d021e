/**
 * The agent's command line in process: parse flags, start the agent, optionally the demo,
 * then run until SIGINT/SIGTERM, `--exit-after` or `signal`; resolves with the exit code
 * (0 ok, 1 failed to start, 2 bad flags).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { consoleLogger, type Logger } from '@nodeagent/core';
import { type AgentOptions, type RunningAgent, runAgent } from './agent.js';
import { createDemoObjects, demoStaticPodManifest, watchDemo } from './demo.js';
import {
  DEMO_NODE_MEMORY_BYTES,
  DEMO_PRESSURE_TRANSITION_PERIOD_MS,
  SimulatedMemoryAllocations,
  watchDemoNodePressure,
} from './demo-memory-pressure.js';
import { FlagError, parseFlags, USAGE } from './flags.js';
import { isInCluster } from './in-cluster.js';
import { watchProxyRules } from './proxy-wiring.js';

/** Where the CLI writes and what stops it. */
export interface CliIo {
  /** Human output (where things are, demo progress). */
  readonly stdout: { write(text: string): unknown };
  /** Log lines and errors. */
  readonly stderr: { write(text: string): unknown };
  /** Stops the agent when aborted (besides the process signals). */
  readonly signal?: AbortSignal;
  /** Listen for SIGINT/SIGTERM. @default true */
  readonly handleSignals?: boolean;
  /** Called with the running agent once it started (tests: inspect its API server). @default none */
  readonly onAgent?: (agent: RunningAgent) => void;
  /** Extra options for `runAgent` (tests: shorter timings). */
  readonly agentOptions?: Partial<AgentOptions>;
  /** The environment (in-cluster detection). @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The agent's version, from its package.json (next to `src/` and `dist/` alike). */
export function agentVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** Runs the CLI; resolves with the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // --- doctor hook: `nodeagent doctor ...` (src/doctor/) ---
  if (argv[0] === 'doctor') return (await import('./doctor/run.js')).runDoctorCli(argv.slice(1), io);
  // --- end doctor hook ---
  let flags: ReturnType<typeof parseFlags>;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    io.stderr.write(`error: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (flags.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  if (flags.version) {
    io.stdout.write(`${agentVersion()}\n`);
    return 0;
  }
  const log: Logger = consoleLogger({ level: flags.logLevel, format: flags.logFormat, stream: io.stderr });
  // Deprecated flag aliases and config file fields the agent ignores (kubelet-config.ts).
  for (const warning of flags.warnings) log.warn({}, warning);
  const env = io.env ?? process.env;
  const inCluster = flags.kubeconfig === undefined && isInCluster(env) ? { env } : undefined;
  const done = new AbortController();
  const onSignal = () => done.abort();
  if (io.handleSignals !== false) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  io.signal?.addEventListener('abort', onSignal, { once: true });
  const exitTimer =
    flags.exitAfterSeconds === undefined ? undefined : setTimeout(onSignal, flags.exitAfterSeconds * 1000);
  // --demo without --pod-manifest-path: a temp manifest directory with the demo's static pod.
  let demoManifests: string | undefined;
  if (flags.demo && flags.podManifestPath === undefined) {
    demoManifests = await mkdtemp(join(os.tmpdir(), 'nodeagent-demo-manifests-'));
    await writeFile(join(demoManifests, 'static-web.yaml'), demoStaticPodManifest(flags.demoImage));
  }
  // --demo on the embedded runtime: simulated node memory, a shorter pressure transition period.
  const embeddedDemo = flags.demo && flags.runtimeEndpoint === undefined;
  const eviction =
    embeddedDemo && flags.eviction?.pressureTransitionPeriodMs === undefined
      ? {
          ...(flags.eviction ?? { thresholds: {}, containerGC: {}, imageGC: {} }),
          pressureTransitionPeriodMs: DEMO_PRESSURE_TRANSITION_PERIOD_MS,
        }
      : flags.eviction;
  let allocations: SimulatedMemoryAllocations | undefined;
  try {
    let agent: Awaited<ReturnType<typeof runAgent>>;
    try {
      agent = await runAgent({
        nodeName: flags.nodeName,
        kubeconfigPath: flags.kubeconfig,
        inCluster,
        failSwapOn: flags.failSwapOn,
        embeddedImagePolicy: flags.embeddedImagePolicy,
        ...(flags.syncFrequencyMs === undefined ? {} : { resyncIntervalMs: flags.syncFrequencyMs }),
        leaseDurationSeconds: flags.nodeLeaseDurationSeconds,
        nodeStatusReportFrequencyMs: flags.nodeStatusReportFrequencyMs,
        runtimeEndpoint: flags.runtimeEndpoint,
        podCidr: flags.podCidr,
        nodeIp: flags.nodeIp,
        nodeLabels: flags.nodeLabels,
        registerWithTaints: flags.registerWithTaints,
        kubeReserved: flags.kubeReserved,
        systemReserved: flags.systemReserved,
        cgroups: flags.cgroups,
        maxPods: flags.maxPods,
        dns: flags.dns,
        ...(flags.volumeStatsAggPeriodMs === undefined
          ? {}
          : { volumeStatsAggPeriodMs: flags.volumeStatsAggPeriodMs }),
        eviction,
        ...(embeddedDemo ? { simulatedNodeMemoryBytes: DEMO_NODE_MEMORY_BYTES } : {}),
        logRotation: flags.logRotation,
        // kube-proxy (proxy-wiring.ts): rules rendered in memory on the embedded runtime by default.
        proxy: flags.proxy ?? { mode: flags.runtimeEndpoint === undefined ? 'iptables' : 'none' },
        ...(flags.nodeStatusUpdateFrequencyMs === undefined
          ? {}
          : { nodeStatusUpdateMs: flags.nodeStatusUpdateFrequencyMs }),
        podsRoot: flags.podsRoot,
        rootDir: flags.rootDir,
        volumeMemoryMedium: flags.volumeMemoryMedium,
        podLogsRoot: flags.podLogsRoot,
        healthPort: flags.healthPort,
        kubeletServer: flags.kubeletServer,
        nodeTuning: flags.nodeTuning,
        podManifestPath: flags.podManifestPath ?? demoManifests,
        manifestUrl: flags.manifestUrl,
        manifestUrlHeaders: flags.manifestUrlHeaders,
        allowedUnsafeSysctls: flags.allowedUnsafeSysctls,
        crashLoopBackOffMaxMs:
          flags.maxContainerRestartPeriodSeconds === undefined
            ? undefined
            : flags.maxContainerRestartPeriodSeconds * 1000,
        logger: log,
        startSignal: done.signal,
        ...io.agentOptions,
      });
    } catch (err) {
      // SIGTERM while the start waits (kube-proxy's NodeCIDR wait): a clean stop, not a failure.
      if (done.signal.aborted) {
        io.stdout.write('stopping the node agent\n');
        return 0;
      }
      io.stderr.write(`error: the node agent could not start: ${(err as Error).message}\n`);
      return 1;
    }
    io.onAgent?.(agent);
    const lines = [`node ${agent.nodeName} is running`];
    if (agent.apiServer) lines.push(`embedded API server: ${agent.apiServer.url}`);
    if (agent.kubeconfigPath === '') {
      lines.push(`API server: in-cluster (service account token)`);
    } else {
      lines.push(
        `kubeconfig: ${agent.kubeconfigPath}`,
        `  try: KUBECONFIG=${agent.kubeconfigPath} kubectl get nodes,pods -o wide`,
      );
    }
    lines.push(
      `container runtime: ${agent.fakeRuntime ? 'in-process fake (@nodeagent/cri/testing FakeRuntime)' : flags.runtimeEndpoint}`,
    );
    if (agent.healthUrl) lines.push(`health: ${agent.healthUrl}/healthz`);
    if (agent.kubeletServer && flags.nodeTuning.enableServer) {
      lines.push(
        `kubelet API: ${agent.kubeletServer.url}`,
        `  try: KUBECONFIG=${agent.kubeconfigPath} kubectl logs <pod> / kubectl exec <pod> -- sh -c 'echo hi'`,
      );
    }
    if (flags.demo) lines.push(...demoTryLines(agent.kubeconfigPath, embeddedDemo));
    // --- kube-proxy banner (proxy-wiring.ts) ---
    if (agent.proxy) {
      const p = agent.proxy;
      lines.push(`kube-proxy: --proxy-mode ${p.mode}${p.renderOnly ? ' (rules rendered, not applied)' : ''}`);
      if (p.healthzUrl) lines.push(`  healthz: ${p.healthzUrl}`);
      if (p.metricsUrl) lines.push(`  try: curl ${p.metricsUrl}/proxyRules   (the rules it would program)`);
      if (p.rulesFile) lines.push(`  rules file: ${p.rulesFile}`);
    }
    // --- end kube-proxy banner ---
    io.stdout.write(`${lines.join('\n')}\n`);
    try {
      if (flags.demo && !done.signal.aborted) {
        watchDemo(agent.informers, (line) => io.stdout.write(`${line}\n`));
        // --- simulated memory pressure (demo-memory-pressure.ts) ---
        if (embeddedDemo && agent.fakeRuntime !== undefined) {
          allocations = new SimulatedMemoryAllocations(agent.fakeRuntime, log);
          allocations.start();
          watchDemoNodePressure(agent.informers, agent.nodeName, (line) => io.stdout.write(`${line}\n`));
        }
        // --- kube-proxy demo (proxy-wiring.ts): the rendered rules follow the web Service ---
        if (agent.proxy) watchProxyRules(agent.proxy, (line) => io.stdout.write(`${line}\n`));
        // --- end kube-proxy demo ---
        await createDemoObjects(agent.api, agent.nodeName, flags.demoImage, {
          grpcProbe: agent.fakeRuntime !== undefined,
          memoryPressure: allocations !== undefined,
        });
      }
      if (!done.signal.aborted)
        await new Promise((resolve) => done.signal.addEventListener('abort', resolve, { once: true }));
    } catch (err) {
      io.stderr.write(`error: ${(err as Error).message}\n`);
      return 1;
    } finally {
      io.stdout.write('stopping the node agent\n');
      allocations?.stop();
      await agent.stop();
    }
    return 0;
  } finally {
    if (exitTimer !== undefined) clearTimeout(exitTimer);
    if (demoManifests !== undefined) await rm(demoManifests, { recursive: true, force: true });
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

/** The banner's demo block: what the demo shows and the kubectl commands to try. */
export function demoTryLines(kubeconfigPath: string, embedded: boolean): string[] {
  const k = kubeconfigPath === '' ? 'kubectl' : `KUBECONFIG=${kubeconfigPath} kubectl`;
  return [
    'demo: init containers, a crash loop, a completed job, probes, a Service, a static pod (static-web-<node>)' +
      (embedded
        ? `, and a BestEffort pod (memory-hog) evicted under simulated memory pressure (node memory ${DEMO_NODE_MEMORY_BYTES / 1024 / 1024}Mi)`
        : ''),
    `  try: ${k} get nodes,pods -o wide`,
    `       ${k} get events --sort-by=.lastTimestamp`,
    `       ${k} logs job`,
    `       ${k} describe pod ${embedded ? 'memory-hog' : 'crasher'}`,
    `       ${k} describe node`,
    `       ${k} exec probe-exec -- sh -c 'echo hi'`,
  ];
}

// A simulated fleet: one mini-apiserver (scheduler off) and N reference agents, each with its own
// embedded fake runtime, all in this process. Pods are created with spec.nodeName set; a watch on
// the server's store (the source of its watch streams) sees them become Running and Ready. Then
// the API requests of each node are counted over a steady-state window (each agent authenticates
// with its own token as `system:node:<name>`, so the server's request log names the node), and
// the process memory is read. Used by bench/fleet.bench.ts (100 × 30) and test/fleet.test.ts (3 × 3).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { type Logger, noopLogger } from '@nodeagent/core';
import { type MiniApiServer, renderKubeconfig, startMiniApiServer } from '@nodeagent/mini-apiserver';
import { type AgentOptions, type RunningAgent, runAgent } from '../src/agent.js';
import { makePod, shContainer } from './helpers.js';

/** Options of {@link runFleet}. */
export interface FleetOptions {
  readonly agents: number;
  readonly podsPerAgent: number;
  /** Steady-state window over which requests are counted, ms. */
  readonly windowMs: number;
  /** Wait after all pods are Ready before the window starts, ms. @default 10_000 */
  readonly settleMs?: number;
  /** Give up waiting for all pods Ready after this long, ms. @default 600_000 */
  readonly readyTimeoutMs?: number;
  /** Agents started at once. @default 10 */
  readonly startConcurrency?: number;
  /** Extra agent options (e.g. shorter timings in tests). */
  readonly agentOptions?: Partial<AgentOptions>;
  readonly logger?: Logger;
  /** Progress lines. @default none */
  readonly progress?: (line: string) => void;
}

/** Requests of one node in the window, per minute. */
export interface NodeRates {
  readonly leaseWrites: number;
  readonly nodeWrites: number;
  readonly podStatusWrites: number;
  readonly otherWrites: number;
  readonly reads: number;
  readonly watchStarts: number;
  readonly total: number;
}

/** What {@link runFleet} measured. */
export interface FleetResult {
  /** Agents that started (fewer than asked when the machine could not take more). */
  readonly agentsStarted: number;
  readonly agentsAsked: number;
  /** The error that stopped agent start-up early, if any. */
  readonly startError: string | undefined;
  readonly podsCreated: number;
  readonly podsReady: number;
  /** From the first pod's create to the last pod seen Running and Ready, ms (undefined when not all were). */
  readonly allReadyMs: number | undefined;
  /** Time to start all agents (registered, pod informer synced), ms. */
  readonly agentsStartMs: number;
  /** Per-node request rates (per minute) in the window, by node name. */
  readonly perNode: ReadonlyMap<string, NodeRates>;
  /** Mean over nodes. */
  readonly mean: NodeRates;
  /** Max over nodes of the total rate. */
  readonly maxTotal: number;
  /** Requests not attributed to a node in the window (e.g. the harness). */
  readonly unattributed: number;
  readonly windowMs: number;
  /** Process RSS after the API server started, before any agent, bytes. */
  readonly rssBase: number;
  readonly heapBase: number;
  /** Process RSS and heap used at the end of the window, bytes. */
  readonly rssSteady: number;
  readonly heapSteady: number;
}

/** The user name a node's token authenticates as (the node authorizer's form). */
export function nodeUser(nodeName: string): string {
  return `system:node:${nodeName}`;
}

/** Classifies one request of a node. */
export function classify(r: {
  method: string;
  path: string;
  watch: boolean;
}): keyof Omit<NodeRates, 'total'> {
  if (r.watch) return 'watchStarts';
  if (r.method === 'GET') return 'reads';
  if (/\/namespaces\/kube-node-lease\/leases\//.test(r.path)) return 'leaseWrites';
  if (/^\/api\/v1\/nodes\/[^/]+(\/status)?$/.test(r.path)) return 'nodeWrites';
  if (/^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+\/status$/.test(r.path)) return 'podStatusWrites';
  return 'otherWrites';
}

function isRunningAndReady(pod: V1Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
  );
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g !== undefined) g();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the fleet, measures, stops everything. */
export async function runFleet(options: FleetOptions): Promise<FleetResult> {
  const progress = options.progress ?? (() => {});
  const log = options.logger ?? noopLogger;
  const names = Array.from({ length: options.agents }, (_, i) => `fleet-node-${String(i).padStart(3, '0')}`);
  const tokens = names.map((n, i) => ({
    token: `fleet-token-${i}-${Math.random().toString(36).slice(2)}`,
    user: nodeUser(n),
    groups: ['system:nodes'],
  }));
  const dir = await mkdtemp(join(os.tmpdir(), 'nodeagent-fleet-'));
  let server: MiniApiServer | undefined;
  const agents: RunningAgent[] = [];
  try {
    server = await startMiniApiServer({
      schedule: false,
      endpointSliceController: false,
      tokens: [{ token: 'fleet-admin', user: 'fleet-admin', groups: ['system:masters'] }, ...tokens],
      // Enough for the whole run: the window is sliced by index.
      requestLogSize: 2_000_000,
      logger: log,
    });
    gc();
    const rssBase = process.memoryUsage().rss;
    const heapBase = process.memoryUsage().heapUsed;
    // Start agents, a few at a time; stop at the first failure and go on with those that run.
    const t0 = performance.now();
    let startError: string | undefined;
    const concurrency = options.startConcurrency ?? 10;
    for (let i = 0; i < names.length && startError === undefined; i += concurrency) {
      const batch = names.slice(i, i + concurrency);
      const results = await Promise.allSettled(
        batch.map(async (nodeName, j) => {
          const kubeconfigPath = join(dir, `${nodeName}.kubeconfig`);
          await writeFile(
            kubeconfigPath,
            renderKubeconfig({
              server: (server as MiniApiServer).url,
              token: tokens[i + j]?.token as string,
            }),
          );
          return runAgent({
            nodeName,
            kubeconfigPath,
            maxPods: Math.max(110, options.podsPerAgent + 10),
            volumeMemoryMedium: 'directory',
            logger: log,
            ...options.agentOptions,
          });
        }),
      );
      for (const r of results) {
        if (r.status === 'fulfilled') agents.push(r.value);
        else startError ??= (r.reason as Error).message;
      }
      progress(`  agents started: ${agents.length}/${names.length}`);
    }
    const agentsStartMs = performance.now() - t0;
    const started = new Set(agents.map((a) => a.nodeName));

    // Watch pods on the server; create them all, spread by spec.nodeName.
    const store = server.store;
    const ready = new Set<string>();
    let lastReadyAt = 0;
    const unwatch = store.onChange((change) => {
      if (change.type.resource !== 'pods' || change.eventType === 'DELETED') return;
      const pod = change.object() as unknown as V1Pod;
      const name = pod.metadata?.name ?? '';
      if (!ready.has(name) && isRunningAndReady(pod)) {
        ready.add(name);
        lastReadyAt = performance.now();
      }
    });
    const total = agents.length * options.podsPerAgent;
    const tCreate = performance.now();
    try {
      for (let i = 0; i < options.podsPerAgent; i++) {
        for (const a of agents) {
          store.create(
            'pods',
            makePod(`${a.nodeName}-p${i}`, a.nodeName, [
              shContainer('c', 'registry.local/busybox:latest', 'sleep 3600'),
            ]) as never,
          );
        }
        // Let the event loop breathe between rounds.
        await sleep(0);
      }
      const deadline = Date.now() + (options.readyTimeoutMs ?? 600_000);
      let lastReport = 0;
      while (ready.size < total && Date.now() < deadline) {
        await sleep(100);
        if (Date.now() - lastReport > 10_000) {
          lastReport = Date.now();
          progress(`  pods Running and Ready: ${ready.size}/${total}`);
        }
      }
    } finally {
      unwatch();
    }
    const allReadyMs = ready.size === total ? lastReadyAt - tCreate : undefined;
    progress(
      `  pods Running and Ready: ${ready.size}/${total}; steady-state window ${options.windowMs / 1000} s`,
    );

    await sleep(options.settleMs ?? 10_000);
    const from = server.requests.length;
    const windowStart = performance.now();
    await sleep(options.windowMs);
    const windowMs = performance.now() - windowStart;
    const window = server.requests.slice(from);
    gc();
    const mem = process.memoryUsage();

    const counts = new Map<string, Record<keyof Omit<NodeRates, 'total'>, number>>();
    for (const n of started)
      counts.set(nodeUser(n), {
        leaseWrites: 0,
        nodeWrites: 0,
        podStatusWrites: 0,
        otherWrites: 0,
        reads: 0,
        watchStarts: 0,
      });
    let unattributed = 0;
    for (const r of window) {
      const c = r.user === undefined ? undefined : counts.get(r.user);
      if (c === undefined) {
        unattributed++;
        continue;
      }
      c[classify(r)]++;
    }
    const perMin = (n: number) => (n * 60_000) / windowMs;
    const perNode = new Map<string, NodeRates>();
    for (const n of started) {
      const c = counts.get(nodeUser(n)) as Record<keyof Omit<NodeRates, 'total'>, number>;
      const rates = {
        leaseWrites: perMin(c.leaseWrites),
        nodeWrites: perMin(c.nodeWrites),
        podStatusWrites: perMin(c.podStatusWrites),
        otherWrites: perMin(c.otherWrites),
        reads: perMin(c.reads),
        watchStarts: perMin(c.watchStarts),
      };
      perNode.set(n, { ...rates, total: Object.values(rates).reduce((a, b) => a + b, 0) });
    }
    const all = [...perNode.values()];
    const avg = (k: keyof NodeRates) =>
      all.length === 0 ? 0 : all.reduce((a, r) => a + r[k], 0) / all.length;
    const mean: NodeRates = {
      leaseWrites: avg('leaseWrites'),
      nodeWrites: avg('nodeWrites'),
      podStatusWrites: avg('podStatusWrites'),
      otherWrites: avg('otherWrites'),
      reads: avg('reads'),
      watchStarts: avg('watchStarts'),
      total: avg('total'),
    };
    return {
      agentsStarted: agents.length,
      agentsAsked: names.length,
      startError,
      podsCreated: total,
      podsReady: ready.size,
      allReadyMs,
      agentsStartMs,
      perNode,
      mean,
      maxTotal: Math.max(0, ...all.map((r) => r.total)),
      unattributed,
      windowMs,
      rssBase,
      heapBase,
      rssSteady: mem.rss,
      heapSteady: mem.heapUsed,
    };
  } finally {
    progress('  stopping agents');
    for (let i = 0; i < agents.length; i += 20) {
      await Promise.all(agents.slice(i, i + 20).map((a) => a.stop()));
    }
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

// The reference agent with 110 pods on one node (embedded API server, fake runtime, real time):
// the time from each pod's ADD (its creation in the API) to its first status write, and the API
// writes per minute once everything runs, next to what the kubelet's cadence implies (Lease
// every 10 s, node status every 5 min, no pod status write without a change), and single ADDs
// on the busy node. Prints figures.
import type { V1Pod } from '@kubernetes/client-node';
import { it } from 'vitest';
import { runAgent } from '../src/agent.js';
import { makePod, shContainer } from '../test/helpers.js';

const PODS = 110;
const WINDOW_MS = Number(process.env.STATUS_BENCH_WINDOW_MS ?? 60_000);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

it('reference agent, 110 pods: ADD → first status write, and steady-state API writes', async () => {
  const agent = await runAgent({ nodeName: 'bench-node', maxPods: PODS + 10 });
  try {
    const server = agent.apiServer;
    if (server === undefined) throw new Error('no embedded API server');
    const created = new Map<string, number>();
    const firstWrite = new Map<string, number>();
    const poll = setInterval(() => {
      for (const name of created.keys()) {
        if (firstWrite.has(name)) continue;
        const p = server.store.tryGet('pods', 'default', name) as unknown as V1Pod | undefined;
        if (p?.status?.startTime !== undefined) firstWrite.set(name, performance.now());
      }
    }, 1);
    for (let i = 0; i < PODS; i++) {
      const name = `p-${i}`;
      created.set(name, performance.now());
      server.store.create(
        'pods',
        makePod(name, 'bench-node', [
          shContainer('c', 'registry.local/busybox:latest', 'sleep 3600'),
        ]) as never,
      );
    }
    const deadline = Date.now() + 120_000;
    while (firstWrite.size < PODS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    clearInterval(poll);
    const latencies = [...firstWrite].map(([name, t]) => t - (created.get(name) as number));
    // Let every pod reach Running, then count a window.
    const running = () =>
      [...created.keys()].filter(
        (n) =>
          (server.store.tryGet('pods', 'default', n) as unknown as V1Pod | undefined)?.status?.phase ===
          'Running',
      ).length;
    while (running() < PODS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 5_000));
    const from = server.requests.length;
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const window = server.requests.slice(from).filter((r) => !r.watch);
    const perMin = (pred: (r: { method: string; path: string }) => boolean) =>
      (window.filter(pred).length * 60_000) / WINDOW_MS;
    const podWrites = perMin((r) => r.method !== 'GET' && /\/pods\//.test(r.path));
    const nodeWrites = perMin((r) => r.method !== 'GET' && /\/nodes\//.test(r.path));
    const leaseWrites = perMin((r) => r.method !== 'GET' && /\/leases\//.test(r.path));
    const reads = perMin((r) => r.method === 'GET');
    // Then single ADDs on the busy node, one at a time.
    const single: number[] = [];
    for (let i = 0; i < 10; i++) {
      const name = `single-${i}`;
      const t0 = performance.now();
      server.store.create(
        'pods',
        makePod(name, 'bench-node', [
          shContainer('c', 'registry.local/busybox:latest', 'sleep 3600'),
        ]) as never,
      );
      for (;;) {
        const p = server.store.tryGet('pods', 'default', name) as unknown as V1Pod | undefined;
        if (p?.status?.startTime !== undefined) break;
        await new Promise((r) => setTimeout(r, 1));
      }
      single.push(performance.now() - t0);
    }
    console.log(`\nreference agent, ${PODS} pods (${running()} Running), embedded API server + fake runtime`);
    console.log(
      `  ADD → first status write: p50 ${percentile(latencies, 50).toFixed(0)} ms  p99 ${percentile(latencies, 99).toFixed(0)} ms  max ${Math.max(...latencies).toFixed(0)} ms (${latencies.length} pods, all created at once)`,
    );
    console.log(
      `  ADD → first status write: p50 ${percentile(single, 50).toFixed(0)} ms  max ${Math.max(...single).toFixed(0)} ms (10 pods, one at a time, on the busy node)`,
    );
    console.log(`  steady state over ${WINDOW_MS / 1000} s, per minute      ours   kubelet cadence`);
    console.log(`    pod status writes                       ${podWrites.toFixed(2).padStart(5)}   0.00`);
    console.log(
      `    node status writes                      ${nodeWrites.toFixed(2).padStart(5)}   0.20 (one per 5 min)`,
    );
    console.log(`    lease writes                            ${leaseWrites.toFixed(2).padStart(5)}   6.00`);
    console.log(`    non-watch reads                         ${reads.toFixed(2).padStart(5)}`);
  } finally {
    await agent.stop();
  }
});

// A simulated fleet (issue 13): one mini-apiserver (scheduler off) and FLEET_AGENTS reference
// agents (default 100), each with its own embedded fake runtime, in this one process;
// FLEET_PODS_PER_AGENT pods each (default 30) created with spec.nodeName. Prints the time until
// all pods are Running and Ready (seen by a watch on the server), the API requests per node per
// minute in steady state next to the kubelet's cadence, and memory per agent. Run it with
// `node --expose-gc` (NODE_OPTIONS) for steadier memory figures. Measures only; asserts nothing.
import os from 'node:os';
import { it } from 'vitest';
import { runFleet } from '../test/fleet-harness.js';

const AGENTS = Number(process.env.FLEET_AGENTS ?? 100);
const PODS = Number(process.env.FLEET_PODS_PER_AGENT ?? 30);
const WINDOW_MS = Number(process.env.FLEET_WINDOW_MS ?? 60_000);
const READY_TIMEOUT_MS = Number(process.env.FLEET_READY_TIMEOUT_MS ?? 600_000);

const mib = (b: number) => (b / 1024 / 1024).toFixed(1);

it(`simulated fleet: ${AGENTS} agents × ${PODS} pods against one mini-apiserver`, async () => {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `\nsimulated fleet: ${AGENTS} agents × ${PODS} pods, one process, load average before: ${load} (${os.cpus().length} CPUs)`,
  );
  const r = await runFleet({
    agents: AGENTS,
    podsPerAgent: PODS,
    windowMs: WINDOW_MS,
    readyTimeoutMs: READY_TIMEOUT_MS,
    progress: (line) => console.log(line),
  });
  const n = r.agentsStarted;
  console.log(
    `\nsimulated fleet: ${n}/${r.agentsAsked} agents started in ${(r.agentsStartMs / 1000).toFixed(1)} s${r.startError ? ` (stopped: ${r.startError})` : ''}`,
  );
  console.log(
    `  pods Running and Ready: ${r.podsReady}/${r.podsCreated}` +
      (r.allReadyMs === undefined
        ? ' (not all within the timeout)'
        : ` after ${(r.allReadyMs / 1000).toFixed(1)} s`),
  );
  const m = r.mean;
  const row = (label: string, ours: number, kubelet: string) =>
    console.log(`    ${label.padEnd(34)}${ours.toFixed(2).padStart(8)}   ${kubelet}`);
  console.log(
    `  API requests per node per minute, steady state over ${(r.windowMs / 1000).toFixed(0)} s (mean of ${n} nodes)`,
  );
  console.log(`    ${''.padEnd(34)}${'ours'.padStart(8)}   kubelet cadence`);
  row('Lease writes (PUT)', m.leaseWrites, '6.00 (renew every 10 s)');
  row('Node status writes', m.nodeWrites, '0.20 (unchanged: every 5 min; changed: ≤ 6)');
  row('pod status writes', m.podStatusWrites, '0.00 (only on a change)');
  row('other writes (events, …)', m.otherWrites, '0.00');
  row('non-watch reads', m.reads, '0.00 (node read from the informer cache)');
  row('watch (re)starts', m.watchStarts, '≈0.1–0.2 per informer (5–10 min watch timeout)');
  row('total', m.total, '≈6.2 + watch restarts');
  console.log(
    `    max total of one node: ${r.maxTotal.toFixed(2)}; requests not from a node: ${r.unattributed}`,
  );
  console.log('  memory (one process; API server included in RSS, excluded from the per-agent delta)');
  console.log(
    `    process RSS ${mib(r.rssSteady)} MiB, heap used ${mib(r.heapSteady)} MiB (after the API server alone: RSS ${mib(r.rssBase)} MiB, heap ${mib(r.heapBase)} MiB)`,
  );
  console.log(
    `    per agent: RSS / N ${mib(r.rssSteady / Math.max(1, n))} MiB, (RSS − base) / N ${mib((r.rssSteady - r.rssBase) / Math.max(1, n))} MiB, (heap − base) / N ${mib((r.heapSteady - r.heapBase) / Math.max(1, n))} MiB`,
  );
  console.log(
    `  load average after: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
});

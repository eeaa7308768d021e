// Heap held per probe worker: 5,000 workers (PROBER_BENCH_PROBES) of the benchmark's pods,
// heap used after full collections before and after `addPod`, then after `start()` (each
// worker scheduled). Needs --expose-gc; bundle it like profile-manager.ts:
//   npx esbuild packages/prober/bench/worker-heap.ts --bundle --platform=node --format=esm \
//     --conditions=@nodeagent/source --external:@kubernetes/client-node --external:prom-client \
//     --external:eventemitter3 --external:@grpc/* --outfile=bench-results/worker-heap.mjs
//   node --expose-gc bench-results/worker-heap.mjs
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { ProbeManager } from '../src/index.js';
import { benchPod } from './bench-pods.js';

const PROBES = Number(process.env.PROBER_BENCH_PROBES ?? 5_000);
const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error('run with node --expose-gc');
const heapUsed = (): number => {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
};

const statuses = new Map<string, V1PodStatus>();
const pods: V1Pod[] = [];
const startedAt = new Date();
for (let p = 0; p < PROBES / 5; p++) {
  // Port 9 (discard): the workers wait for their jittered first tick; nothing is probed here.
  const { pod, status } = benchPod(p, 5, (i) => ({ kind: i % 2 === 0 ? 'http' : 'tcp', port: 9 }), startedAt);
  statuses.set(pod.metadata?.uid ?? '', status);
  pods.push(pod);
}
const before = heapUsed();
const manager = new ProbeManager({ statusProvider: { getPodStatus: (uid) => statuses.get(uid) } });
for (const pod of pods) manager.addPod(pod);
const added = heapUsed();
await manager.start();
const started = heapUsed();
console.log(
  `${PROBES} workers: ${Math.round((added - before) / PROBES)} B each before start, ${Math.round((started - before) / PROBES)} B each started`,
);
await manager.stop();

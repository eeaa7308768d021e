// The ProbeManager alone (or, with PROBER_PROFILE_BARE=1, the benchmark's bare loop) at
// PROBER_BENCH_PROBES probes (default 5,000) against the benchmark's local servers, for
// `node --cpu-prof` / `--trace-gc`: prints probes/s, CPU per probe and the p99 lateness of each
// worker's start after its previous one + 1 s, once a second for PROBER_PROFILE_SECONDS
// (default 15), with the GC pauses and event-loop delay of that second. PROBER_PROFILE_METRICS=1
// gives the manager a metrics registry. Bundle it first
// (the bundle lives in the ignored bench-results/, next to node_modules):
//   npx esbuild packages/prober/bench/profile-manager.ts --bundle --platform=node --format=esm \
//     --conditions=@nodeagent/source --external:@kubernetes/client-node --external:prom-client \
//     --external:eventemitter3 --external:@grpc/* --outfile=bench-results/profile-manager.mjs
//   PROBER_SERVERS=packages/prober/bench/probe-servers.mjs node --cpu-prof bench-results/profile-manager.mjs
import { spawn } from 'node:child_process';
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { V1PodStatus } from '@kubernetes/client-node';
import { type ProbeAttempt, ProbeManager } from '../src/index.js';
import { benchPod } from './bench-pods.js';
import { LoopStalls } from './loop-stalls.js';

const PROBES = Number(process.env.PROBER_BENCH_PROBES ?? 5_000);
const SECONDS = Number(process.env.PROBER_PROFILE_SECONDS ?? 15);
const METRICS = process.env.PROBER_PROFILE_METRICS === '1';
// PROBER_PROFILE_TCP_ONLY=1: every probe a tcpSocket one (the kernel completes the connect
// even when the server process is starved, so a loaded machine does not turn probes into 1 s
// timeouts whose in-flight state then dominates the heap).
const TCP_ONLY = process.env.PROBER_PROFILE_TCP_ONLY === '1';
// PROBER_PROFILE_EXEC=1: every probe an exec one, answered at once by an in-process runner: no
// network at all, so what the GC sees is the prober's own allocation (workers, ticks, the
// probe's promise chain and deadline), also on a loaded machine.
const EXEC = process.env.PROBER_PROFILE_EXEC === '1';
const CONTAINERS_PER_POD = 5;

const servers = spawn(
  process.execPath,
  [process.env.PROBER_SERVERS ?? fileURLToPath(new URL('./probe-servers.mjs', import.meta.url)), '16'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const ports: { http: number[]; tcp: number[] } = await new Promise((resolve) => {
  servers.stdout?.once('data', (d: Buffer) => resolve(JSON.parse(d.toString())));
});

const statuses = new Map<string, V1PodStatus>();
const promClient = await import('prom-client');
const metricsOption = METRICS ? { metrics: { registry: new promClient.Registry(), promClient } } : {};
const answered = Promise.resolve({ exitCode: 0, output: new Uint8Array() });
const manager = new ProbeManager({
  statusProvider: { getPodStatus: (uid) => statuses.get(uid) },
  commandRunner: { runInContainer: () => answered },
  ...metricsOption,
});
let probes = 0;
let failures = 0;
let late: number[] = [];
const reasons = new Map<string, number>();
const last = new Map<string, number>();
manager.on('probe', (a: ProbeAttempt) => {
  probes++;
  if (a.result !== 'success' || a.error !== undefined) {
    failures++;
    const why = (a.error?.message ?? a.output).replace(/127\.0\.0\.1:\d+/g, 'ADDR').slice(0, 90);
    reasons.set(why, (reasons.get(why) ?? 0) + 1);
  }
  const k = `${a.podUID}/${a.containerName}`;
  const prev = last.get(k);
  if (prev !== undefined) late.push(Math.max(0, a.startedAtMs - prev - 1000));
  last.set(k, a.startedAtMs);
});
const BARE = process.env.PROBER_PROFILE_BARE === '1';
if (!BARE) await manager.start();
else {
  const { request } = await import('node:http');
  const { connect } = await import('node:net');
  for (let i = 0; i < PROBES; i++) {
    const kind = i % 2 === 0 && !TCP_ONLY ? 'http' : 'tcp';
    const list = kind === 'http' ? ports.http : ports.tcp;
    const port = list[Math.floor(i / 2) % list.length] as number;
    const key = String(i);
    let prev: number | undefined;
    const done = (start: number, ok: boolean) => {
      probes++;
      if (!ok) failures++;
      if (prev !== undefined) late.push(Math.max(0, start - prev - 1000));
      prev = start;
    };
    let next = Date.now() + Math.floor(Math.random() * 1000);
    const once = (): void => {
      const startedAt = Date.now();
      if (kind === 'http') {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: '/healthz',
            agent: false,
            headers: { 'User-Agent': 'kube-probe/1.36', Accept: '*/*' },
          },
          (res) => {
            res.on('data', () => {});
            res.on('end', () => done(startedAt, res.statusCode === 200));
          },
        );
        req.setTimeout(1000, () => req.destroy());
        req.on('error', () => done(startedAt, false));
        req.end();
      } else {
        const s = connect({ host: '127.0.0.1', port });
        s.setTimeout(1000, () => s.destroy());
        s.once('connect', () => {
          s.destroy();
          done(startedAt, true);
        });
        s.once('error', () => done(startedAt, false));
      }
    };
    void key;
    let anchored = false;
    const tick = (): void => {
      if (!anchored) {
        anchored = true;
        next = Date.now();
      }
      once();
      next += 1000;
      while (next <= Date.now()) next += 1000;
      setTimeout(tick, next - Date.now());
    };
    setTimeout(tick, next - Date.now());
  }
}
const startedAt = new Date();
for (let p = 0; p < PROBES / CONTAINERS_PER_POD; p++) {
  const { pod, status } = benchPod(
    p,
    CONTAINERS_PER_POD,
    (i) => {
      if (EXEC) return { kind: 'exec', port: 0 };
      const kind = i % 2 === 0 && !TCP_ONLY ? 'http' : 'tcp';
      const list = kind === 'http' ? ports.http : ports.tcp;
      return { kind, port: list[Math.floor(i / 2) % list.length] as number };
    },
    startedAt,
  );
  statuses.set(pod.metadata?.uid ?? '', status);
  if (!BARE) manager.addPod(pod);
}
// GC pauses and event-loop delay per second, to tell the process's own pauses from load.
const gc = { minor: 0, minorMax: 0, major: 0, majorMax: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = ((e as PerformanceEntry & { detail?: unknown }).detail as { kind?: number } | undefined)
      ?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      gc.minor++;
      gc.minorMax = Math.max(gc.minorMax, e.duration);
    } else {
      gc.major++;
      gc.majorMax = Math.max(gc.majorMax, e.duration);
    }
  }
}).observe({ entryTypes: ['gc'] });
const loop = new LoopStalls();
for (let s = 0; s < SECONDS; s++) {
  loop.start();
  Object.assign(gc, { minor: 0, minorMax: 0, major: 0, majorMax: 0 });
  const cpu0 = process.cpuUsage();
  const n0 = probes;
  const f0 = failures;
  late = [];
  await new Promise((r) => setTimeout(r, 1000));
  const cpu = process.cpuUsage(cpu0);
  const stalls = loop.stop();
  const n = probes - n0;
  late.sort((a, b) => a - b);
  console.log(
    `${s}s probes ${n} failed ${failures - f0} cpu µs/probe ${Math.round((cpu.user + cpu.system) / n)} p99 interval lateness ${late[Math.floor(late.length * 0.99)] ?? '-'} ms; loop stall max ${stalls.maxMs.toFixed(0)} ms; GC minor ${gc.minor} (max ${gc.minorMax.toFixed(1)} ms) major ${gc.major} (max ${gc.majorMax.toFixed(1)} ms); heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB`,
  );
  if (reasons.size > 0)
    console.log(`  failures: ${JSON.stringify([...reasons].sort((a, b) => b[1] - a[1]).slice(0, 2))}`);
  reasons.clear();
}
await manager.stop();
servers.kill('SIGTERM');
process.exit(0);

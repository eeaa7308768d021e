// 5,000 probes (half httpGet, half tcpSocket, 1 s period) through the ProbeManager against
// local servers in a child process, next to a bare loop measured in the same run: 5,000 timers
// on the same schedule making the same requests (the prober's request bytes written on a
// connection of their own, the answer read until the server closes, only its status line looked
// at; a TCP connect then close). The loops alternate for PROBER_BENCH_ROUNDS rounds; prints the
// median CPU per probe and the p50/p99 lateness of probe starts against their ticks (first start
// + k × period), with the event-loop delay (a 10 ms timer's lateness) and the GC pauses
// (PerformanceObserver 'gc') of each loop's measured windows, so that a pause of the process
// itself can be told from a machine-load spike. Asserts nothing about speed (targets: CPU
// within 1.3× of the bare loop, p99 drift under 50 ms).
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { loadavg } from 'node:os';
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { V1PodStatus } from '@kubernetes/client-node';
import { afterAll, beforeAll, it } from 'vitest';
import { DEFAULT_USER_AGENT, type ProbeAttempt, ProbeManager } from '../src/index.js';
import { benchPod } from './bench-pods.js';
import { LoopStalls, type Stall } from './loop-stalls.js';

// PROBER_BENCH_PROBES=1000 measures a load this machine can sustain, next to the 5,000 target.
const PROBES = Number(process.env.PROBER_BENCH_PROBES ?? 5_000);
const CONTAINERS_PER_POD = 5;
const PERIOD_MS = 1_000;
const WARMUP_MS = 2_000;
// Alternating rounds (bare, ours, bare, ours, …) with the median reported: on a shared machine
// one window of each is at the mercy of whatever else runs then.
const ROUNDS = Number(process.env.PROBER_BENCH_ROUNDS ?? 3);
const MEASURE_MS = 5_000;

let servers: ChildProcess;
let ports: { http: number[]; tcp: number[] };

beforeAll(async () => {
  gcObserver.observe({ entryTypes: ['gc'] });
  servers = spawn(process.execPath, [fileURLToPath(new URL('./probe-servers.mjs', import.meta.url)), '16'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  ports = await new Promise((resolve) => {
    servers.stdout?.once('data', (d: Buffer) => resolve(JSON.parse(d.toString())));
  });
});

afterAll(() => {
  gcObserver.disconnect();
  if (servers.pid !== undefined) process.kill(servers.pid, 'SIGTERM');
});

interface Sample {
  cpuMsPerProbe: number;
  probes: number;
  failures: number;
  windowMs: number;
  reasons: [string, number][];
  drift: number[];
  /** Event-loop stalls over the measured window (ms): p99 and max ({@link LoopStalls}). */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** The stalls of at least {@link LoopStalls.LONG_MS}, with the process CPU used in each. */
  longStalls: Stall[];
  /** Garbage-collection pauses in the measured window (PerformanceObserver 'gc'). */
  gc: GcTotals;
}

interface GcTotals {
  /** Scavenges: count, total and longest pause (ms). */
  minor: { count: number; totalMs: number; maxMs: number };
  /** Mark-compact (and incremental-marking / weak-callback) pauses. */
  major: { count: number; totalMs: number; maxMs: number };
}

const noGc = (): GcTotals => ({
  minor: { count: 0, totalMs: 0, maxMs: 0 },
  major: { count: 0, totalMs: 0, maxMs: 0 },
});

/** Collects GC pauses while `on`: one observer for the whole benchmark. */
const gcWatch = { on: false, totals: noGc() };
const gcObserver = new PerformanceObserver((list) => {
  if (!gcWatch.on) return;
  for (const e of list.getEntries()) {
    const kind = ((e as PerformanceEntry & { detail?: unknown }).detail as { kind?: number } | undefined)
      ?.kind;
    const bucket = kind === constants.NODE_PERFORMANCE_GC_MINOR ? gcWatch.totals.minor : gcWatch.totals.major;
    bucket.count++;
    bucket.totalMs += e.duration;
    bucket.maxMs = Math.max(bucket.maxMs, e.duration);
  }
});

/**
 * Early fires tolerated when assigning a start to its tick: libuv arms timers from its cached
 * loop time, which lags `Date.now()` under load, so a timer can fire a few ms before its tick
 * on the wall clock. Without the tolerance such a start would count as ~1 period late.
 */
const EARLY_TOLERANCE_MS = PERIOD_MS / 10;

/**
 * Lateness of each start against its worker's schedule (first start + k × period, as Go's
 * ticker and both loops here schedule), after warm-up; early fires count as 0.
 */
function drifts(starts: Map<string, number[]>, fromMs: number): number[] {
  const out: number[] = [];
  for (const list of starts.values()) {
    const first = list[0];
    if (first === undefined) continue;
    for (const t of list) {
      if (t < fromMs) continue;
      const k = Math.floor((t - first + EARLY_TOLERANCE_MS) / PERIOD_MS);
      out.push(Math.max(0, t - (first + k * PERIOD_MS)));
    }
  }
  return out;
}

async function measure(
  run: (
    onProbe: (key: string, startedAtMs: number, ok: boolean, why?: string) => void,
  ) => Promise<() => void>,
): Promise<Sample> {
  const starts = new Map<string, number[]>();
  let probes = 0;
  let failures = 0;
  let measuring = false;
  let cpuAtStart = process.cpuUsage();
  const t0 = Date.now();
  const reasons = new Map<string, number>();
  const stop = await run((key, startedAtMs, ok, why) => {
    const list = starts.get(key) ?? [];
    if (list.length === 0) starts.set(key, list);
    list.push(startedAtMs);
    if (measuring) {
      probes++;
      if (!ok) {
        failures++;
        const reason = (why ?? '?').replace(/127\.0\.0\.1:\d+/g, 'ADDR').slice(0, 90);
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
    }
  });
  await new Promise((r) => setTimeout(r, WARMUP_MS));
  const loop = new LoopStalls();
  gcWatch.totals = noGc();
  gcWatch.on = true;
  loop.start();
  measuring = true;
  cpuAtStart = process.cpuUsage();
  const windowStart = performance.now();
  await new Promise((r) => setTimeout(r, MEASURE_MS));
  const cpu = process.cpuUsage(cpuAtStart);
  measuring = false;
  const stalls = loop.stop();
  // Entries of the window's last collections arrive asynchronously: give them a turn.
  await new Promise((r) => setImmediate(r));
  gcWatch.on = false;
  const gc = gcWatch.totals;
  // A busy event loop fires the end-of-window timer late: rates use the real window.
  const windowMs = performance.now() - windowStart;
  stop();
  await new Promise((r) => setTimeout(r, 1500));
  return {
    cpuMsPerProbe: (cpu.user + cpu.system) / 1000 / probes,
    probes,
    windowMs,
    failures,
    reasons: [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 3),
    drift: drifts(starts, t0 + WARMUP_MS),
    loopDelayP99Ms: stalls.p99Ms,
    loopDelayMaxMs: stalls.maxMs,
    longStalls: stalls.long,
    gc,
  };
}

function target(i: number): { kind: 'http' | 'tcp'; port: number } {
  const kind = i % 2 === 0 ? 'http' : 'tcp';
  const list = kind === 'http' ? ports.http : ports.tcp;
  return { kind, port: list[Math.floor(i / 2) % list.length] as number };
}

async function ours(
  onProbe: (key: string, startedAtMs: number, ok: boolean, why?: string) => void,
): Promise<() => void> {
  const statuses = new Map<string, V1PodStatus>();
  const manager = new ProbeManager({ statusProvider: { getPodStatus: (uid) => statuses.get(uid) } });
  manager.on('probe', (a: ProbeAttempt) =>
    onProbe(
      `${a.podUID}/${a.containerName}`,
      a.startedAtMs,
      a.result === 'success' && a.error === undefined,
      a.error?.message ?? a.output,
    ),
  );
  await manager.start();
  const startedAt = new Date();
  for (let p = 0; p < PROBES / CONTAINERS_PER_POD; p++) {
    const { pod, status } = benchPod(p, CONTAINERS_PER_POD, target, startedAt);
    statuses.set(pod.metadata?.uid ?? '', status);
    manager.addPod(pod);
  }
  return () => void manager.stop();
}

async function bare(
  onProbe: (key: string, startedAtMs: number, ok: boolean, why?: string) => void,
): Promise<() => void> {
  let stopped = false;
  const timers: NodeJS.Timeout[] = [];
  // The bytes the prober sends for these targets (Go's header order).
  const requestOf = new Map<number, Buffer>();
  for (const port of ports.http) {
    requestOf.set(
      port,
      Buffer.from(
        `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUser-Agent: ${DEFAULT_USER_AGENT}\r\nConnection: close\r\nAccept: */*\r\n\r\n`,
      ),
    );
  }
  for (let i = 0; i < PROBES; i++) {
    const { kind, port } = target(i);
    const bytes = requestOf.get(port);
    const key = String(i);
    let next = Date.now() + Math.floor(Math.random() * PERIOD_MS);
    const once = (): void => {
      const startedAt = Date.now();
      const done = (ok: boolean, why?: string) => onProbe(key, startedAt, ok, why);
      if (kind === 'http') {
        // The floor of the same exchange: the prober's request bytes on a connection of its
        // own, the response read until the server closes, only its status line looked at.
        const s = connect({ host: '127.0.0.1', port });
        let head = '';
        s.setTimeout(1000, () => s.destroy());
        s.once('connect', () => s.write(bytes as Buffer));
        s.on('data', (d: Buffer) => {
          if (head.length < 12) head += d.toString('latin1', 0, 12);
        });
        s.once('end', () => done(head.startsWith('HTTP/1.1 200')));
        s.once('error', (e: NodeJS.ErrnoException) => done(false, e.code ?? e.message));
      } else {
        const s = connect({ host: '127.0.0.1', port });
        s.setTimeout(1000, () => s.destroy());
        s.once('connect', () => {
          s.destroy();
          done(true);
        });
        s.once('error', (e: NodeJS.ErrnoException) => done(false, e.code ?? e.message));
      }
    };
    let anchored = false;
    const tick = (): void => {
      if (stopped) return;
      // Like the prober's ticker (Go's): the schedule starts at the first fire.
      if (!anchored) {
        anchored = true;
        next = Date.now();
      }
      once();
      next += PERIOD_MS;
      while (next <= Date.now()) next += PERIOD_MS;
      timers[i] = setTimeout(tick, next - Date.now());
    };
    timers[i] = setTimeout(tick, next - Date.now());
  }
  return () => {
    stopped = true;
    for (const t of timers) clearTimeout(t);
  };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function median(values: number[]): number {
  return quantile(values, 0.5);
}

/** The median of each figure over the rounds (drift quantiles over all rounds' starts). */
function combine(samples: Sample[]): Sample & { cpuRange: [number, number] } {
  const cpu = samples.map((s) => s.cpuMsPerProbe);
  const gc = noGc();
  for (const s of samples) {
    for (const k of ['minor', 'major'] as const) {
      gc[k].count += s.gc[k].count;
      gc[k].totalMs += s.gc[k].totalMs;
      gc[k].maxMs = Math.max(gc[k].maxMs, s.gc[k].maxMs);
    }
  }
  const reasons = new Map<string, number>();
  for (const s of samples) for (const [r, n] of s.reasons) reasons.set(r, (reasons.get(r) ?? 0) + n);
  return {
    cpuMsPerProbe: median(cpu),
    cpuRange: [Math.min(...cpu), Math.max(...cpu)],
    probes: samples.reduce((n, s) => n + s.probes, 0),
    failures: samples.reduce((n, s) => n + s.failures, 0),
    windowMs: samples.reduce((n, s) => n + s.windowMs, 0),
    reasons: [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 3),
    drift: samples.flatMap((s) => s.drift),
    loopDelayP99Ms: median(samples.map((s) => s.loopDelayP99Ms)),
    loopDelayMaxMs: Math.max(...samples.map((s) => s.loopDelayMaxMs)),
    longStalls: samples.flatMap((s) => s.longStalls),
    gc,
  };
}

it(`${PROBES} probes at 1 s: ProbeManager vs a bare timer loop`, async () => {
  const loadBefore = loadavg();
  // Warm-up of both loops (JIT, the servers, the socket tables); not reported.
  await measure(bare);
  await measure(ours);
  const bareRounds: Sample[] = [];
  const ourRounds: Sample[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    bareRounds.push(await measure(bare));
    ourRounds.push(await measure(ours));
  }
  const base = combine(bareRounds);
  const mine = combine(ourRounds);
  const row = (name: string, s: ReturnType<typeof combine>) => ({
    loop: name,
    'probes/s': Math.round(s.probes / (s.windowMs / 1000)),
    failed: s.failures,
    'CPU µs/probe (median)': Math.round(s.cpuMsPerProbe * 1000),
    'CPU range': s.cpuRange.map((x) => Math.round(x * 1000)).join('–'),
    'drift p50 ms': quantile(s.drift, 0.5),
    'drift p99 ms': quantile(s.drift, 0.99),
    'loop stall p99 / max ms': `${s.loopDelayP99Ms.toFixed(0)} / ${s.loopDelayMaxMs.toFixed(0)}`,
    'GC minor n / total / max ms': `${s.gc.minor.count} / ${s.gc.minor.totalMs.toFixed(0)} / ${s.gc.minor.maxMs.toFixed(1)}`,
    'GC major n / total / max ms': `${s.gc.major.count} / ${s.gc.major.totalMs.toFixed(0)} / ${s.gc.major.maxMs.toFixed(1)}`,
  });
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  console.log(`load average (1, 5, 15 min) before: ${load(loadBefore)}, after: ${load(loadavg())}`);
  console.table([row('bare timers + requests', base), row('ProbeManager', mine)]);
  const ratios = ourRounds.map((s, i) => s.cpuMsPerProbe / (bareRounds[i] as Sample).cpuMsPerProbe);
  console.log(
    `CPU ratio (ours / bare), medians over ${ROUNDS} alternating rounds: ${(mine.cpuMsPerProbe / base.cpuMsPerProbe).toFixed(2)}× (per round: ${ratios.map((x) => x.toFixed(2)).join(', ')})`,
  );
  const stallList = (s: Sample) =>
    s.longStalls.map((x) => `${x.ms.toFixed(0)} (CPU ${x.cpuMs.toFixed(0)})`).join(', ') || 'none';
  console.log(
    `stalls ≥ ${LoopStalls.LONG_MS} ms, with the process CPU in each (ms) — bare: ${stallList(base)}; ours: ${stallList(mine)}`,
  );
  console.log(
    `top failure reasons (bare): ${JSON.stringify(base.reasons)} (ours): ${JSON.stringify(mine.reasons)}`,
  );
}, 600_000);

// Unary call throughput and latency of `@nodeagent/cri`'s client next to a bare
// @grpc/grpc-js + @grpc/proto-loader dynamic client, both against the FakeRuntime (from
// `@nodeagent/cri/testing`) served over a real unix socket by a child process: Version, and
// ListContainers returning 1,000 and 10,000 containers (kubelet-labelled: 4 labels, 2
// annotations each). Also the decode step alone (same bytes, both decoders) and the fake's CPU
// per call, to show where a list call's time goes. Prints a table; asserts nothing about speed.
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, it } from 'vitest';
import { createCriClient } from '../src/client.js';
import { ListContainersResponse } from '../src/gen/runtime/v1/api.js';
import { CriWireReader } from '../src/wire-reader.js';
import { type FakeRuntimeProcess, type SeedPod, startFakeRuntimeProcess } from './fake-runtime-process.js';

const IMAGE = 'docker.io/library/busybox:1.36';
const CONTAINERS_PER_POD = 4;

let fake: FakeRuntimeProcess;
let seededPods = 0;

/** Kubelet-shaped pods `from`…`to - 1`, four containers each. */
function pods(from: number, to: number): SeedPod[] {
  const out: SeedPod[] = [];
  for (let p = from; p < to; p++) {
    const name = `pod-${p}`;
    const uid = `7c1f0e2a-5d3b-4c8e-9a6f-${p.toString(16).padStart(12, '0')}`;
    const podLabels = {
      'io.kubernetes.pod.name': name,
      'io.kubernetes.pod.namespace': 'default',
      'io.kubernetes.pod.uid': uid,
    };
    out.push({
      sandbox: { metadata: { name, namespace: 'default', uid, attempt: 0 }, labels: podLabels },
      containers: Array.from({ length: CONTAINERS_PER_POD }, (_, c) => ({
        metadata: { name: `container-${c}`, attempt: 0 },
        image: { image: IMAGE, userSpecifiedImage: IMAGE },
        labels: { ...podLabels, 'io.kubernetes.container.name': `container-${c}` },
        annotations: {
          'io.kubernetes.container.hash': (p * 7 + c).toString(16).padStart(8, '0'),
          'io.kubernetes.container.restartCount': '0',
        },
      })),
    });
  }
  return out;
}

async function seedContainers(total: number): Promise<void> {
  const target = total / CONTAINERS_PER_POD;
  await fake.seed(pods(seededPods, target));
  seededPods = target;
}

beforeAll(async () => {
  fake = await startFakeRuntimeProcess({ images: [{ ref: IMAGE }] });
});
afterAll(async () => {
  await fake?.stop();
});

type Call = () => Promise<unknown>;
interface Figures {
  perSecond: number;
  p50: number;
  p99: number;
  samples: number;
  /** This process's CPU time per call, ms: less sensitive to other jobs than wall-clock latency. */
  cpuMs: number;
}

function summarise(latencies: number[], totalMs: number, cpuUs = 0): Figures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
  return {
    perSecond: (latencies.length / totalMs) * 1000,
    p50: pct(0.5),
    p99: pct(0.99),
    samples: sorted.length,
    cpuMs: cpuUs / 1000 / Math.max(1, sorted.length),
  };
}

/**
 * Runs the two clients in alternating blocks (ours, bare, bare, ours, …) so both see the same
 * machine load; returns each one's pooled figures.
 */
async function compare(
  ours: Call,
  bare: Call,
  iterations: number,
  rounds: number,
): Promise<{ ours: Figures; bare: Figures }> {
  for (let i = 0; i < Math.min(20, iterations); i++) {
    await ours();
    await bare();
  }
  const lat = { ours: [] as number[], bare: [] as number[] };
  const total = { ours: 0, bare: 0 };
  const cpu = { ours: 0, bare: 0 };
  for (let r = 0; r < rounds; r++) {
    const order: Array<'ours' | 'bare'> = r % 2 === 0 ? ['ours', 'bare'] : ['bare', 'ours'];
    for (const who of order) {
      const call = who === 'ours' ? ours : bare;
      const start = performance.now();
      const cpuStart = process.cpuUsage();
      for (let i = 0; i < iterations; i++) {
        const t0 = performance.now();
        await call();
        lat[who].push(performance.now() - t0);
      }
      const used = process.cpuUsage(cpuStart);
      cpu[who] += used.user + used.system;
      total[who] += performance.now() - start;
    }
  }
  return {
    ours: summarise(lat.ours, total.ours, cpu.ours),
    bare: summarise(lat.bare, total.bare, cpu.bare),
  };
}

function timeDecode(decode: () => unknown, iterations: number): number {
  for (let i = 0; i < 3; i++) decode();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    decode();
    samples.push(performance.now() - t0);
  }
  return summarise(samples, 1).p50;
}

it('CRI client: ours vs bare grpc-js + proto-loader, FakeRuntime in a child process', async () => {
  const ours = createCriClient(fake.endpoint);
  const definition = protoLoader.loadSync(
    fileURLToPath(new URL('../proto/runtime/v1/api.proto', import.meta.url)),
    { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true },
  );
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    runtime: { v1: { RuntimeService: grpc.ServiceClientConstructor } };
  };
  const bare = new pkg.runtime.v1.RuntimeService(fake.endpoint, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    'grpc.max_send_message_length': 16 * 1024 * 1024,
  });
  const bareCall =
    (method: string, request: object): Call =>
    () =>
      new Promise((resolve, reject) => {
        const fn = bare[method] as (
          req: object,
          opts: grpc.CallOptions,
          cb: (e: grpc.ServiceError | null, r?: unknown) => void,
        ) => void;
        fn.call(bare, request, { deadline: Date.now() + 120_000 }, (e, r) => (e ? reject(e) : resolve(r)));
      });
  const bareDecode = (
    pkg.runtime.v1.RuntimeService.service as unknown as Record<
      string,
      { responseDeserialize(b: Buffer): unknown }
    >
  ).ListContainers;

  const cases = [
    { name: 'version', containers: 0, iterations: 500, rounds: 4 },
    { name: 'listContainers ×1,000', containers: 1_000, iterations: 15, rounds: 4 },
    { name: 'listContainers ×10,000', containers: 10_000, iterations: 5, rounds: 4 },
  ];
  const rows: Array<Record<string, string | number>> = [];
  const notes: string[] = [];
  for (const c of cases) {
    if (c.containers > 0) await seedContainers(c.containers);
    const call: [Call, Call] =
      c.containers === 0
        ? [() => ours.runtime.version({ version: 'v1' }), bareCall('Version', { version: 'v1' })]
        : [() => ours.runtime.listContainers({}), bareCall('ListContainers', {})];
    const cpuBefore = await fake.cpuUs();
    const r = await compare(call[0], call[1], c.iterations, c.rounds);
    const serverCpuUs = (await fake.cpuUs()) - cpuBefore;
    const calls = r.ours.samples + r.bare.samples + 2 * Math.min(20, c.iterations);
    const row = (client: string, f: Figures) => ({
      call: c.name,
      client,
      'calls/s': Math.round(f.perSecond),
      'p50 ms': Number(f.p50.toFixed(2)),
      'p99 ms': Number(f.p99.toFixed(2)),
      'client CPU ms/call': Number(f.cpuMs.toFixed(3)),
    });
    const pct = (a: number, b: number) => `${((a / b - 1) * 100).toFixed(1)}%`;
    rows.push(row('ours', r.ours), {
      ...row('bare', r.bare),
      'ours vs bare: p50 / CPU': `${pct(r.ours.p50, r.bare.p50)} / ${pct(r.ours.cpuMs, r.bare.cpuMs)}`,
    });
    notes.push(
      `${c.name}: fake runtime CPU ${(serverCpuUs / calls / 1000).toFixed(2)} ms per call (child process)`,
    );
    if (c.containers > 0) {
      const response = await ours.runtime.listContainers({});
      const bytes = Buffer.from(ListContainersResponse.encode(response).finish());
      const n = c.containers >= 10_000 ? 10 : 30;
      const oursMs = timeDecode(() => ListContainersResponse.decode(new CriWireReader(bytes)), n);
      const stockMs = timeDecode(() => ListContainersResponse.decode(bytes), n);
      const bareMs =
        bareDecode === undefined ? Number.NaN : timeDecode(() => bareDecode.responseDeserialize(bytes), n);
      notes.push(
        `${c.name}: decode only (${(bytes.length / 1024).toFixed(0)} KiB, p50): ours ${oursMs.toFixed(1)} ms, ts-proto with the stock reader ${stockMs.toFixed(1)} ms, proto-loader ${bareMs.toFixed(1)} ms`,
      );
    }
  }
  ours.close();
  bare.close();
  console.log(
    `\n@nodeagent/cri client vs bare grpc-js + proto-loader; FakeRuntime in a child process over a unix socket; Node ${process.version}`,
  );
  console.table(rows);
  console.log(notes.join('\n'));
});

// Unary call throughput and latency of @nodeagent/cri's client next to a bare
// @grpc/grpc-js + @grpc/proto-loader dynamic client, both against the same grpc-js server
// on a real unix socket: Version, and ListContainers returning 1,000 and 10,000 containers.
// Prints a table; asserts nothing about speed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, it } from 'vitest';
import { createCriClient } from '../src/client.js';
import {
  type Container,
  ContainerState,
  type ListContainersResponse,
  RuntimeServiceService,
} from '../src/gen/runtime/v1/api.js';

const dir = mkdtempSync(join(tmpdir(), 'cri-bench-'));
const endpoint = `unix://${join(dir, 'cri.sock')}`;
const server = new grpc.Server();
let containerCount = 0;
const responses = new Map<number, ListContainersResponse>();

function containers(n: number): ListContainersResponse {
  const list: Container[] = [];
  for (let i = 0; i < n; i++) {
    const id = i.toString(16).padStart(64, '0');
    list.push({
      id,
      podSandboxId: (i >> 2).toString(16).padStart(64, 'f'),
      metadata: { name: `container-${i}`, attempt: 0 },
      image: {
        image: 'sha256:4f1d8a1c0c8bbd9e5e2c4a1e0b4c2a1b6f9d2a3c5e7f8a9b0c1d2e3f4a5b6c7d',
        annotations: {},
        userSpecifiedImage: 'docker.io/library/busybox:1.36',
        runtimeHandler: '',
        imageRef: '',
      },
      imageRef: 'sha256:4f1d8a1c0c8bbd9e5e2c4a1e0b4c2a1b6f9d2a3c5e7f8a9b0c1d2e3f4a5b6c7d',
      state: ContainerState.CONTAINER_RUNNING,
      createdAt: 1_717_171_717_000_000_000n + BigInt(i),
      labels: {
        'io.kubernetes.container.name': `container-${i}`,
        'io.kubernetes.pod.name': `pod-${i >> 2}`,
        'io.kubernetes.pod.namespace': 'default',
        'io.kubernetes.pod.uid': `uid-${i >> 2}`,
      },
      annotations: {
        'io.kubernetes.container.hash': 'abcd1234',
        'io.kubernetes.container.restartCount': '0',
      },
      imageId: 'sha256:4f1d8a1c0c8bbd9e5e2c4a1e0b4c2a1b6f9d2a3c5e7f8a9b0c1d2e3f4a5b6c7d',
    });
  }
  return { containers: list };
}

beforeAll(async () => {
  for (const n of [1_000, 10_000]) responses.set(n, containers(n));
  server.addService(RuntimeServiceService, {
    version: (_call: unknown, cb: grpc.sendUnaryData<unknown>) =>
      cb(null, { version: 'v1', runtimeName: 'bench', runtimeVersion: '1.0.0', runtimeApiVersion: 'v1' }),
    listContainers: (_call: unknown, cb: grpc.sendUnaryData<unknown>) =>
      cb(null, responses.get(containerCount)),
  } as grpc.UntypedServiceImplementation);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(endpoint, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
  );
});
afterAll(() => {
  server.forceShutdown();
  rmSync(dir, { recursive: true, force: true });
});

type Call = () => Promise<unknown>;

async function measure(
  call: Call,
  iterations: number,
): Promise<{ perSecond: number; p50: number; p99: number }> {
  for (let i = 0; i < Math.min(20, iterations); i++) await call(); // warm-up
  const latencies: number[] = [];
  const start = performance.now();
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await call();
    latencies.push(performance.now() - t0);
  }
  const total = performance.now() - start;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  return { perSecond: (iterations / total) * 1000, p50: pct(0.5), p99: pct(0.99) };
}

it('CRI client: ours vs bare grpc-js + proto-loader', async () => {
  const ours = createCriClient(endpoint);
  const definition = protoLoader.loadSync(
    fileURLToPath(new URL('../proto/runtime/v1/api.proto', import.meta.url)),
    {
      keepCase: false,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    },
  );
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    runtime: { v1: { RuntimeService: grpc.ServiceClientConstructor } };
  };
  const bare = new pkg.runtime.v1.RuntimeService(endpoint, grpc.credentials.createInsecure(), {
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

  const cases: Array<{ name: string; n: number; iterations: number; ours: Call; bare: Call }> = [
    {
      name: 'version',
      n: 0,
      iterations: 2_000,
      ours: () => ours.runtime.version({ version: 'v1' }),
      bare: bareCall('Version', { version: 'v1' }),
    },
    {
      name: 'listContainers ×1,000',
      n: 1_000,
      iterations: 50,
      ours: () => ours.runtime.listContainers({}),
      bare: bareCall('ListContainers', {}),
    },
    {
      name: 'listContainers ×10,000',
      n: 10_000,
      iterations: 10,
      ours: () => ours.runtime.listContainers({}),
      bare: bareCall('ListContainers', {}),
    },
  ];

  const rows: string[] = [];
  const fmt = (r: { perSecond: number; p50: number; p99: number }) =>
    `${r.perSecond.toFixed(0).padStart(8)} ${r.p50.toFixed(2).padStart(9)} ${r.p99.toFixed(2).padStart(9)}`;
  for (const c of cases) {
    containerCount = c.n;
    // Alternate the order in two rounds and keep each client's better round.
    const a1 = await measure(c.ours, c.iterations);
    const b1 = await measure(c.bare, c.iterations);
    const b2 = await measure(c.bare, c.iterations);
    const a2 = await measure(c.ours, c.iterations);
    const best = (x: typeof a1, y: typeof a1) => (x.p50 <= y.p50 ? x : y);
    const a = best(a1, a2);
    const b = best(b1, b2);
    rows.push(
      `${c.name.padEnd(24)} ${'ours'.padEnd(6)} ${fmt(a)}`,
      `${''.padEnd(24)} ${'bare'.padEnd(6)} ${fmt(b)}   (ours p50 ${((a.p50 / b.p50 - 1) * 100).toFixed(1)}% vs bare)`,
    );
  }
  ours.close();
  bare.close();
  console.log(
    [
      '',
      `@nodeagent/cri client vs bare grpc-js + proto-loader, unix socket, Node ${process.version}`,
      `${'call'.padEnd(24)} ${'client'.padEnd(6)} ${'calls/s'.padStart(8)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`,
      ...rows,
      '',
    ].join('\n'),
  );
});

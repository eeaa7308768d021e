import { join } from 'node:path';
import { Metadata, type ServerWritableStream, status } from '@grpc/grpc-js';
import * as promClient from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CriClient, createCriClient } from '../src/client.js';
import {
  CriError,
  isCancelled,
  isDeadlineExceeded,
  isNotFound,
  isUnavailable,
  isUnimplemented,
} from '../src/errors.js';
import {
  type Container,
  type ContainerEventResponse,
  ContainerEventType,
  ContainerState,
  type GetEventsRequest,
  type StreamContainersRequest,
  type StreamContainersResponse,
} from '../src/gen/runtime/v1/api.js';
import { type MinimalServer, startMinimalServer, tempSocketDir } from './minimal-runtime-server.js';

const NS_2024 = 1_717_171_717_123_456_789n; // > 2^53: must survive exactly

function container(i: number): Container {
  return {
    id: `c${i}`,
    podSandboxId: 'p1',
    metadata: { name: `app-${i}`, attempt: 0 },
    image: { image: 'busybox', annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: '' },
    imageRef: 'sha256:abc',
    state: i % 2 === 0 ? ContainerState.CONTAINER_RUNNING : ContainerState.CONTAINER_EXITED,
    createdAt: NS_2024 + BigInt(i),
    labels: { app: 'x' },
    annotations: {},
    imageId: 'sha256:abc',
  };
}

function notFound(message: string) {
  return Object.assign(new Error(message), {
    code: status.NOT_FOUND,
    details: message,
    metadata: new Metadata(),
  });
}

describe('CriClient against a real grpc-js server on a unix socket', () => {
  let sock: ReturnType<typeof tempSocketDir>;
  let server: MinimalServer | undefined;
  let client: CriClient | undefined;
  const hanging: Array<() => void> = [];

  beforeEach(() => {
    sock = tempSocketDir();
  });
  afterEach(async () => {
    client?.close();
    client = undefined;
    for (const release of hanging.splice(0)) release();
    await server?.stop();
    server = undefined;
    sock.cleanup();
  });

  const socketPath = () => join(sock.dir, 'cri.sock');

  async function start(runtime: Parameters<typeof startMinimalServer>[1]['runtime'] = {}) {
    server = await startMinimalServer(socketPath(), {
      runtime: {
        version: (call, cb) =>
          cb(null, {
            version: call.request.version,
            runtimeName: 'minimal',
            runtimeVersion: '1.0.0',
            runtimeApiVersion: 'v1',
          }),
        listContainers: (call, cb) => {
          const wanted = call.request.filter?.state?.state;
          const all = [0, 1, 2, 3].map(container);
          cb(null, { containers: wanted === undefined ? all : all.filter((c) => c.state === wanted) });
        },
        containerStatus: (call, cb) =>
          cb(notFound(`container "${call.request.containerId}" not found`), null),
        // Never answers until the test ends: for deadline and abort tests.
        execSync: (_call, cb) => {
          hanging.push(() => cb(null, { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 }));
        },
        ...runtime,
      },
    });
    return server;
  }

  it('round-trips a unary call with defaults filled in and exact int64 values', async () => {
    await start();
    client = createCriClient(`unix://${socketPath()}`);
    await expect(client.runtime.version({ version: 'v1' })).resolves.toEqual({
      version: 'v1',
      runtimeName: 'minimal',
      runtimeVersion: '1.0.0',
      runtimeApiVersion: 'v1',
    });
    const { containers } = await client.runtime.listContainers({
      filter: { state: { state: ContainerState.CONTAINER_RUNNING } },
    });
    expect(containers.map((c) => c.id)).toEqual(['c0', 'c2']);
    expect(containers[1]?.createdAt).toBe(NS_2024 + 2n);
    expect(containers[0]?.labels).toEqual({ app: 'x' });
  });

  it('maps gRPC errors to CriError with the RPC, code name and details', async () => {
    await start();
    client = createCriClient(`unix://${socketPath()}`);
    const error = await client.runtime.containerStatus({ containerId: 'nope' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CriError);
    expect(error).toMatchObject({
      rpc: 'RuntimeService/ContainerStatus',
      code: 'NOT_FOUND',
      grpcCode: status.NOT_FOUND,
      details: 'container "nope" not found',
    });
    expect(isNotFound(error)).toBe(true);
    expect(isUnavailable(error)).toBe(false);
    expect((error as Error).message).toBe(
      'RuntimeService/ContainerStatus: NOT_FOUND: container "nope" not found',
    );
  });

  it('reports RPCs the runtime does not implement as UNIMPLEMENTED', async () => {
    await start();
    client = createCriClient(`unix://${socketPath()}`);
    const error = await client.image.imageFsInfo().catch((e: unknown) => e);
    expect(isUnimplemented(error)).toBe(true);
    expect((error as CriError).rpc).toBe('ImageService/ImageFsInfo');
  });

  it('fails a call that outlives its deadline with DEADLINE_EXCEEDED', async () => {
    await start();
    client = createCriClient(`unix://${socketPath()}`, { timeoutMs: 60_000 });
    const error = await client.runtime
      .execSync({ containerId: 'c0' }, { timeoutMs: 50 })
      .catch((e: unknown) => e);
    expect(isDeadlineExceeded(error)).toBe(true);
  });

  it('applies the client-wide default deadline', async () => {
    await start();
    client = createCriClient(`unix://${socketPath()}`, { timeoutMs: 50 });
    await expect(client.runtime.execSync({ containerId: 'c0' })).rejects.toSatisfy(isDeadlineExceeded);
  });

  it('cancels a call through its AbortSignal with CANCELLED and the reason as cause', async () => {
    await start();
    client = createCriClient(`unix://${socketPath()}`);
    const controller = new AbortController();
    const pending = client.runtime.execSync({ containerId: 'c0' }, { signal: controller.signal });
    const reason = new Error('shutting down');
    setImmediate(() => controller.abort(reason));
    const error = await pending.catch((e: unknown) => e);
    expect(isCancelled(error)).toBe(true);
    expect((error as CriError).cause).toBe(reason);
    // An already-aborted signal never reaches the wire.
    await expect(client.runtime.version({}, { signal: AbortSignal.abort() })).rejects.toSatisfy(isCancelled);
  });

  it('streams getContainerEvents and ends cleanly on abort', async () => {
    let serverSawCancel = false;
    await start({
      getContainerEvents: (call: ServerWritableStream<GetEventsRequest, ContainerEventResponse>) => {
        call.on('cancelled', () => {
          serverSawCancel = true;
        });
        for (const [i, type] of [
          ContainerEventType.CONTAINER_CREATED_EVENT,
          ContainerEventType.CONTAINER_STARTED_EVENT,
        ].entries()) {
          call.write({
            containerId: `c${i}`,
            containerEventType: type,
            createdAt: NS_2024,
            containersStatuses: [],
          });
        }
        // ...and keeps the stream open, like a runtime with nothing more to report.
      },
    });
    client = createCriClient(`unix://${socketPath()}`);
    const controller = new AbortController();
    const seen: ContainerEventResponse[] = [];
    for await (const event of client.runtime.getContainerEvents({}, { signal: controller.signal })) {
      seen.push(event);
      if (seen.length === 2) controller.abort();
    }
    expect(seen.map((e) => [e.containerId, e.containerEventType, e.createdAt])).toEqual([
      ['c0', ContainerEventType.CONTAINER_CREATED_EVENT, NS_2024],
      ['c1', ContainerEventType.CONTAINER_STARTED_EVENT, NS_2024],
    ]);
    await expect.poll(() => serverSawCancel).toBe(true);
  });

  it('cancels the stream when the consumer stops iterating', async () => {
    let serverSawCancel = false;
    await start({
      getContainerEvents: (call: ServerWritableStream<GetEventsRequest, ContainerEventResponse>) => {
        call.on('cancelled', () => {
          serverSawCancel = true;
        });
        call.write({ containerId: 'c0', containerEventType: 0, createdAt: 1n, containersStatuses: [] });
      },
    });
    client = createCriClient(`unix://${socketPath()}`);
    for await (const event of client.runtime.getContainerEvents()) {
      expect(event.containerId).toBe('c0');
      break;
    }
    await expect.poll(() => serverSawCancel).toBe(true);
  });

  it('surfaces UNIMPLEMENTED getContainerEvents as a typed error callers can fall back on', async () => {
    await start();
    client = createCriClient(`unix://${socketPath()}`);
    const consume = async () => {
      for await (const _ of client!.runtime.getContainerEvents()) {
        // nothing arrives
      }
    };
    await expect(consume()).rejects.toSatisfy(isUnimplemented);
  });

  it('serves Stream* lists from the streaming RPC when the runtime has it', async () => {
    let listCalls = 0;
    await start({
      streamContainers: (call: ServerWritableStream<StreamContainersRequest, StreamContainersResponse>) => {
        call.write({ containers: [container(0), container(1)] });
        call.write({ containers: [container(2)] });
        call.end();
      },
      listContainers: (_call, cb) => {
        listCalls++;
        cb(null, { containers: [] });
      },
    });
    client = createCriClient(`unix://${socketPath()}`);
    const chunks: string[][] = [];
    for await (const chunk of client.runtime.streamContainers({}))
      chunks.push(chunk.containers.map((c) => c.id));
    expect(chunks).toEqual([['c0', 'c1'], ['c2']]);
    expect(listCalls).toBe(0);
  });

  it('falls back to the unary list when a Stream* RPC is UNIMPLEMENTED, and remembers it', async () => {
    let listCalls = 0;
    await start({
      listContainers: (call, cb) => {
        listCalls++;
        expect(call.request.filter?.podSandboxId).toBe('p1');
        cb(null, { containers: [container(0), container(1)] });
      },
    });
    client = createCriClient(`unix://${socketPath()}`);
    for (let round = 0; round < 2; round++) {
      const chunks: string[][] = [];
      for await (const chunk of client.runtime.streamContainers({ filter: { podSandboxId: 'p1' } })) {
        chunks.push(chunk.containers.map((c) => c.id));
      }
      expect(chunks).toEqual([['c0', 'c1']]);
    }
    expect(listCalls).toBe(2);
  });

  it('fails fast with UNAVAILABLE when nothing listens on the socket', async () => {
    client = createCriClient(`unix://${socketPath()}`, { timeoutMs: 60_000 });
    const startedAt = performance.now();
    const error = await client.runtime.version().catch((e: unknown) => e);
    expect(isUnavailable(error)).toBe(true);
    // Not a timing assertion on speed: it must not have waited for the 60 s deadline.
    expect(performance.now() - startedAt).toBeLessThan(30_000);
  });

  it('recovers by itself when the runtime comes back on the same socket', async () => {
    await start();
    client = createCriClient(`unix://${socketPath()}`, {
      reconnectBackoffInitialMs: 50,
      reconnectBackoffMaxMs: 200,
    });
    await expect(client.runtime.version()).resolves.toMatchObject({ runtimeName: 'minimal' });

    await server?.stop();
    server = undefined;
    await expect.poll(() => client!.runtime.version().catch((e: unknown) => e)).toSatisfy(isUnavailable);

    await start();
    await expect
      .poll(() => client!.runtime.version().catch((e: unknown) => e), { timeout: 10_000, interval: 50 })
      .toMatchObject({ runtimeName: 'minimal' });
  });

  it('waitForReady resolves once connected and rejects with DEADLINE_EXCEEDED otherwise', async () => {
    client = createCriClient(`unix://${socketPath()}`);
    await expect(client.waitForReady({ timeoutMs: 100 })).rejects.toSatisfy(isDeadlineExceeded);
    await start();
    await expect(client.waitForReady({ timeoutMs: 10_000 })).resolves.toBeUndefined();
  });

  it('close() rejects later calls and in-flight calls', async () => {
    await start();
    client = createCriClient(`unix://${socketPath()}`);
    await client.runtime.version();
    const inFlight = client.runtime.execSync({ containerId: 'c0' });
    client.close();
    client.close(); // idempotent
    await expect(inFlight).rejects.toSatisfy(isCancelled);
    await expect(client.runtime.version()).rejects.toSatisfy(isCancelled);
  });

  it('records runtime_operations metrics on an injected registry', async () => {
    await start();
    const registry = new promClient.Registry();
    client = createCriClient(`unix://${socketPath()}`, { metrics: { registry, promClient } });
    await client.runtime.version();
    await client.runtime.version();
    await client.runtime.containerStatus({ containerId: 'x' }).catch(() => undefined);
    const text = await registry.metrics();
    expect(text).toContain('kubelet_runtime_operations_total{operation_type="version"} 2');
    expect(text).toContain('kubelet_runtime_operations_total{operation_type="container_status"} 1');
    expect(text).toContain('kubelet_runtime_operations_errors_total{operation_type="container_status"} 1');
    expect(text).not.toContain('kubelet_runtime_operations_errors_total{operation_type="version"}');
    expect(text).toContain('kubelet_runtime_operations_duration_seconds_count{operation_type="version"} 2');
    // A second client on the same registry shares the metrics instead of failing to register.
    const other = createCriClient(`unix://${socketPath()}`, { metrics: { registry, promClient } });
    await other.runtime.version();
    other.close();
    expect(await registry.metrics()).toContain(
      'kubelet_runtime_operations_total{operation_type="version"} 3',
    );
  });
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Metadata, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { runCli } from '../src/cli/run-cli.js';
import { type Container, ContainerState, PodSandboxState } from '../src/gen/runtime/v1/api.js';
import { type MinimalServer, startMinimalServer, tempSocketDir } from './minimal-runtime-server.js';

const NOW_MS = Date.UTC(2024, 4, 31, 12, 0, 0);
const nsAgo = (ms: number) => BigInt(NOW_MS - ms) * 1_000_000n;

const sock = tempSocketDir();
const logPath = join(sock.dir, 'app.log');
let server: MinimalServer;

function container(id: string, name: string, state: ContainerState, createdMsAgo: number): Container {
  return {
    id,
    podSandboxId: 'pod1aaaaaaaaaaaaaaaa',
    metadata: { name, attempt: 1 },
    image: {
      image: 'docker.io/library/busybox:1.36',
      annotations: {},
      userSpecifiedImage: '',
      runtimeHandler: '',
      imageRef: '',
    },
    imageRef: 'sha256:0123456789abcdef0123',
    state,
    createdAt: nsAgo(createdMsAgo),
    labels: {},
    annotations: {},
    imageId: 'sha256:0123456789abcdef0123',
  };
}

const CONTAINERS = [
  container('aaaaaaaaaaaaaaaaaaaa', 'web', ContainerState.CONTAINER_RUNNING, 5 * 60_000),
  container('bbbbbbbbbbbbbbbbbbbb', 'init', ContainerState.CONTAINER_EXITED, 3 * 3_600_000),
];

beforeAll(async () => {
  server = await startMinimalServer(join(sock.dir, 'cri.sock'), {
    runtime: {
      version: (_c, cb) =>
        cb(null, { version: 'v1', runtimeName: 'minimal', runtimeVersion: '1.2.3', runtimeApiVersion: 'v1' }),
      status: (_c, cb) =>
        cb(null, {
          status: { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }] },
          info: { config: '{"sandboxImage":"pause:3.9"}', plain: 'not json' },
          runtimeHandlers: [],
        }),
      listPodSandbox: (_c, cb) =>
        cb(null, {
          items: [
            {
              id: 'pod1aaaaaaaaaaaaaaaa',
              metadata: { name: 'nginx', uid: 'u1', namespace: 'default', attempt: 0 },
              state: PodSandboxState.SANDBOX_READY,
              createdAt: nsAgo(10 * 60_000),
              labels: {},
              annotations: {},
              runtimeHandler: '',
            },
          ],
        }),
      listContainers: (call, cb) => {
        const wanted = call.request.filter?.state?.state;
        cb(null, { containers: CONTAINERS.filter((c) => wanted === undefined || c.state === wanted) });
      },
      containerStatus: (call, cb) => {
        const c = CONTAINERS.find((x) => x.id.startsWith(call.request.containerId));
        if (!c) {
          cb(
            Object.assign(new Error('not found'), {
              code: status.NOT_FOUND,
              details: 'container not found',
              metadata: new Metadata(),
            }),
            null,
          );
          return;
        }
        cb(null, {
          status: {
            id: c.id,
            metadata: c.metadata,
            state: c.state,
            createdAt: c.createdAt,
            startedAt: c.createdAt + 1n,
            finishedAt: 0n,
            exitCode: 0,
            imageRef: c.imageRef,
            reason: '',
            message: '',
            labels: {},
            annotations: {},
            mounts: [],
            logPath,
            imageId: c.imageId,
            stopSignal: 0,
          },
          info: { pid: '42' },
        });
      },
      listContainerStats: (_c, cb) =>
        cb(null, {
          stats: [
            {
              attributes: {
                id: CONTAINERS[0]!.id,
                metadata: { name: 'web', attempt: 1 },
                labels: {},
                annotations: {},
              },
              cpu: { timestamp: 1n, usageNanoCores: { value: 25_000_000n } },
              memory: { timestamp: 1n, workingSetBytes: { value: 4_260_000n } },
              writableLayer: { timestamp: 1n, usedBytes: { value: 12_000n }, inodesUsed: { value: 7n } },
            },
          ],
        }),
      getContainerEvents: (call) => {
        call.write({ containerId: 'aaa', containerEventType: 1, createdAt: 5n, containersStatuses: [] });
      },
    },
    image: {
      listImages: (_c, cb) =>
        cb(null, {
          images: [
            {
              id: 'sha256:fedcba9876543210fedcba',
              repoTags: ['docker.io/library/busybox:1.36', 'localhost:5000/busybox:latest'],
              repoDigests: [],
              size: 4_260_000n,
              username: '',
              pinned: false,
            },
          ],
        }),
    },
  });
});
afterAll(async () => {
  await server.stop();
  sock.cleanup();
});

async function cli(
  argv: string[],
  extra: { signal?: AbortSignal; env?: Record<string, string>; onStdout?: () => void } = {},
) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: {
      write: (s: string) => {
        stdout += s;
        extra.onStdout?.();
      },
    },
    stderr: { write: (s: string) => (stderr += s) },
    env: extra.env ?? { CONTAINER_RUNTIME_ENDPOINT: server.endpoint },
    nowMs: () => NOW_MS,
    ...(extra.signal ? { signal: extra.signal } : {}),
  });
  return { code, stdout, stderr };
}

describe('nodeagent-crictl', () => {
  it('version (endpoint from CONTAINER_RUNTIME_ENDPOINT, or --runtime-endpoint)', async () => {
    const out = await cli(['version']);
    expect(out).toEqual({
      code: 0,
      stderr: '',
      stdout: 'Version:  v1\nRuntimeName:  minimal\nRuntimeVersion:  1.2.3\nRuntimeApiVersion:  v1\n',
    });
    const flag = await cli(['-r', server.endpoint, 'version', '-o', 'json'], { env: {} });
    expect(JSON.parse(flag.stdout)).toEqual({
      version: 'v1',
      runtimeName: 'minimal',
      runtimeVersion: '1.2.3',
      runtimeApiVersion: 'v1',
    });
  });

  it('ps shows running containers as a table; -a adds exited ones', async () => {
    const running = await cli(['ps']);
    expect(running.stdout).toBe(
      [
        'CONTAINER       IMAGE           CREATED         STATE     NAME   ATTEMPT   POD ID          POD',
        'aaaaaaaaaaaaa   0123456789abc   5 minutes ago   Running   web    1         pod1aaaaaaaaa   nginx',
        '',
      ].join('\n'),
    );
    const all = await cli(['ps', '-a']);
    expect(all.stdout.split('\n')[2]).toMatch(
      /^bbbbbbbbbbbbb\s+0123456789abc\s+3 hours ago\s+Exited\s+init\s+1\s+pod1aaaaaaaaa\s+nginx$/,
    );
  });

  it('ps -o json and -o yaml print the proto JSON form (int64 as strings, enums by name)', async () => {
    const json = JSON.parse((await cli(['ps', '-a', '-o', 'json'])).stdout);
    expect(json.containers).toHaveLength(2);
    expect(json.containers[0]).toMatchObject({
      id: 'aaaaaaaaaaaaaaaaaaaa',
      state: 'CONTAINER_RUNNING',
      createdAt: String(nsAgo(5 * 60_000)),
      metadata: { name: 'web', attempt: 1 },
    });
    const yaml = parseYaml((await cli(['ps', '-a', '-o', 'yaml'])).stdout);
    expect(yaml).toEqual(json);
  });

  it('pods, images and stats tables', async () => {
    expect((await cli(['pods'])).stdout).toBe(
      [
        'POD ID          CREATED          STATE   NAME    NAMESPACE   ATTEMPT   RUNTIME',
        'pod1aaaaaaaaa   10 minutes ago   READY   nginx   default     0         (default)',
        '',
      ].join('\n'),
    );
    expect((await cli(['images'])).stdout).toBe(
      [
        'IMAGE                       TAG      IMAGE ID        SIZE',
        'docker.io/library/busybox   1.36     fedcba9876543   4.26MB',
        'localhost:5000/busybox      latest   fedcba9876543   4.26MB',
        '',
      ].join('\n'),
    );
    expect((await cli(['stats'])).stdout).toBe(
      [
        'CONTAINER       NAME   CPU %   MEM      DISK   INODES   POD ID',
        'aaaaaaaaaaaaa   web    2.50    4.26MB   12kB   7        pod1aaaaaaaaa',
        '',
      ].join('\n'),
    );
  });

  it('inspect prints status and parsed verbose info; info merges conditions and info', async () => {
    const inspect = JSON.parse((await cli(['inspect', 'aaaa'])).stdout);
    expect(inspect.status).toMatchObject({ id: 'aaaaaaaaaaaaaaaaaaaa', state: 'CONTAINER_RUNNING', logPath });
    expect(inspect.info).toEqual({ pid: 42 });
    const info = JSON.parse((await cli(['info'])).stdout);
    expect(info).toEqual({
      status: { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }] },
      config: { sandboxImage: 'pause:3.9' },
      plain: 'not json',
    });
  });

  it('logs reads the CRI log file, joins partial lines and splits stdout/stderr', async () => {
    writeFileSync(
      logPath,
      [
        '2024-05-31T10:00:00.000000001Z stdout P hello ',
        '2024-05-31T10:00:00.000000002Z stderr F oops',
        '2024-05-31T10:00:00.000000003Z stdout F world',
        '',
      ].join('\n'),
    );
    expect(await cli(['logs', 'aaaa'])).toEqual({ code: 0, stdout: 'hello world\n', stderr: 'oops\n' });
  });

  it('events streams until the signal aborts', async () => {
    const controller = new AbortController();
    // The stream stays open after the first event; the test aborts once it is printed.
    const out = await cli(['events', '-o', 'json'], {
      signal: controller.signal,
      onStdout: () => controller.abort(),
    });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout.trim())).toEqual({
      containerId: 'aaa',
      containerEventType: 'CONTAINER_STARTED_EVENT',
      createdAt: '5',
    });
  });

  it('exit codes: 1 for runtime errors and bad endpoints, 2 for usage errors', async () => {
    const missing = await cli(['inspect', 'zzz']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      'nodeagent-crictl: RuntimeService/ContainerStatus: NOT_FOUND: container not found\n',
    );
    const badEndpoint = await cli(['-r', 'http://x', 'version']);
    expect(badEndpoint.code).toBe(1);
    expect(badEndpoint.stderr).toContain('unsupported scheme "http"');
    expect((await cli(['frobnicate'])).code).toBe(2);
    expect((await cli(['ps', '-o', 'xml'])).code).toBe(2);
    expect((await cli(['ps', '--bogus'])).code).toBe(2);
    expect((await cli(['inspect'])).code).toBe(2);
    expect((await cli([])).code).toBe(2);
    expect((await cli(['--help'])).code).toBe(0);
  });

  it('fails with UNAVAILABLE when the runtime is not there', async () => {
    const out = await cli(['-r', `unix://${join(sock.dir, 'absent.sock')}`, 'version']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('UNAVAILABLE');
  });
});

// A fake node for the kubelet server tests: the fake CRI runtime with one pod `default/web`
// (uid-web) whose container `app` ran twice (attempt 0 exited after printing "old line",
// attempt 1 runs and printed "new line 1..3" to stdout and "warn" to stderr), and the pod
// manager view of it with the status the kubelet would report.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CriClient, createCriClient } from '@nodeagent/cri';
import { FakeRuntime } from '@nodeagent/cri/testing';
import { type KubeletPod, KubeletServer, type KubeletServerOptions } from '../src/index.js';

export interface Fixture {
  readonly dir: string;
  readonly runtime: FakeRuntime;
  readonly cri: CriClient;
  readonly pods: KubeletPod[];
  readonly server: KubeletServer;
  readonly currentId: string;
  readonly previousId: string;
  readonly logDir: string;
  stop(): Promise<void>;
}

const podLabels = {
  'io.kubernetes.pod.uid': 'uid-web',
  'io.kubernetes.pod.name': 'web',
  'io.kubernetes.pod.namespace': 'default',
};

export async function startFixture(options: Partial<KubeletServerOptions> = {}): Promise<Fixture> {
  const dir = await mkdtemp(join(tmpdir(), 'kubelet-server-test-'));
  const runtime = new FakeRuntime({
    images: [{ ref: 'busybox' }],
    defaultExec: (argv) =>
      argv[0] === 'sh' && argv[1] === '-c' && /^echo /.test(argv[2] ?? '')
        ? { stdout: `${(argv[2] ?? '').slice(5)}\n`, stderr: '', exitCode: 0, durationMs: 0 }
        : { stdout: '', stderr: 'unknown command\n', exitCode: 3, durationMs: 0 },
  });
  runtime.addBehaviour({ command: ['old'] }, { logLines: ['old line'], crashOnStart: true, exitCode: 1 });
  runtime.addBehaviour(
    { command: ['new'] },
    { logLines: ['new line 1', 'new line 2', { stream: 'stderr', text: 'warn' }, 'new line 3'] },
  );
  await runtime.start();
  const cri = createCriClient(runtime.endpoint);
  const logDir = join(dir, 'pods', 'default_web_uid-web');
  const sandbox = runtime.addSandbox({
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web', attempt: 0 },
    logDirectory: logDir,
    labels: podLabels,
  });
  const container = (attempt: number, command: string) => ({
    metadata: { name: 'app', attempt },
    image: { image: 'busybox' },
    command: [command],
    logPath: `app/${attempt}.log`,
    labels: { ...podLabels, 'io.kubernetes.container.name': 'app' },
  });
  const previousId = await runtime.addContainer(sandbox, container(0, 'old'));
  const currentId = await runtime.addContainer(sandbox, container(1, 'new'));
  const pods: KubeletPod[] = [
    {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
      spec: { containers: [{ name: 'app', image: 'busybox' }] },
      status: {
        containerStatuses: [
          {
            name: 'app',
            containerID: `containerd://${currentId}`,
            state: { running: {} },
            lastState: { terminated: { containerID: `containerd://${previousId}` } },
          },
        ],
      },
    },
  ];
  const server = new KubeletServer({
    nodeName: 'node1',
    host: {
      getPods: () => pods,
      getPodByName: (ns, name) => pods.find((p) => p.metadata?.namespace === ns && p.metadata?.name === name),
    },
    runtime: cri.runtime,
    address: '127.0.0.1',
    port: 0,
    logPollMs: 10,
    ...options,
  });
  await server.start();
  return {
    dir,
    runtime,
    cri,
    pods,
    server,
    currentId,
    previousId,
    logDir,
    async stop() {
      await server.stop();
      cri.close();
      await runtime.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** GET over HTTPS without verifying the kubelet's self-signed certificate. */
export async function get(
  url: string,
  init: { headers?: Record<string, string>; cert?: string; key?: string; method?: string } = {},
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  const { request } = await import('node:https');
  const { request: httpRequest } = await import('node:http');
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const opts = {
      method: init.method ?? 'GET',
      headers: init.headers ?? {},
      rejectUnauthorized: false,
      ...(init.cert !== undefined ? { cert: init.cert, key: init.key } : {}),
    };
    const req = u.protocol === 'https:' ? request(u, opts) : httpRequest(u, opts);
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: res.headers,
        }),
      );
    });
    req.end();
  });
}

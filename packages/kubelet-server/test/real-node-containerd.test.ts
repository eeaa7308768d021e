// Real containerd 1.6 in a private node sandbox: `kubectl logs`, `kubectl exec` and `kubectl port-forward` of a
// busybox container through the mini-apiserver and the KubeletServer. kubectl 1.32 asks over
// WebSocket (v5.channel.k8s.io for exec, SPDY/3.1+portforward.k8s.io for port-forward); the
// mini-apiserver translates exec to SPDY and tunnels port-forward as kube-apiserver does, so
// containerd 1.6's streaming server (SPDY, v4 and older) serves it without kubectl falling
// back to SPDY itself. The streaming server listens on
// 127.0.0.1 inside the sandbox's network namespace: the test reaches it through a small
// forwarder process in that namespace, over a unix socket (the KubeletServer's dialer option).
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { type CriClient, createCriClient } from '@nodeagent/cri';
import { KubeRuntimeManager } from '@nodeagent/kuberuntime';
import {
  createSelfSignedTls,
  issueClientCertificate,
  type MiniApiServer,
  startMiniApiServer,
} from '@nodeagent/mini-apiserver';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type KubeletPod, KubeletServer, RequestAuthenticator } from '../src/index.js';

// Listens on a unix socket; each connection names the TCP port to reach on its first line.
const FORWARDER = `
const net = require('node:net');
net.createServer((c) => {
  let buf = Buffer.alloc(0);
  const onData = (d) => {
    buf = Buffer.concat([buf, d]);
    const nl = buf.indexOf(10);
    if (nl < 0) return;
    c.off('data', onData);
    c.pause(); // keep what arrives while connecting: pipe() resumes
    const port = Number(buf.subarray(0, nl).toString());
    const rest = buf.subarray(nl + 1);
    const up = net.connect(port, '127.0.0.1', () => { if (rest.length) up.write(rest); up.pipe(c); c.pipe(up); });
    up.on('error', () => c.destroy());
    c.on('error', () => up.destroy());
  };
  c.on('data', onData);
}).listen(process.argv[1]);
`;

const kubectlOk = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;

describeRealNode('kubectl logs and exec on a real containerd', [...NODE_SANDBOX_REQUIREMENTS], () => {
  let node: NodeSandbox;
  let cri: CriClient;
  let manager: KubeRuntimeManager;
  let server: KubeletServer;
  let api: MiniApiServer;
  let dir: string;
  let pod: V1Pod;

  function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        'kubectl',
        args,
        { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir }, timeout: 30_000 },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  beforeAll(async () => {
    if (!kubectlOk) throw new Error('kubectl is required for this real-node test');
    dir = await mkdtemp(join(tmpdir(), 'kubelet-real-'));
    node = await startNodeSandbox({ name: 'kubeletsrv' });
    cri = createCriClient(node.criEndpoint, { timeoutMs: 30_000 });
    manager = new KubeRuntimeManager({
      cri,
      podLogsRoot: node.podLogRoot,
      podsRoot: join(node.rootDir, 'pods'),
      resolvConf: '',
    });
    pod = {
      metadata: { name: 'bb', namespace: 'default', uid: `bb-${process.pid}` },
      spec: {
        nodeName: 'node1',
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'app',
            image: node.imageRef,
            imagePullPolicy: 'IfNotPresent',
            command: [
              'sh',
              '-c',
              'echo hello real; echo line two; mkdir -p /www; echo pf-ok > /www/index.html; httpd -f -p 8080 -h /www',
            ],
          },
        ],
      },
    };
    const result = await manager.syncPod(pod, await manager.getPodStatus(pod));
    expect(result.error()).toBeUndefined();
    const id = (await manager.getPodStatus(pod)).containerStatuses[0]?.id ?? '';
    const kpod: KubeletPod = {
      metadata: { name: 'bb', namespace: 'default', uid: pod.metadata?.uid ?? '' },
      spec: { containers: [{ name: 'app', image: node.imageRef }] },
      status: {
        containerStatuses: [{ name: 'app', containerID: `containerd://${id}`, state: { running: {} } }],
      },
    };
    const sock = join(dir, 'forward.sock');
    node.netns.spawn([process.execPath, '-e', FORWARDER, sock]);
    for (let i = 0; i < 200 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 25));
    const kubeletCa = await createSelfSignedTls({ hosts: ['127.0.0.1'] });
    const client = await issueClientCertificate(kubeletCa, { commonName: 'kube-apiserver-kubelet-client' });
    server = new KubeletServer({
      nodeName: 'node1',
      host: {
        getPods: () => [kpod],
        getPodByName: (ns, n) => (ns === 'default' && n === 'bb' ? kpod : undefined),
      },
      runtime: cri.runtime,
      address: '127.0.0.1',
      port: 0,
      clientCa: kubeletCa.ca,
      authenticator: new RequestAuthenticator({ x509: true }),
      streamingDialer: (target) =>
        new Promise((resolve, reject) => {
          const s = connect(sock, () => {
            s.off('error', reject);
            s.write(`${target.port}\n`);
            resolve(s);
          });
          s.once('error', reject);
        }),
    });
    await server.start();
    api = await startMiniApiServer({
      tls: 'self-signed',
      token: 'admin',
      kubeconfigPath: join(dir, 'kubeconfig'),
      kubeletClient: { cert: client.cert, key: client.key },
    });
    api.store.create('nodes', {
      metadata: { name: 'node1' },
      status: {
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
        daemonEndpoints: { kubeletEndpoint: { Port: server.port } },
      },
    });
    api.store.create(
      'pods',
      JSON.parse(
        JSON.stringify({
          ...pod,
          status: { phase: 'Running', containerStatuses: kpod.status?.containerStatuses },
        }),
      ),
    );
  }, 90_000);
  afterAll(async () => {
    await api?.stop();
    await server?.stop();
    if (manager && pod) await manager.killPod(pod, await manager.getPodStatus(pod)).catch(() => undefined);
    cri?.close();
    await node?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('kubectl logs reads the container log containerd wrote', { timeout: 45_000 }, async () => {
    expect(await kubectl('logs', 'bb')).toMatchObject({ code: 0, stdout: 'hello real\nline two\n' });
    expect((await kubectl('logs', 'bb', '--tail=1')).stdout).toBe('line two\n');
  });

  it('kubectl logs -f streams what the container prints later', { timeout: 45_000 }, async () => {
    const child = spawn('kubectl', ['logs', '-f', 'bb'], {
      env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const until = async (text: string) => {
      for (let i = 0; i < 1200 && !out.includes(text); i++) await new Promise((r) => setTimeout(r, 25));
      expect(out).toContain(text);
    };
    try {
      await until('line two');
      // Written to the container's stdout (PID 1's fd 1): containerd appends it to the log.
      expect((await kubectl('exec', 'bb', '--', 'sh', '-c', 'echo printed later > /proc/1/fd/1')).code).toBe(
        0,
      );
      await until('printed later');
      expect(out).toBe('hello real\nline two\nprinted later\n');
    } finally {
      child.kill();
    }
  });

  it('kubectl port-forward reaches the pod port through the WebSocket tunnel and CRI PortForward', async () => {
    const pfPath = '/api/v1/namespaces/default/pods/bb/portforward';
    const before = api.requests.filter((r) => r.path === pfPath).length;
    const child = spawn('kubectl', ['port-forward', 'pod/bb', ':8080'], {
      env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    try {
      let port = 0;
      for (let i = 0; i < 1200 && port === 0; i++) {
        port = Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)?.[1] ?? 0);
        if (port === 0) await new Promise((r) => setTimeout(r, 25));
      }
      expect(port, out).toBeGreaterThan(0);
      const body = await (await fetch(`http://127.0.0.1:${port}/index.html`)).text();
      expect(body).toBe('pf-ok\n');
      // One WebSocket request, tunnelled: no SPDY fallback.
      const pf = api.requests.filter((r) => r.path === pfPath).slice(before);
      expect(pf.map((r) => `${r.method} ${r.upgrade}`)).toEqual(['GET websocket']);
      expect(api.podStreamCounts.get('tunneled 101')).toBeGreaterThanOrEqual(1);
    } finally {
      child.kill();
    }
  }, 45_000);

  it('kubectl exec runs in the container over WebSocket (translated to SPDY) with its exit code', {
    timeout: 45_000,
  }, async () => {
    const before = api.requests.filter((r) => r.path === '/api/v1/namespaces/default/pods/bb/exec').length;
    const hi = await kubectl('exec', 'bb', '--', 'sh', '-c', 'echo hi from $(hostname)');
    expect(hi, hi.stderr).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^hi from \S+\n$/),
    });
    const three = await kubectl('exec', 'bb', '--', 'sh', '-c', 'echo hi; exit 3');
    expect(three, three.stderr).toMatchObject({ code: 3, stdout: 'hi\n' });
    expect(three.stderr).toContain('command terminated with exit code 3');
    // One WebSocket request (GET) per exec, no SPDY (POST) fallback.
    const execs = api.requests
      .filter((r) => r.path === '/api/v1/namespaces/default/pods/bb/exec')
      .slice(before)
      .map((r) => `${r.method} ${r.upgrade}`);
    expect(execs).toEqual(['GET websocket', 'GET websocket']);
    expect(api.podStreamCounts.get('translated 200')).toBeGreaterThanOrEqual(2);
  });

  it('a translated exec outlives the 5 s SPDY ping towards the kubelet', { timeout: 45_000 }, async () => {
    const r = await kubectl('exec', 'bb', '--', 'sh', '-c', 'sleep 6; echo after the ping');
    expect(r, r.stderr).toMatchObject({ code: 0, stdout: 'after the ping\n' });
  });

  it('kubectl exec -i feeds stdin to the container and closes it', { timeout: 45_000 }, async () => {
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        'kubectl',
        ['exec', '-i', 'bb', '--', 'sh', '-c', 'tr a-z A-Z; echo stdin closed'],
        { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir }, timeout: 30_000 },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end('from the test\n');
    });
    expect(r, r.stderr).toMatchObject({ code: 0, stdout: 'FROM THE TEST\nstdin closed\n' });
  });
});

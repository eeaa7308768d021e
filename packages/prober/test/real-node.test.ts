// The prober against a real containerd in a private node sandbox. Probes are made from the
// node's network namespace (where the CNI bridge and pod veths live), as the kubelet makes
// them: a child process runs the ProbeManager inside that namespace. Containers: busybox httpd
// (httpGet via a named port, a 404 path, tcpSocket), exec probes through CRI ExecSync (success,
// and a timeout), a grpc.health.v1 server in its own network namespace joined by a veth, and
// probes to an unreachable IP (TEST-NET-1, for which the node namespace has no route, so no
// packet leaves it).
import { join } from 'node:path';
import type { V1Container, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { type CriClient, createCriClient } from '@nodeagent/cri';
import { KubeRuntimeManager } from '@nodeagent/kuberuntime';
import { createNetns, createVethPair, type Netns } from '@nodeagent/test-support/netns';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { bundleSnippet, REPO_ROOT } from '@nodeagent/test-support/readme-snippets';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startedContainer } from './helpers.js';

/** TEST-NET-1 (RFC 5737): never routed in the node namespace. */
const UNREACHABLE = '192.0.2.1';

const HEALTH_PROTO = join(REPO_ROOT, 'packages/cri/proto/grpc/health/v1/health.proto');

// Runs in the node's netns: probes the pods it is given for a while, prints JSON lines.
const PROBER_CHILD = `
import { createCriClient } from '@nodeagent/cri';
import { criCommandRunner, ProbeManager } from '@nodeagent/prober';
const input = JSON.parse(process.env.PROBER_INPUT);
const cri = createCriClient(input.endpoint);
const statuses = new Map(input.pods.map((p) => [p.pod.metadata.uid, p.status]));
const manager = new ProbeManager({
  statusProvider: { getPodStatus: (uid) => statuses.get(uid) },
  commandRunner: criCommandRunner(cri, { runtimeRequestTimeoutMs: 2000 }),
  recorder: (_p, c, type, reason, message) => console.log(JSON.stringify({ event: { container: c.name, type, reason, message } })),
  random: () => 0,
});
manager.on('result', (u) => console.log(JSON.stringify({ result: { probeType: u.probeType, container: u.containerName, result: u.result } })));
manager.on('restart', (r) => console.log(JSON.stringify({ restart: { container: r.containerName, message: r.message, grace: r.gracePeriodSeconds } })));
await manager.start();
for (const p of input.pods) manager.addPod(p.pod);
setTimeout(async () => { await manager.stop(); cri.close(); console.log(JSON.stringify({ done: true })); process.exit(0); }, input.runMs);
`;

// Runs in its own netns: a grpc.health.v1 server ('' SERVING, 'down' NOT_SERVING).
const GRPC_SERVER = `
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
const def = protoLoader.loadSync(process.env.HEALTH_PROTO, { enums: Number, defaults: true });
const pkg = grpc.loadPackageDefinition(def);
const statuses = new Map([['', 1], ['down', 2]]);
const server = new grpc.Server();
server.addService(pkg.grpc.health.v1.Health.service, {
  Check: (call, cb) => cb(null, { status: statuses.get(call.request.service) ?? 3 }),
  Watch: (call) => call.end(),
});
server.bindAsync(process.env.ADDR, grpc.ServerCredentials.createInsecure(), (e) => {
  if (e) { console.error(e); process.exit(1); }
  console.log('listening');
});
`;

describeRealNode('prober on a real containerd', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  let runtime: KubeRuntimeManager;
  let grpcNs: Netns | undefined;

  beforeAll(async () => {
    node = await startNodeSandbox({ name: 'prbnode' });
    cri = createCriClient(node.criEndpoint, { timeoutMs: 30_000 });
    runtime = new KubeRuntimeManager({
      cri,
      podLogsRoot: node.podLogRoot,
      podsRoot: join(node.rootDir, 'pods'),
      resolvConf: '',
    });
  }, 180_000);
  afterAll(async () => {
    await grpcNs?.stop();
    cri?.close();
    await node?.stop();
  });

  const c = (name: string, script: string, extra: Partial<V1Container> = {}): V1Container => ({
    name,
    image: node.imageRef,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', script],
    ...extra,
  });

  async function runPod(pod: V1Pod): Promise<V1PodStatus> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      await runtime.syncPod(pod, await runtime.getPodStatus(pod));
      const api = runtime.computePodStatus(pod, await runtime.getPodStatus(pod));
      const allRunning = (api.containerStatuses ?? []).every((s) => s.state?.running != null);
      if ((api.phase === 'Running' && allRunning && api.podIP) || Date.now() > deadline) {
        // The status manager's view after UpdatePodStatus: containers without a startup probe are started.
        return {
          ...api,
          containerStatuses: (api.containerStatuses ?? []).map((s) => ({ ...s, started: true })),
        };
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  it('http (busybox httpd), tcp, exec through CRI and grpc probes from the node namespace', async () => {
    const pod: V1Pod = {
      metadata: { name: 'probed', namespace: 'prb', uid: `probed-${process.pid}` },
      spec: {
        terminationGracePeriodSeconds: 2,
        containers: [
          c('web', 'mkdir -p /www && echo ok > /www/healthz && exec httpd -f -p 8080 -h /www', {
            ports: [{ name: 'http', containerPort: 8080 }],
            readinessProbe: { httpGet: { path: '/healthz', port: 'http' as never }, periodSeconds: 1 },
            livenessProbe: { tcpSocket: { port: 8080 as never }, periodSeconds: 1 },
          }),
          c('missing', 'mkdir -p /www && exec httpd -f -p 8081 -h /www', {
            readinessProbe: { httpGet: { path: '/nope', port: 8081 as never }, periodSeconds: 1 },
          }),
          c('shell', 'touch /tmp/healthy; exec sleep 3600', {
            readinessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 1 },
            livenessProbe: {
              exec: { command: ['sh', '-c', 'sleep 10'] },
              periodSeconds: 5,
              timeoutSeconds: 1,
              failureThreshold: 1,
              terminationGracePeriodSeconds: 1,
            },
          }),
        ],
      },
    };
    const status = await runPod(pod);
    expect(status.podIP).toBeTruthy();

    // A "pod" whose network is its own namespace, joined to the node namespace by a veth.
    grpcNs = await createNetns('prbgrpc');
    await createVethPair(node.netns, grpcNs, { addressA: '10.77.0.1/24', addressB: '10.77.0.2/24' });
    const serverBundle = await bundleSnippet(GRPC_SERVER, 'prober-grpc-server');
    const server = grpcNs.spawn([process.execPath, serverBundle], {
      env: { ...process.env, HEALTH_PROTO, ADDR: '10.77.0.2:50051' },
      cwd: REPO_ROOT,
    });
    await new Promise<void>((resolve, reject) => {
      server.stdout?.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
      server.once('exit', (code) => reject(new Error(`grpc server exited ${code}`)));
    });
    const grpcPod: V1Pod = {
      metadata: { name: 'grpc', namespace: 'prb', uid: `grpc-${process.pid}` },
      spec: {
        containers: [
          { name: 'serving', image: 'x', readinessProbe: { grpc: { port: 50051 }, periodSeconds: 1 } },
          {
            name: 'down',
            image: 'x',
            readinessProbe: { grpc: { port: 50051, service: 'down' }, periodSeconds: 1 },
          },
          {
            name: 'unreachable-tcp',
            image: 'x',
            readinessProbe: { tcpSocket: { host: UNREACHABLE, port: 80 as never }, periodSeconds: 1 },
          },
          {
            name: 'unreachable-http',
            image: 'x',
            readinessProbe: {
              httpGet: { host: UNREACHABLE, path: '/', port: 80 as never },
              periodSeconds: 1,
            },
          },
        ],
      },
    };
    const startedAt = new Date();
    const grpcStatus: V1PodStatus = {
      phase: 'Running',
      podIP: '10.77.0.2',
      containerStatuses: ['serving', 'down', 'unreachable-tcp', 'unreachable-http'].map((name) =>
        startedContainer(name, `containerd://grpc-${name}`, startedAt),
      ),
    };

    // The unreachable address must have no route in the node namespace (nothing may leave it).
    const route = await node.netns.exec(['ip', 'route', 'get', UNREACHABLE]);
    expect(route.code, route.stdout).not.toBe(0);
    expect(route.stderr).toMatch(/unreachable/i);

    const childBundle = await bundleSnippet(PROBER_CHILD, 'prober-real-node');
    const child = node.netns.spawn([process.execPath, childBundle], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        PROBER_INPUT: JSON.stringify({
          endpoint: node.criEndpoint,
          runMs: 8_000,
          pods: [
            { pod, status },
            { pod: grpcPod, status: grpcStatus },
          ],
        }),
      },
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const lines = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(lines.at(-1), out).toEqual({ done: true });
    const results = lines.filter((l) => l.result).map((l) => l.result);
    const events = lines.filter((l) => l.event).map((l) => l.event);
    const has = (container: string, probeType: string, result: string) =>
      results.some((r) => r.container === container && r.probeType === probeType && r.result === result);

    expect(has('web', 'readiness', 'success'), out).toBe(true);
    expect(has('web', 'liveness', 'success'), out).toBe(true);
    expect(has('shell', 'readiness', 'success'), out).toBe(true);
    expect(has('serving', 'readiness', 'success'), out).toBe(true);
    expect(has('missing', 'readiness', 'success')).toBe(false);
    expect(events).toContainEqual({
      container: 'missing',
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: HTTP probe failed with statuscode: 404',
    });
    expect(events).toContainEqual({
      container: 'shell',
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Liveness probe failed: command "sh -c sleep 10" timed out',
    });
    expect(lines.filter((l) => l.restart).map((l) => l.restart)).toEqual([
      { container: 'shell', message: 'Container shell failed liveness probe', grace: 1 },
    ]);
    expect(events).toContainEqual({
      container: 'down',
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: service unhealthy (responded with "NOT_SERVING")',
    });
    expect(events).toContainEqual({
      container: 'unreachable-tcp',
      type: 'Warning',
      reason: 'Unhealthy',
      message: `Readiness probe failed: dial tcp ${UNREACHABLE}:80: connect: network is unreachable`,
    });
    expect(events).toContainEqual({
      container: 'unreachable-http',
      type: 'Warning',
      reason: 'Unhealthy',
      message: `Readiness probe failed: Get "http://${UNREACHABLE}:80/": dial tcp ${UNREACHABLE}:80: connect: network is unreachable`,
    });
    expect(has('unreachable-tcp', 'readiness', 'success')).toBe(false);
    expect(events.filter((e) => ['web', 'serving'].includes(e.container))).toEqual([]);
  }, 120_000);
});

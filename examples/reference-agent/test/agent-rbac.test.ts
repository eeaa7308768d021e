// The RBAC manifests shipped in deploy/rbac.yaml are sufficient and minimal: the agent,
// authenticated as a node user bound only to them, registers its Node, keeps it Ready, renews
// its Lease, runs a pod and deletes it, records (and re-records) events, creates a static pod's
// mirror pod, runs a pod as a real
// cluster sends it (created over HTTP, so with the projected kube-api-access volume; configMap
// and secret volumes, env from a ConfigMap and a Secret), and answers a kubelet API request
// checked with TokenReview and SubjectAccessReview (--authentication-token-webhook,
// --authorization-mode Webhook), against the mini-apiserver in RBAC mode, and none of
// its requests is refused. Each rule is needed: without it a request the agent made in that
// run would be refused, and for the main rules a run without it shows the failure (no Ready
// node, no Running pod, no renewed Lease, a deleted pod that stays).
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAllYaml, type V1Lease, type V1Node, type V1Pod } from '@kubernetes/client-node';
import {
  type KubeObject,
  type MiniApiServer,
  type PolicyRule,
  RbacAuthorizer,
  renderKubeconfig,
  requestInfo,
  startMiniApiServer,
  type UserInfo,
} from '@nodeagent/mini-apiserver';
import { withoutVerb } from '@nodeagent/test-support/rbac-manifests';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { parseKubeletServerFlags } from '../src/kubelet-server-wiring.js';
import { makePod, shContainer, testLogger, waitFor } from './helpers.js';

const NODE = 'rbac-node';
const AGENT: UserInfo = { name: `system:node:${NODE}`, groups: ['system:nodes', 'system:authenticated'] };
const MANIFESTS = loadAllYaml(
  readFileSync(new URL('../deploy/rbac.yaml', import.meta.url), 'utf8'),
) as KubeObject[];
const RESOURCE_OF: Record<string, string> = {
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
};

interface Rbac {
  server: MiniApiServer;
  agent: RunningAgent;
  dir: string;
}
let running: Rbac | undefined;
afterEach(async () => {
  await running?.agent.stop();
  await running?.server.stop();
  if (running) await rm(running.dir, { recursive: true, force: true });
  running = undefined;
});

const without = (drop?: [number, number, string]) => withoutVerb(MANIFESTS, drop);

async function startRbac(manifests: KubeObject[]): Promise<Rbac> {
  const server = await startMiniApiServer({
    authorization: 'RBAC',
    tokens: [
      { token: 'agent-token', user: AGENT.name, groups: ['system:nodes'] },
      { token: 'admin-token', user: 'admin', groups: ['system:masters'] },
    ],
  });
  for (const m of manifests) server.store.create(RESOURCE_OF[m.kind ?? ''] ?? '', m);
  const dir = await mkdtemp(join(tmpdir(), 'agent-rbac-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, renderKubeconfig({ server: server.url, token: 'agent-token' }));
  // A static pod: its mirror pod is created in the API.
  await mkdir(join(dir, 'manifests'));
  await writeFile(
    join(dir, 'manifests', 'static.yaml'),
    JSON.stringify(makePod('static', NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600')])),
  );
  const agent = await runAgent({
    nodeName: NODE,
    kubeconfigPath,
    podCidr: '10.78.0.0/24',
    nodeIp: '192.0.2.11',
    relistPeriodMs: 200,
    housekeepingMs: 200,
    backOffPeriodMs: 300,
    nodeStatusUpdateMs: 300,
    leaseDurationSeconds: 1,
    crashLoopBackOffMaxMs: 500,
    // Memory-backed volumes as plain directories: no root needed.
    volumeMemoryMedium: 'directory',
    podManifestPath: join(dir, 'manifests'),
    kubeletServer: parseKubeletServerFlags({
      address: '127.0.0.1',
      port: '0',
      'healthz-port': '0',
      'anonymous-auth': 'false',
      'authentication-token-webhook': 'true',
      'authorization-mode': 'Webhook',
    }),
    logger: testLogger(),
  });
  running = { server, agent, dir };
  return running;
}

const readyNode = (server: MiniApiServer) => {
  const n = server.store.tryGet('nodes', '', NODE) as V1Node | undefined;
  return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
};
const getPod = (server: MiniApiServer, name: string) =>
  server.store.tryGet('pods', 'default', name) as V1Pod | undefined;
const runningPod = (server: MiniApiServer, name: string) =>
  getPod(server, name)?.status?.phase === 'Running' ? getPod(server, name) : undefined;
const renewTime = (server: MiniApiServer) =>
  String(
    (server.store.tryGet('leases', 'kube-node-lease', NODE) as V1Lease | undefined)?.spec?.renewTime ?? '',
  );
const createPod = (server: MiniApiServer, name: string) =>
  server.store.create(
    'pods',
    makePod(name, NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600')]) as unknown as KubeObject,
  );

/** A pod as a real cluster sends it: created over HTTP (ServiceAccount admission adds kube-api-access). */
async function createRealPod(server: MiniApiServer, name: string): Promise<void> {
  server.store.create('configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${name}-config`, namespace: 'default' },
    data: { greeting: 'hello' },
  });
  server.store.create('secrets', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${name}-secret`, namespace: 'default' },
    data: { password: Buffer.from('s3cret').toString('base64') },
  });
  const c = shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600');
  c.env = [
    { name: 'GREETING', valueFrom: { configMapKeyRef: { name: `${name}-config`, key: 'greeting' } } },
    { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: `${name}-secret`, key: 'password' } } },
  ];
  c.volumeMounts = [
    { name: 'config', mountPath: '/etc/config' },
    { name: 'secret', mountPath: '/etc/secret' },
  ];
  const pod = makePod(name, NODE, [c], {
    volumes: [
      { name: 'config', configMap: { name: `${name}-config` } },
      { name: 'secret', secret: { secretName: `${name}-secret` } },
    ],
  });
  const res = await fetch(`${server.url}/api/v1/namespaces/default/pods`, {
    method: 'POST',
    headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
    body: JSON.stringify(pod),
  });
  expect(res.status).toBe(201);
  const created = (await res.json()) as V1Pod;
  expect(created.spec?.volumes?.some((v) => v.name.startsWith('kube-api-access-'))).toBe(true);
}

/** GET `path` on the agent's kubelet API with a bearer token; resolves to the status code. */
function kubeletGet(agent: RunningAgent, path: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: agent.kubeletServer?.port,
        path,
        headers: { authorization: `Bearer ${token}` },
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The agent's requests, as the authorizer sees them. */
function agentRequests(server: MiniApiServer) {
  return server.requests
    .filter((r) => r.user === AGENT.name)
    .map((r) => requestInfo(r.method, r.path, new URLSearchParams(r.query)));
}

describe('the reference agent with deploy/rbac.yaml only', () => {
  it('registers, stays Ready, renews its Lease, runs and deletes a pod; every request allowed; every rule needed', async () => {
    const { server } = await startRbac(without());
    await waitFor('Ready node', () => readyNode(server));
    const firstRenew = await waitFor('lease', () => renewTime(server) || undefined);
    await waitFor('a renewed lease', () => renewTime(server) > firstRenew);
    createPod(server, 'web');
    await waitFor('web Running', () => runningPod(server, 'web'));
    // A crash loop repeats its BackOff event: the second one is a patch of the first's count.
    server.store.create(
      'pods',
      makePod('crash', NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'exit 1')]) as unknown as KubeObject,
    );
    await waitFor(
      'a repeated event',
      () => server.store.list('events', 'default').some((e) => Number((e as { count?: number }).count) >= 2),
      20_000,
    );
    server.store.delete('pods', 'default', 'web', { gracePeriodSeconds: 1 });
    await waitFor('web removed by the agent', () => getPod(server, 'web') === undefined, 15_000);
    // The static pod's mirror pod.
    await waitFor('the mirror pod', () => getPod(server, `static-${NODE}`), 15_000);
    // A real cluster's pod: ConfigMap and Secret reads, a TokenRequest.
    await createRealPod(server, 'real');
    await waitFor('real Running', () => runningPod(server, 'real'), 15_000);
    // The kubelet API: TokenReview for the bearer token, SubjectAccessReview for the request.
    expect(await kubeletGet(running?.agent as RunningAgent, '/pods', 'admin-token')).toBe(200);
    // The Node exists now: a restarted agent's registration gets 409 and reads it.
    await running?.agent.stop();
    const kubeconfigPath = join(running?.dir ?? '', 'kubeconfig');
    const again = await runAgent({
      nodeName: NODE,
      kubeconfigPath,
      podCidr: '10.78.0.0/24',
      nodeIp: '192.0.2.11',
      logger: testLogger(),
    });
    if (running) running.agent = again;

    const requests = agentRequests(server);
    const rbac = new RbacAuthorizer(server.store);
    const refused = requests.filter((r) => !rbac.authorize(AGENT, r).allowed);
    expect(refused).toEqual([]);

    // Minimal: without any one verb of any rule, some request the agent made is refused.
    const unneeded: string[] = [];
    MANIFESTS.forEach((m, i) => {
      ((m as { rules?: PolicyRule[] }).rules ?? []).forEach((rule, j) => {
        for (const verb of rule.verbs) {
          const store = server.store;
          const resource = RESOURCE_OF[m.kind ?? ''] ?? '';
          const current = () =>
            store.get(resource, m.metadata?.namespace, m.metadata?.name ?? '').metadata ?? {};
          store.update(resource, { ...(without([i, j, verb])[i] as KubeObject), metadata: current() });
          if (requests.every((r) => rbac.authorize(AGENT, r).allowed)) {
            unneeded.push(`${m.metadata?.name} ${rule.resources?.join(',')} ${verb}`);
          }
          store.update(resource, { ...m, metadata: current() });
        }
      });
    });
    expect(unneeded).toEqual([]);
  }, 60_000);

  /** A real cluster pod gets a FailedMount event and never runs. */
  const realPodFailsToMount = async (s: MiniApiServer) => {
    await createRealPod(s, 'real');
    await waitFor(
      'FailedMount',
      () =>
        s.store.list('events', 'default').some((e) => (e as { reason?: string }).reason === 'FailedMount'),
      10_000,
    );
    expect(getPod(s, 'real')?.status?.phase).not.toBe('Running');
  };
  it.each<[string, [number, number, string], (s: MiniApiServer) => Promise<void>]>([
    [
      'nodes/status patch: the Node never turns Ready',
      [0, 1, 'patch'],
      async (s) => {
        await new Promise((r) => setTimeout(r, 1500));
        expect(readyNode(s)).toBeUndefined();
      },
    ],
    [
      'pods/status patch: the pod never shows Running',
      [0, 3, 'patch'],
      async (s) => {
        createPod(s, 'web');
        await new Promise((r) => setTimeout(r, 2000));
        expect(getPod(s, 'web')?.status?.phase).not.toBe('Running');
      },
    ],
    [
      'pods delete: a deleted pod stays in the API',
      [0, 2, 'delete'],
      async (s) => {
        createPod(s, 'web');
        await waitFor('web Running', () => runningPod(s, 'web'));
        s.store.delete('pods', 'default', 'web', { gracePeriodSeconds: 1 });
        await new Promise((r) => setTimeout(r, 3000));
        expect(getPod(s, 'web')?.metadata?.deletionTimestamp).toBeDefined();
      },
    ],
    [
      'pods create: no mirror pod for the static pod',
      [0, 2, 'create'],
      async (s) => {
        await waitFor('the mirror pod create (refused)', () =>
          s.requests.some(
            (r) =>
              r.user === AGENT.name && r.method === 'POST' && r.path === '/api/v1/namespaces/default/pods',
          ),
        );
        await new Promise((r) => setTimeout(r, 500));
        expect(getPod(s, `static-${NODE}`)).toBeUndefined();
      },
    ],
    [
      'serviceaccounts/token create: a real cluster pod never starts (FailedMount)',
      [0, 6, 'create'],
      realPodFailsToMount,
    ],
    [
      'configmaps/secrets get: a real cluster pod never starts (FailedMount)',
      [0, 5, 'get'],
      realPodFailsToMount,
    ],
    [
      'tokenreviews create: the kubelet API refuses a valid token (401)',
      [0, 7, 'create'],
      async (s) => {
        await waitFor('Ready node', () => readyNode(s));
        expect(await kubeletGet(running?.agent as RunningAgent, '/pods', 'admin-token')).toBe(401);
      },
    ],
    [
      // The kubelet answers an authorizer error with 500 (server.go's authorize filter).
      'subjectaccessreviews create: the kubelet API cannot authorize even an admin (500)',
      [0, 8, 'create'],
      async (s) => {
        await waitFor('Ready node', () => readyNode(s));
        expect(await kubeletGet(running?.agent as RunningAgent, '/pods', 'admin-token')).toBe(500);
      },
    ],
    [
      'leases update: the Lease is never renewed',
      [2, 0, 'update'],
      async (s) => {
        const first = await waitFor('lease', () => renewTime(s) || undefined);
        await new Promise((r) => setTimeout(r, 1500));
        expect(renewTime(s)).toBe(first);
      },
    ],
  ])(
    'without %s',
    async (_name, drop, observe) => {
      const { server } = await startRbac(without(drop));
      await observe(server);
    },
    30_000,
  );
});

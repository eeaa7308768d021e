// The RBAC manifests shipped in deploy/rbac.yaml are sufficient and minimal: the agent,
// authenticated as a node user bound only to them, registers its Node, keeps it Ready, renews
// its Lease, runs a pod and deletes it, records (and re-records) events, against the mini-apiserver in RBAC mode, and none of
// its requests is refused. Each rule is needed: without it a request the agent made in that
// run would be refused, and for the main rules a run without it shows the failure (no Ready
// node, no Running pod, no renewed Lease, a deleted pod that stays).
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
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

/** The manifests with one verb removed from one rule (`[manifest, rule, verb]`). */
function without(drop?: [number, number, string]): KubeObject[] {
  return MANIFESTS.map((m, i) => {
    const rules = (m as { rules?: PolicyRule[] }).rules;
    if (!drop || i !== drop[0] || !rules) return structuredClone(m);
    return {
      ...structuredClone(m),
      rules: rules.map((r, j) => (j === drop[1] ? { ...r, verbs: r.verbs.filter((v) => v !== drop[2]) } : r)),
    } as KubeObject;
  });
}

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

/**
 * The RBAC manifests shipped in deploy/rbac.yaml are sufficient and minimal for
 * `nodeagent-proxy run`: authenticated as system:kube-proxy bound only to them, against the
 * mini-apiserver in RBAC mode, `run` reads its Node, syncs Services and EndpointSlices into
 * the data plane (fake executors here: the requests are what matters), and none of its
 * requests is refused; without any one verb of any rule, a request it made is refused, and
 * without the Service rule nothing is programmed.
 */
import { readFileSync } from 'node:fs';
import { loadAllYaml } from '@kubernetes/client-node';
import {
  type KubeObject,
  type PolicyRule,
  RbacAuthorizer,
  requestInfo,
  startMiniApiServer,
  type UserInfo,
} from '@nodeagent/mini-apiserver';
import { NftablesBackend } from '@nodeagent/nftables';
import { dumpTable, FakeNftExecutor } from '@nodeagent/nftables/testing';
import { withoutVerb } from '@nodeagent/test-support/rbac-manifests';
import { describe, expect, it } from 'vitest';
import { endpointSlice, eventually, node, service } from './fixtures.js';
import { type ProxyRun, startProxyRun } from './support/run-harness.js';

const NODE = 'rbac-proxy';
const PROXY: UserInfo = { name: 'system:kube-proxy', groups: ['system:authenticated'] };
const MANIFESTS = loadAllYaml(
  readFileSync(new URL('../deploy/rbac.yaml', import.meta.url), 'utf8'),
) as KubeObject[];
const RESOURCE_OF: Record<string, string> = {
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
};

const without = (drop?: [number, number, string]) => withoutVerb(MANIFESTS, drop);

/** Runs `run` against an RBAC server with `manifests`; returns what was programmed and the proxy's requests. */
async function runWith(manifests: KubeObject[], waitForRules: boolean) {
  const server = await startMiniApiServer({
    authorization: 'RBAC',
    autoCreateNamespaces: true,
    endpointSliceController: false,
    tokens: [{ token: 'proxy-token', user: PROXY.name, groups: [] }],
  });
  const nft = new FakeNftExecutor();
  let run: ProxyRun | undefined;
  try {
    for (const m of manifests) server.store.create(RESOURCE_OF[m.kind ?? ''] ?? '', m);
    server.store.create('nodes', node(NODE, '192.168.7.2') as never);
    server.store.create('services', service('web', { clusterIP: '172.30.7.10' }) as never);
    server.store.create('endpointslices', endpointSlice('web', [{ ip: '10.7.0.5' }]) as never);
    run = await startProxyRun(server, {
      nodeName: NODE,
      token: 'proxy-token',
      io: {
        // Dual-stack here (nftables supports both families): the IPv6 side gets an executor of its own.
        makeBackend: async (config, family, _ips, log) =>
          new NftablesBackend({
            [family === 6 ? 'ipv6' : 'ipv4']: { executor: family === 6 ? new FakeNftExecutor() : nft },
            render: { masqueradeBit: config.masqueradeBit },
            logger: log,
          }),
      },
    });
    const programmed = () =>
      JSON.stringify(dumpTable(nft.state.table('ip', 'kube-proxy')) ?? null).includes('172.30.7.10');
    if (waitForRules) {
      await eventually(() => expect(programmed()).toBe(true), 10_000);
      // The ServiceCIDR informer starts after the first sync: wait for its list and watch.
      await eventually(
        () =>
          expect(
            server.requests.filter((r) => r.user === PROXY.name && r.path.endsWith('/servicecidrs')).length,
          ).toBeGreaterThanOrEqual(2),
        10_000,
      );
    } else await new Promise((r) => setTimeout(r, 1500));
    const had = programmed();
    run.stop();
    expect(await run.done).toBe(0);
    const requests = server.requests
      .filter((r) => r.user === PROXY.name)
      .map((r) => requestInfo(r.method, r.path, new URLSearchParams(r.query)));
    return { programmed: had, requests, server, log: run.log() };
  } finally {
    await run?.close();
    await server.stop();
  }
}

describe('nodeagent-proxy run with deploy/rbac.yaml only', () => {
  it('programs the Service; every request allowed; every verb of every rule needed', async () => {
    const { programmed, requests, server } = await runWith(without(), true);
    expect(programmed).toBe(true);
    expect(requests.length).toBeGreaterThan(0);
    const rbac = new RbacAuthorizer(server.store);
    // The server is stopped, but its store still answers the authorizer.
    expect(requests.filter((r) => !rbac.authorize(PROXY, r).allowed)).toEqual([]);
    const unneeded: string[] = [];
    MANIFESTS.forEach((m, i) => {
      ((m as { rules?: PolicyRule[] }).rules ?? []).forEach((rule, j) => {
        for (const verb of rule.verbs) {
          const current = () =>
            server.store.get('clusterroles', undefined, m.metadata?.name ?? '').metadata ?? {};
          server.store.update('clusterroles', {
            ...(without([i, j, verb])[i] as KubeObject),
            metadata: current(),
          });
          if (requests.every((r) => rbac.authorize(PROXY, r).allowed)) {
            unneeded.push(`${rule.resources?.join(',')} ${verb}`);
          }
          server.store.update('clusterroles', { ...m, metadata: current() });
        }
      });
    });
    expect(unneeded).toEqual([]);
  }, 30_000);

  it('without list on services nothing is programmed', async () => {
    const { programmed, log } = await runWith(without([0, 1, 'list']), false);
    expect(programmed).toBe(false);
    // The informer says why (and keeps retrying), it does not crash.
    expect(log).toMatch(
      /"resource":"services".*list\/watch failed|list\/watch failed.*"resource":"services"/,
    );
  }, 30_000);
});

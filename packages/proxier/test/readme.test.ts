/**
 * The README example runs as written: inside a network namespace this test creates (so its
 * `SpawnNftExecutor` programs only that namespace's nftables), against a mini API server
 * running in the same namespace, past the 60 s start timeout it passes (scaled down), until
 * SIGTERM stops it through `stop()`.
 */
import { fileURLToPath } from 'node:url';
import { createNetns, listLeakedNetns, type Netns } from '@nodeagent/test-support/netns';
import {
  type RunningSnippet,
  readmeSnippets,
  startSnippet,
  typecheckSnippets,
} from '@nodeagent/test-support/readme-snippets';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './fixtures.js';

const snippets = readmeSnippets(fileURLToPath(new URL('../README.md', import.meta.url)));
const fixtures = fileURLToPath(new URL('./fixtures.ts', import.meta.url));

// The API server the example talks to, in the example's namespace: a node, one service at
// start, a second one 8 s later (after the example's scaled start timeout has fired).
const API_SERVER = `
import { startTestApiServer } from '@nodeagent/mini-apiserver/testing';
import { endpointSlice, node, service } from ${JSON.stringify(fixtures)};
const api = await startTestApiServer({ bookmarkIntervalMs: 0, autoCreateNamespaces: true });
api.server.store.create('nodes', node('node-a', '10.100.2.1'));
api.server.store.create('services', service('early', { clusterIP: '172.30.0.51' }));
api.server.store.create('endpointslices', endpointSlice('early', [{ ip: '10.100.2.2' }]));
setTimeout(() => {
  api.server.store.create('services', service('late', { clusterIP: '172.30.0.52' }));
  api.server.store.create('endpointslices', endpointSlice('late', [{ ip: '10.100.2.3' }]));
  console.log('late service created');
}, 8_000);
process.once('SIGTERM', () => void api.stop().then(() => process.exit(0)));
console.log('KUBECONFIG=' + api.kubeconfigPath);
`;

describe('README', () => {
  it('has one ts block, which type-checks as written', async () => {
    expect(snippets.length).toBe(1);
    expect(
      await typecheckSnippets(
        'proxier-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);
});

describeRealNode('README example, run as written in a network namespace', ['root', 'netns', 'nft'], () => {
  let ns: Netns;
  let api: RunningSnippet | undefined;
  let example: RunningSnippet | undefined;
  const table = async () => (await ns.exec(['nft', 'list', 'table', 'ip', 'kube-proxy'])).stdout;

  beforeAll(async () => {
    ns = await createNetns('proxreadme');
    api = await startSnippet(API_SERVER, { netns: ns.name, name: 'proxier-readme-api' });
    const kubeconfig = /KUBECONFIG=(\S+)/.exec(await api.waitForOutput(/KUBECONFIG=\S+\n/, 30_000))?.[1];
    example = await startSnippet(snippets[0]?.code ?? '', {
      netns: ns.name,
      name: 'proxier-readme',
      env: { KUBECONFIG: kubeconfig ?? '', NODE_NAME: 'node-a' },
      // AbortSignal.timeout(60_000) becomes 1.2 s: the example must outlive it.
      timeScale: 0.02,
    });
  }, 60_000);

  afterAll(async () => {
    await example?.stop();
    await api?.stop();
    await ns?.stop();
    expect(await listLeakedNetns('proxreadme')).toEqual([]);
  }, 30_000);

  it('starts, programs the namespace, keeps syncing past its start timeout, stops on SIGTERM', async () => {
    const run = example as RunningSnippet;
    await run.waitForOutput(/proxier running/, 30_000);
    await run.waitForOutput(/synced \(full: true, failed: false\)/, 30_000);
    await eventually(async () => expect(await table()).toContain('ns1/early/'), 15_000, 100);
    await (api as RunningSnippet).waitForOutput(/late service created/, 20_000);
    await eventually(async () => expect(await table()).toContain('ns1/late/'), 15_000, 100);
    expect(run.exitCode()).toBeUndefined();
    await run.stop();
    expect(run.output()).toContain('proxier stopped');
    expect(run.output()).not.toMatch(/Error|warn/i);
  }, 90_000);
});

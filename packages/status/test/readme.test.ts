// The README's quick start type-checks and runs as written against a mini API server.
import { fileURLToPath } from 'node:url';
import type { V1Lease, V1Node, V1Pod } from '@kubernetes/client-node';
import { startTestApiServer } from '@nodeagent/mini-apiserver/testing';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { describe, expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const snippets = readmeSnippets(README);

describe('README', () => {
  it('has the quick start, and it type-checks', async () => {
    expect(snippets.map((s) => s.heading)).toEqual(['Quick start']);
    expect(
      await typecheckSnippets(
        'status-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);

  it('quick start: registers the node, renews its Lease and writes the pod status', async () => {
    const server = await startTestApiServer();
    try {
      const run = await startSnippet(snippets[0]?.code ?? '', {
        name: 'status-quick-start',
        env: server.env,
      });
      try {
        expect(await run.exited()).toBe(0);
        expect(run.output()).toContain('Ready: kubelet is posting ready status');
        expect(run.output()).toMatch(/allocatable cpu: \d+m of \d+/);
        expect(run.output()).toContain('pod phase: Running podIP: 10.244.0.7');
      } finally {
        await run.stop();
      }
      const store = server.server.store;
      const node = store.tryGet('nodes', undefined, 'edge-1') as unknown as V1Node;
      expect(node.metadata?.labels?.['example.com/site']).toBe('shop-12');
      const lease = store.tryGet('leases', 'kube-node-lease', 'edge-1') as unknown as V1Lease;
      expect(lease.metadata?.ownerReferences?.[0]?.uid).toBe(node.metadata?.uid);
      const pod = store.tryGet('pods', 'default', 'hello') as unknown as V1Pod;
      expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    } finally {
      await server.stop();
    }
  }, 60_000);
});

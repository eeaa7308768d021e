/**
 * Every ```ts block of the README type-checks and runs as written, against what a reader
 * has: `KUBECONFIG` pointing at an API server (a mini-apiserver here). The quick start
 * passes `AbortSignal.timeout(60_000)` to `factory.start`; run with that minute shrunk to
 * ~0.6 s, it must keep delivering pods long after the timeout fired.
 */
import { join } from 'node:path';
import { startTestApiServer, type TestApiServer } from '@nodeagent/mini-apiserver/testing';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { afterEach, describe, expect, it } from 'vitest';

const README = join(import.meta.dirname, '..', 'README.md');
const snippets = readmeSnippets(README);

const pod = (name: string, nodeName: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { nodeName, containers: [{ name: 'app', image: 'busybox' }] },
});

let api: TestApiServer | undefined;
afterEach(async () => {
  await api?.stop();
  api = undefined;
});

describe('README', () => {
  it('has the quick start', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(1);
  });

  it('every ts block type-checks', async () => {
    expect(
      await typecheckSnippets(
        'informer-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);

  it('the quick start keeps working after its 60 s start timeout', async () => {
    api = await startTestApiServer();
    api.server.store.create('pods', pod('before', 'node-1'));
    api.server.store.create('pods', pod('elsewhere', 'node-2'));
    const quickStart = snippets[0]?.code as string;
    // 60 s × 0.01 = 0.6 s
    const run = await startSnippet(quickStart, {
      env: api.env,
      timeScale: 0.01,
      name: 'informer-quick-start',
    });
    try {
      await run.waitForOutput(/synced 1 pods/, 30_000);
      expect(run.output()).toContain('add before');
      // Well past the (scaled) 60 s timeout: the informer must still be watching.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(run.exitCode()).toBeUndefined();
      api.server.store.create('pods', pod('after-timeout', 'node-1'));
      await run.waitForOutput(/add after-timeout/, 10_000);
      expect(run.output()).not.toContain('elsewhere');
      expect(run.exitCode()).toBeUndefined();
    } finally {
      await run.stop();
    }
  }, 120_000);
});

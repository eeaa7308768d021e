// Every ```ts block of the README type-checks, and the quick start runs against a mini API
// server and prints what the README says.
import { fileURLToPath } from 'node:url';
import { type MiniApiServer, startMiniApiServer } from '@nodeagent/mini-apiserver';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { afterAll, describe, expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const snippets = readmeSnippets(README);
let server: MiniApiServer | undefined;
afterAll(async () => {
  await server?.stop();
});

describe('README', () => {
  it('has the quick start and the agent example, and they type-check', async () => {
    expect(snippets.map((s) => s.heading)).toEqual(['Quick start', 'Quick start']);
    expect(
      await typecheckSnippets(
        'events-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);

  it('quick start: one Pulled Event, one BackOff Event counted 3 times', async () => {
    server = await startMiniApiServer();
    const run = await startSnippet(snippets[0]?.code ?? '', {
      name: 'events-quick-start',
      env: { KUBE_API: server.url },
    });
    try {
      await run.waitForOutput(/Warning BackOff x3/, 20_000);
      expect(run.output()).toContain(
        'Normal Pulled x1: Container image "nginx:1.27" already present on machine\n' +
          'Warning BackOff x3: Back-off restarting failed container app in pod web_default(6f1c4c52-1d5b-4c8e-9d0a-2b1f3e4d5c6a)',
      );
      const patches = server.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/events/'));
      expect(patches).toHaveLength(2);
    } finally {
      await run.stop();
    }
  }, 30_000);

  it('the agent example leaves the event queued until start()', async () => {
    const run = await startSnippet(snippets[1]?.code ?? '', { name: 'events-adapter' });
    try {
      await run.waitForOutput(/1 event waiting for start\(\)/, 20_000);
    } finally {
      await run.stop();
    }
  }, 30_000);
});

// Every ```ts block of the README type-checks and runs as written.
import { fileURLToPath } from 'node:url';
import { FakeRuntime } from '@nodeagent/cri/testing';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { afterAll, describe, expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const snippets = readmeSnippets(README);

describe('README', () => {
  it('has the quick start and the CRI example, and they type-check', async () => {
    expect(snippets.map((s) => s.heading)).toEqual(['Quick start', 'Exec probes through CRI']);
    expect(
      await typecheckSnippets(
        'prober-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);

  it('quick start: readiness fails, liveness fails twice and asks for a restart, and it keeps running', async () => {
    const run = await startSnippet(snippets[0]?.code ?? '', { name: 'prober-quick-start' });
    try {
      const out = await run.waitForOutput(
        /restart web: Container web failed liveness probe \(grace 2s\)/,
        20_000,
      );
      expect(out).toContain('readiness web -> success');
      expect(out).toContain(
        'Warning Unhealthy web: Readiness probe failed: HTTP probe failed with statuscode: 503',
      );
      expect(out).toContain(
        'Warning Unhealthy web: Liveness probe failed: HTTP probe failed with statuscode: 503',
      );
      // Readiness keeps probing (and failing) after the liveness hold.
      const events = (out.match(/Readiness probe failed/g) ?? []).length;
      await run.waitForOutput(new RegExp(`(Readiness probe failed[\\s\\S]*){${events + 2}}`), 5_000);
      expect(run.exitCode()).toBeUndefined();
    } finally {
      await run.stop();
    }
  }, 60_000);

  describe('CRI example', () => {
    const fake = new FakeRuntime({ images: [{ ref: 'busybox:1.36' }] });
    afterAll(() => fake.stop());

    it('checks each container through ExecSync', async () => {
      fake.addBehaviour(
        { name: 'bad' },
        { exec: [{ cmd: ['cat', '/tmp/healthy'], exitCode: 1, stderr: "cat: can't open '/tmp/healthy'" }] },
      );
      await fake.start();
      const endpoint = fake.endpoint;
      const sandbox = fake.addSandbox({ metadata: { name: 'p', namespace: 'n', uid: 'u', attempt: 0 } });
      await fake.addContainer(sandbox, {
        metadata: { name: 'good', attempt: 0 },
        image: { image: 'busybox:1.36' },
      });
      await fake.addContainer(sandbox, {
        metadata: { name: 'bad', attempt: 0 },
        image: { image: 'busybox:1.36' },
      });
      const run = await startSnippet(snippets[1]?.code ?? '', {
        name: 'prober-cri',
        env: { CRI_ENDPOINT: endpoint },
      });
      try {
        expect(await run.exited()).toBe(0);
        expect(run.output()).toMatch(/good healthy/);
        expect(run.output()).toContain("bad unhealthy (1): cat: can't open '/tmp/healthy'");
      } finally {
        await run.stop();
      }
    }, 60_000);
  });
});

// Every ```ts block of the README type-checks and runs as written.
import { fileURLToPath } from 'node:url';
import { FakeRuntime } from '@nodeagent/cri/testing';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { afterAll, describe, expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const snippets = readmeSnippets(README);

describe('README', () => {
  it('has the quick start and the node example, and they type-check', async () => {
    expect(snippets.map((s) => s.heading)).toEqual(['Quick start', 'On a node']);
    expect(
      await typecheckSnippets(
        'stats-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);

  it('quick start: a Summary from CRI stats and /metrics/resource', async () => {
    const run = await startSnippet(snippets[0]?.code ?? '', { name: 'stats-quick-start' });
    try {
      expect(await run.exited()).toBe(0);
      // 0.25 cores reported by the fake; 32 MiB working set.
      expect(run.output()).toContain('app: 250000000 nanocores, 33554432 bytes');
      expect(run.output()).toMatch(
        /container_memory_working_set_bytes\{container="app",namespace="default",pod="web"\} 3\.3554432e\+07 \d+/,
      );
      expect(run.output()).toContain('resource_scrape_error 0');
    } finally {
      await run.stop();
    }
  }, 60_000);

  describe('node example', () => {
    const fake = new FakeRuntime({ images: [{ ref: 'busybox:1.36' }] });
    afterAll(() => fake.stop());

    it('reads this machine cgroups and /proc next to a CRI runtime', async () => {
      await fake.start();
      const run = await startSnippet(snippets[1]?.code ?? '', {
        name: 'stats-node',
        env: { CRI_ENDPOINT: fake.endpoint },
      });
      try {
        expect(await run.exited()).toBe(0);
        expect(run.output()).toMatch(/cgroup v[12]: \d+ lines/);
        expect(run.output()).toMatch(/node memory.available \d+/);
      } finally {
        await run.stop();
      }
    }, 60_000);
  });
});

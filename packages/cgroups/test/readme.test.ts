// The README's snippets type-check and print what the README says.
import { fileURLToPath } from 'node:url';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { describe, expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const snippets = readmeSnippets(README);

describe('README', () => {
  it('has the two snippets, and they type-check', async () => {
    expect(snippets.map((s) => s.heading)).toEqual(['Quick start', 'The values, without a cgroup tree']);
    expect(
      await typecheckSnippets(
        'cgroups-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);

  it('quick start prints the parent and the values on a fake v2 tree', async () => {
    const run = await startSnippet(snippets[0]?.code ?? '', { name: 'cgroups-quick-start' });
    try {
      expect(await run.exited()).toBe(0);
      const expected = readmeSnippets(README, 'text')[0]?.code.trim() ?? '';
      expect(run.output().trim()).toBe(expected);
    } finally {
      await run.stop();
    }
  }, 60_000);

  it('the values snippet prints the numbers the README gives', async () => {
    const run = await startSnippet(snippets[1]?.code ?? '', { name: 'cgroups-values' });
    try {
      expect(await run.exited()).toBe(0);
      expect(run.output()).toContain('256n 25000n 100000n 134217728n 10n');
      expect(run.output()).toContain(
        '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda_b.slice',
      );
    } finally {
      await run.stop();
    }
  }, 60_000);
});

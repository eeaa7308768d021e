// The README's snippets type-check, and the quick start runs as written and prints what the
// README says it prints.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { describe, expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const snippets = readmeSnippets(README);

describe('README', () => {
  it('type-checks', async () => {
    expect(snippets.map((s) => s.heading)).toEqual(['Quick start', 'In a node agent']);
    expect(
      await typecheckSnippets(
        'volumes-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);

  it('quick start prints what the README shows', async () => {
    const run = await startSnippet(snippets[0]?.code ?? '', { name: 'volumes-quick-start' });
    try {
      expect(await run.exited()).toBe(0);
      const text = readFileSync(README, 'utf8');
      const printed = /It prints:\n\n```text\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
      expect(run.output().trim()).toBe(printed.trim());
    } finally {
      await run.stop();
    }
  }, 60_000);
});

import { fileURLToPath } from 'node:url';
import { readmeSnippets, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { describe, expect, it } from 'vitest';

const snippets = readmeSnippets(fileURLToPath(new URL('../README.md', import.meta.url)));

// The example programs the host's nftables against a real cluster; running it here would
// rewrite this machine's rules, so the test checks that it compiles as written. Its
// lifecycle (start bounded by a signal, stop() on SIGINT/SIGTERM) is covered by
// proxier-e2e.test.ts with fake backends.
describe('README', () => {
  it('has one ts block', () => {
    expect(snippets.length).toBe(1);
  });

  it('every ts block type-checks as written', async () => {
    expect(
      await typecheckSnippets(
        'proxier-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);
});

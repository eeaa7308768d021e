/** Every ```ts block of the README type-checks and runs as written (and exits). */
import { join } from 'node:path';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { describe, expect, it } from 'vitest';

const snippets = readmeSnippets(join(import.meta.dirname, '..', 'README.md'));

describe('README', () => {
  it('every ts block type-checks', async () => {
    expect(snippets.length).toBeGreaterThanOrEqual(1);
    expect(
      await typecheckSnippets(
        'mini-apiserver-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);

  it('the example lists the pod of node-1 and exits', async () => {
    const run = await startSnippet(snippets[0]?.code as string, { name: 'mini-apiserver-readme' });
    try {
      expect(await run.exited()).toBe(0);
      expect(run.output()).toContain("kind: 'PodList'");
      // console.log prints the one item (the pod of node-1) down to its fields.
      expect(run.output()).toMatch(/items: \[\s*\{\s*kind: 'Pod',/);
      expect(run.output().match(/kind: 'Pod',/g)).toHaveLength(1);
    } finally {
      await run.stop();
    }
  }, 60_000);
});

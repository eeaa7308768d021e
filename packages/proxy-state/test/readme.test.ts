import { fileURLToPath } from 'node:url';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { describe, expect, it } from 'vitest';

const snippets = readmeSnippets(fileURLToPath(new URL('../README.md', import.meta.url)));

/** What each ```ts block of the README prints when run as written. */
const EXPECTED: readonly RegExp[] = [/\[ 'ns1\/svc1' \] \[ '10\.180\.0\.1:80' \]/, /\[ 'ns1\/svc1:p80' \]/];

describe('README', () => {
  it('has the blocks this test knows about', () => {
    expect(snippets.length).toBe(EXPECTED.length);
  });

  it('every ts block type-checks as written', async () => {
    expect(
      await typecheckSnippets(
        'proxy-state-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);

  it.each(snippets.map((s) => [s.index, s.heading, s.code] as const))(
    'block %i (%s) runs as written',
    async (index, _heading, code) => {
      const run = await startSnippet(code, { name: `proxy-state-readme-${index}` });
      try {
        await run.waitForOutput(EXPECTED[index]!, 60_000);
        expect(await run.exited()).toBe(0);
      } finally {
        await run.stop();
      }
    },
    90_000,
  );
});

/**
 * A vitest suite for a README whose ```ts blocks are self-contained programs: every block
 * type-checks and, run as its own process, prints what the README says and exits 0.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readmeSnippets, startSnippet, typecheckSnippets } from './readme-snippets.js';

/**
 * Declares the suite for the README at `readmeUrl`: `expected[i]` is what block `i` prints
 * (the number of blocks must match, so a new block needs an expectation).
 * @param name a bundle-name prefix (letters, digits, dashes).
 */
export function describeReadmeExamples(readmeUrl: URL, name: string, expected: readonly RegExp[]): void {
  const snippets = readmeSnippets(fileURLToPath(readmeUrl));
  describe('README', () => {
    it('has the blocks this test knows about', () => {
      expect(snippets.length).toBe(expected.length);
    });

    it('every ts block type-checks as written', async () => {
      expect(
        await typecheckSnippets(
          `${name}-readme`,
          snippets.map((s) => s.code),
        ),
      ).toBe('');
    }, 120_000);

    it.each(snippets.map((s) => [s.index, s.heading, s.code] as const))(
      'block %i (%s) runs as written',
      async (index, _heading, code) => {
        const run = await startSnippet(code, { name: `${name}-readme-${index}` });
        try {
          await run.waitForOutput(expected[index]!, 60_000);
          expect(await run.exited()).toBe(0);
        } finally {
          await run.stop();
        }
      },
      90_000,
    );
  });
}

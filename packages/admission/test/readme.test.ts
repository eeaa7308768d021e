// The README's ```ts block type-checks and prints exactly the ```text block below it.
import { fileURLToPath } from 'node:url';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const snippets = readmeSnippets(README);
const printed = readmeSnippets(README, 'text');

it('has the quick start, and it type-checks', async () => {
  expect(snippets.map((s) => s.heading)).toEqual(['Quick start']);
  expect(await typecheckSnippets('admission-readme', [snippets[0]?.code ?? ''])).toBe('');
}, 120_000);

it('prints what the README says it prints', async () => {
  const run = await startSnippet(snippets[0]?.code ?? '', { name: 'admission-quick-start' });
  try {
    expect(await run.exited()).toBe(0);
    expect(run.output()).toBe(printed[0]?.code);
  } finally {
    await run.stop();
  }
}, 60_000);

// The README's ```ts blocks type-check, and the quick start prints what the README says.
import { fileURLToPath } from 'node:url';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const snippets = readmeSnippets(README);
const printed = readmeSnippets(README, 'text');

it('has the quick start and the auth example, and they type-check', async () => {
  expect(snippets.map((s) => s.heading)).toEqual(['Quick start', 'Authentication and authorization']);
  expect(
    await typecheckSnippets(
      'kubelet-server-readme',
      snippets.map((s) => s.code),
    ),
  ).toBe('');
}, 120_000);

it('prints what the README says it prints', async () => {
  const run = await startSnippet(snippets[0]?.code ?? '', { name: 'kubelet-server-quick-start' });
  try {
    expect(await run.exited()).toBe(0);
    expect(run.output()).toBe(printed[0]?.code);
  } finally {
    await run.stop();
  }
}, 60_000);

// The README's ```ts blocks type-check and run as written (each as its own Node process).
import { fileURLToPath } from 'node:url';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const [example, testing] = readmeSnippets(README);

it('has two ts blocks, and they type-check', async () => {
  expect(readmeSnippets(README)).toHaveLength(2);
  expect(await typecheckSnippets('pod-workers-readme', [example?.code ?? '', testing?.code ?? ''])).toBe('');
}, 120_000);

it('the example syncs a pod, then kills it within the grace period and cleans it up', async () => {
  const run = await startSnippet(example?.code ?? '', { name: 'pod-workers-readme' });
  try {
    const out = await run.waitForOutput(/clean up web/);
    expect(out).toMatch(/sync create web\nstop within 5 s\nclean up web/);
  } finally {
    await run.stop();
  }
});

it('the testing example prints what the harness recorded', async () => {
  const run = await startSnippet(testing?.code ?? '', { name: 'pod-workers-readme-testing' });
  try {
    expect(await run.exited()).toBe(0);
    expect(run.output()).toBe("[ 'syncPod' ] 4000\n");
  } finally {
    await run.stop();
  }
});

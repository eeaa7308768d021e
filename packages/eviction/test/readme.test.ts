// The README's ```ts blocks type-check and run as written, printing what the README says.
import { fileURLToPath } from 'node:url';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { afterAll, expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const [quick, flags] = readmeSnippets(README);
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

it('has two ts blocks, and they type-check', async () => {
  expect(readmeSnippets(README)).toHaveLength(2);
  expect(await typecheckSnippets('eviction-readme', [quick?.code ?? '', flags?.code ?? ''])).toBe('');
}, 120_000);

it('the quick start evicts the pod with upstream message and reports MemoryPressure', async () => {
  const run = await startSnippet(quick?.code ?? '', { name: 'eviction-readme-quick' });
  cleanups.push(run.stop);
  expect(await run.exited()).toBe(0);
  expect(run.output()).toBe(
    'kill hog after 1s: Evicted: The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 200Mi, request is 0, has larger consumption of memory. \nMemoryPressure\n',
  );
});

it('the flags example prints the parsed thresholds', async () => {
  const run = await startSnippet(flags?.code ?? '', { name: 'eviction-readme-flags' });
  cleanups.push(run.stop);
  expect(await run.exited()).toBe(0);
  expect(run.output()).toBe(
    'memory.available<500Mi nodefs.available<10% memory.available<1Gi allocatableMemory.available<500Mi\n',
  );
});

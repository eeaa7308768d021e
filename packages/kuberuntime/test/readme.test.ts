// The README's ```ts blocks type-check and run as written: the first, third and fourth against the fake
// CRI runtime this test starts (its endpoint through CONTAINER_RUNTIME_ENDPOINT), the second on
// the package's own test harness.
import { fileURLToPath } from 'node:url';
import { startFakeRuntime } from '@nodeagent/kubecontainer/testing';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { afterAll, expect, it } from 'vitest';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const [example, testing, logs, gc] = readmeSnippets(README);
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

it('has four ts blocks, and they type-check', async () => {
  expect(readmeSnippets(README)).toHaveLength(4);
  expect(
    await typecheckSnippets('kuberuntime-readme', [
      example?.code ?? '',
      testing?.code ?? '',
      logs?.code ?? '',
      gc?.code ?? '',
    ]),
  ).toBe('');
}, 120_000);

it('the example starts the pod and prints its phase', async () => {
  const fake = await startFakeRuntime({ images: [{ ref: 'busybox:1.36' }] });
  cleanups.push(fake.stop);
  const run = await startSnippet(example?.code ?? '', {
    name: 'kuberuntime-readme',
    env: { CONTAINER_RUNTIME_ENDPOINT: fake.endpoint },
  });
  cleanups.push(run.stop);
  await run.waitForOutput(/^Running\n$/);
  expect(fake.runtime.calls('StartContainer')).toHaveLength(1);
});

it('the testing example shows the restart, then CrashLoopBackOff as no error with a requeue', async () => {
  const run = await startSnippet(testing?.code ?? '', { name: 'kuberuntime-readme-testing' });
  cleanups.push(run.stop);
  expect(await run.exited()).toBe(0);
  expect(run.output()).toBe('0 no error resync\n1 no error resync\n2 no error 9000\n');
});

it('the log rotation example runs a pass against the runtime and stops', async () => {
  const fake = await startFakeRuntime();
  cleanups.push(fake.stop);
  const run = await startSnippet(logs?.code ?? '', {
    name: 'kuberuntime-readme-logs',
    env: { CONTAINER_RUNTIME_ENDPOINT: fake.endpoint },
  });
  cleanups.push(run.stop);
  expect(await run.exited()).toBe(0);
  expect(run.output()).toBe('log rotation stopped\n');
  expect(fake.runtime.calls('ListContainers').length).toBeGreaterThanOrEqual(1);
});

it('the garbage collection example runs a container GC and an image GC pass', async () => {
  const fake = await startFakeRuntime();
  cleanups.push(fake.stop);
  const run = await startSnippet(gc?.code ?? '', {
    name: 'kuberuntime-readme-gc',
    env: { CONTAINER_RUNTIME_ENDPOINT: fake.endpoint },
  });
  cleanups.push(run.stop);
  expect(await run.exited()).toBe(0);
  expect(run.output()).toBe('container GC and image GC passes done\n');
  expect(fake.runtime.calls('ListPodSandbox').length).toBeGreaterThanOrEqual(1);
  expect(fake.runtime.calls('ImageFsInfo').length).toBe(1);
});

// The README's ```ts blocks type-check and run as written; the first one reads the fake CRI
// runtime this test starts (its endpoint through CONTAINER_RUNTIME_ENDPOINT).
import { fileURLToPath } from 'node:url';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { afterAll, expect, it } from 'vitest';
import { kubeletContainerConfig, kubeletPodConfig, startFakeRuntime } from '../src/testing.js';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const [example, testing] = readmeSnippets(README);
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

it('has two ts blocks, and they type-check', async () => {
  expect(readmeSnippets(README)).toHaveLength(2);
  expect(await typecheckSnippets('kubecontainer-readme', [example?.code ?? '', testing?.code ?? ''])).toBe(
    '',
  );
}, 120_000);

it('the example prints every pod of the runtime with its IPs and container states', async () => {
  const fake = await startFakeRuntime();
  cleanups.push(fake.stop);
  const config = kubeletPodConfig('web', 'uid-web', 'prod');
  const { podSandboxId } = await fake.cri.runtime.runPodSandbox({ config });
  const { containerId } = await fake.cri.runtime.createContainer({
    podSandboxId,
    config: kubeletContainerConfig(config, 'app'),
    sandboxConfig: config,
  });
  await fake.cri.runtime.startContainer({ containerId });
  const run = await startSnippet(example?.code ?? '', {
    name: 'kubecontainer-readme',
    env: { CONTAINER_RUNTIME_ENDPOINT: fake.endpoint },
  });
  cleanups.push(run.stop);
  expect(await run.exited()).toBe(0);
  expect(run.output()).toMatch(/^prod\/web \[ '10\.\d+\.\d+\.\d+' \] \[ 'app=running' \]\n$/);
});

it('the testing example lists the sandbox it started', async () => {
  const run = await startSnippet(testing?.code ?? '', { name: 'kubecontainer-readme-testing' });
  cleanups.push(run.stop);
  expect(await run.exited()).toBe(0);
  expect(run.output()).toBe('uid-web web running\n');
});

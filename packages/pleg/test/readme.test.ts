// The README's ```ts blocks type-check and run as written: the example PLEG relists the fake
// CRI runtime (its endpoint through CONTAINER_RUNTIME_ENDPOINT), prints the events of a pod
// started after it, and keeps relisting.
import { fileURLToPath } from 'node:url';
import { startFakeRuntime } from '@nodeagent/kubecontainer/testing';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { afterAll, expect, it } from 'vitest';
import { kubeletContainer, kubeletPod } from './helpers.js';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const snippets = readmeSnippets(README);
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

it('has one ts block, and it type-checks', async () => {
  expect(snippets).toHaveLength(1);
  expect(
    await typecheckSnippets(
      'pleg-readme',
      snippets.map((s) => s.code),
    ),
  ).toBe('');
}, 120_000);

it('prints the events of pods started while it runs, relist after relist', async () => {
  const fake = await startFakeRuntime();
  cleanups.push(fake.stop);
  const run = await startSnippet(snippets[0]?.code ?? '', {
    name: 'pleg-readme',
    env: { CONTAINER_RUNTIME_ENDPOINT: fake.endpoint },
  });
  cleanups.push(run.stop);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const config = kubeletPod('web', 'uid-web');
  const { podSandboxId } = await fake.cri.runtime.runPodSandbox({ config });
  await run.waitForOutput(/ContainerStarted uid-web web/);
  const { containerId } = await fake.cri.runtime.createContainer({
    podSandboxId,
    config: kubeletContainer(config, 'app'),
    sandboxConfig: config,
  });
  await fake.cri.runtime.startContainer({ containerId });
  await fake.cri.runtime.stopContainer({ containerId, timeout: 0n });
  await run.waitForOutput(/ContainerDied uid-web web/);
  expect(run.exitCode()).toBeUndefined();
}, 60_000);

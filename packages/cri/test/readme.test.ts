/**
 * Every ```ts block of the README type-checks and runs as written: the client quick start
 * against a fake runtime whose endpoint is in `CONTAINER_RUNTIME_ENDPOINT` (what a reader on
 * a node has, with containerd), the fake-runtime example on its own.
 */
import { join } from 'node:path';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { describe, expect, it } from 'vitest';
import { FakeRuntime } from '../src/testing.js';

const snippets = readmeSnippets(join(import.meta.dirname, '..', 'README.md'));

describe('README', () => {
  it('every ts block type-checks', async () => {
    expect(snippets.length).toBe(2);
    expect(
      await typecheckSnippets(
        'cri-readme',
        snippets.map((s) => s.code),
      ),
    ).toBe('');
  }, 120_000);

  it('the client quick start prints the runtime and its running containers, then exits', async () => {
    const fake = new FakeRuntime({ images: [{ ref: 'busybox:1.36' }] });
    await fake.start();
    try {
      const sandbox = fake.addSandbox({
        metadata: { name: 'p', namespace: 'default', uid: 'u', attempt: 0 },
      });
      await fake.addContainer(sandbox, {
        metadata: { name: 'web', attempt: 0 },
        image: { image: 'busybox:1.36' },
      });
      const run = await startSnippet(snippets[0]?.code as string, {
        env: { CONTAINER_RUNTIME_ENDPOINT: fake.endpoint },
        name: 'cri-quick-start',
      });
      try {
        expect(await run.exited()).toBe(0);
        expect(run.output()).toMatch(/fakeRuntime 0\.1\.0 \[ 'web' \]/);
      } finally {
        await run.stop();
      }
    } finally {
      await fake.stop();
    }
  }, 60_000);

  it('the fake runtime example runs and exits', async () => {
    const run = await startSnippet(snippets[1]?.code as string, { name: 'cri-fake' });
    try {
      expect(await run.exited()).toBe(0);
      expect(run.output()).toContain('fakeRuntime');
    } finally {
      await run.stop();
    }
  }, 60_000);
});

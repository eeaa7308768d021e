// The README's quick start type-checks and, run against a temp manifest directory, prints the
// first snapshot's ADD, then an ADD for a manifest dropped in while it runs, and skips a bad one.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readmeSnippets, startSnippet, typecheckSnippets } from '@nodeagent/test-support/readme-snippets';
import { expect, it } from 'vitest';
import { podYaml } from './helpers.js';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const snippets = readmeSnippets(README);

it('has the quick start, and it type-checks', async () => {
  expect(snippets.map((s) => s.heading)).toEqual(['Quick start']);
  expect(await typecheckSnippets('pod-sources-readme', [snippets[0]?.code ?? ''])).toBe('');
}, 120_000);

it('prints the pods of the directory and those dropped in while it runs', async () => {
  const dir = await mkdtemp(join(os.tmpdir(), 'pod-sources-readme-'));
  await writeFile(join(dir, 'web.yaml'), podYaml('web'));
  const run = await startSnippet(snippets[0]?.code ?? '', {
    name: 'pod-sources-quick-start',
    env: { MANIFESTS: dir },
  });
  try {
    await run.waitForOutput(/ADD file web-node-1 [0-9a-f]{32}/, 20_000);
    expect(run.output()).toContain('all sources seen: true');
    await writeFile(join(dir, 'db.yaml'), podYaml('db'));
    await writeFile(join(dir, 'bad.yaml'), 'apiVersion: apps/v1\nkind: Deployment\n');
    await run.waitForOutput(/ADD file db-node-1 [0-9a-f]{32}/, 20_000);
    await run.waitForOutput(/skipped .*bad\.yaml: expected a v1 Pod, got apps\/v1 Deployment/, 20_000);
    expect(run.exitCode()).toBeUndefined();
  } finally {
    await run.stop();
    await rm(dir, { recursive: true, force: true });
  }
}, 60_000);

/**
 * The published declarations of `@nodeagent/core` and `@nodeagent/informer` type-check for
 * a consumer that has no prom-client installed and does not skip library checks
 * (`skipLibCheck: false`); before `MetricsOptions`, both failed with
 * `TS2307 Cannot find module 'prom-client'`.
 *
 * The two packages are built with their real build (tsup, declarations included), then
 * copied (package.json + dist) into a temp project outside the repository whose
 * node_modules holds only what a consumer installs: the two packages, their dependency
 * eventemitter3, the peer @kubernetes/client-node, @types/node and typescript. Those are
 * symlinks to the repo's copies; prom-client is not among them, and the copied packages
 * cannot reach the repo's node_modules.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '@nodeagent/test-support/readme-snippets';
import { afterAll, expect, it } from 'vitest';

const run = promisify(execFile);
let dir: string | undefined;
afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const CONSUMER = `import { createMetricFactory, type MetricsOptions, type Lifecycle } from '@nodeagent/core';
import {
  createInformerMetrics,
  SharedInformer,
  SharedInformerFactory,
  type SharedInformerOptions,
} from '@nodeagent/informer';
import { FakeListerWatcher } from '@nodeagent/informer/testing';
import { KubeConfig } from '@kubernetes/client-node';

declare const metrics: MetricsOptions;
const options: SharedInformerOptions = { name: 'pods', metrics };
const informer: Lifecycle = new SharedInformer(new FakeListerWatcher(), options);
const factory = new SharedInformerFactory({ kubeConfig: new KubeConfig(), defaults: { metrics } });
const pods = factory.pods();
export const nodeName: string | undefined = pods.lister.list()[0]?.spec?.nodeName;
export const made = [informer, createInformerMetrics(metrics, 'x'), createMetricFactory(metrics)];
`;

it('core and informer declarations compile with skipLibCheck: false and no prom-client', async () => {
  await run('npm', ['run', 'build', '-w', '@nodeagent/core', '-w', '@nodeagent/informer'], {
    cwd: REPO_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  dir = mkdtempSync(join(tmpdir(), 'nodeagent-dts-'));
  const modules = join(dir, 'node_modules');
  for (const pkg of ['core', 'informer']) {
    const target = join(modules, '@nodeagent', pkg);
    mkdirSync(target, { recursive: true });
    cpSync(join(REPO_ROOT, 'packages', pkg, 'package.json'), join(target, 'package.json'));
    cpSync(join(REPO_ROOT, 'packages', pkg, 'dist'), join(target, 'dist'), { recursive: true });
  }
  const repoRequire = createRequire(join(REPO_ROOT, 'package.json'));
  const link = (name: string): void => {
    const real = realpathSync(dirname(repoRequire.resolve(`${name}/package.json`)));
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(real, join(modules, name), 'dir');
  };
  for (const name of ['eventemitter3', '@kubernetes/client-node', '@types/node', 'typescript']) link(name);
  expect(() =>
    createRequire(join(modules, '@nodeagent', 'core', 'package.json')).resolve('prom-client'),
  ).toThrow();
  writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        noEmit: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        types: ['node'],
      },
      files: ['consumer.ts'],
    }),
  );
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', type: 'module', private: true }),
  );
  const tsc = join(modules, 'typescript', 'bin', 'tsc');
  const result = await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  // Only diagnostics about our declarations (or the consumer, or prom-client) count: a
  // client-node dependency's own declarations need @types/ws, which is not ours to fix.
  const lines = result.split('\n').filter((l) => /^\S.*\(\d+,\d+\): error TS/.test(l));
  const ours = lines.filter((l) => /@nodeagent\/|consumer\.ts|prom-client/.test(l));
  if (lines.length > ours.length)
    console.log(`ignored ${lines.length - ours.length} diagnostic(s) outside @nodeagent`);
  expect(result).not.toContain('prom-client');
  expect(ours).toEqual([]);
  expect(result === '' || lines.length > 0).toBe(true);
}, 180_000);

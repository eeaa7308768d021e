// Repository-level release readiness: the pending changesets plan the first release, every
// package declares exactly what its src imports, and the bins run the workspace's own CLIs.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain .mjs script without declarations
import { dependencyProblems } from '../scripts/check-deps.mjs';
// @ts-expect-error: plain .mjs script without declarations
import { releasePlanProblems } from '../scripts/check-release-plan.mjs';
// @ts-expect-error: plain .mjs script without declarations
import { workspacePackages } from '../scripts/workspace.mjs';

const root = join(import.meta.dirname, '..');

describe('release plan', () => {
  it('changeset status plans exactly 0.1.0 for every public package and nothing for private ones', async () => {
    expect(await releasePlanProblems(root)).toEqual([]);
  });
});

describe('dependencies', () => {
  it('every package declares exactly the bare modules its src imports', () => {
    expect(dependencyProblems(root)).toEqual([]);
  });
});

interface Bin {
  readonly name: string;
  readonly pkg: string;
  readonly version: string;
  readonly target: string;
}

const bins: Bin[] = (
  workspacePackages(root) as {
    name: string;
    dir: string;
    json: { version: string; bin?: Record<string, string> };
  }[]
).flatMap((p) =>
  Object.entries(p.json.bin ?? {}).map(([name, target]) => ({
    name,
    pkg: p.name,
    version: p.json.version,
    target: join(
      p.dir,
      readFileSync(join(p.dir, target), 'utf8').match(/import '\.\.\/(.+)';/)?.[1] ?? target,
    ),
  })),
);

describe('bins', () => {
  it('every package bin is a committed shim onto the built CLI', () => {
    expect(bins.map((b) => b.name)).toContain('nodeagent-proxy');
    expect(bins.map((b) => b.name)).toContain('nodeagent-crictl');
    expect(bins.map((b) => b.name)).toContain('nodeagent-mini-apiserver');
  });

  const built = bins.every((b) => existsSync(b.target));
  if (!built && process.env.CI)
    throw new Error('bins: npm run build must run before the tests under CI=true');
  if (!built) console.warn('bins: SKIPPED `npx <bin> --version` (run npm run build first)');

  it.runIf(built).each(bins)('npx --no-install $name --version prints $pkg@$version', ({ name, version }) => {
    const r = spawnSync('npx', ['--no-install', name, '--version'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() }).toEqual({
      status: 0,
      stdout: expect.stringContaining(version),
      stderr: '',
    });
  });
});

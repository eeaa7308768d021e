#!/usr/bin/env node
// Builds every workspace package with its own `build` script, in dependency order
// (tsup's d.ts step reads sibling packages from their built dist/), and copies the root
// LICENSE into every publishable package so its tarball carries it (packages/*/LICENSE is
// git-ignored: one committed copy).
import { spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { workspacePackages } from './workspace.mjs';

for (const p of workspacePackages()) {
  if (!p.json.private) copyFileSync('LICENSE', join(p.dir, 'LICENSE'));
  if (!p.json.scripts?.build) continue;
  const t0 = Date.now();
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: p.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) {
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
    console.error(`build: ${p.name} failed`);
    process.exit(1);
  }
  console.log(`build: ${p.name} ok (${Date.now() - t0} ms)`);
}

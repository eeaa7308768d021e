#!/usr/bin/env node
// Builds every workspace package with its own `build` script, in dependency order
// (tsup's d.ts step reads sibling packages from their built dist/).
import { spawnSync } from 'node:child_process';
import { workspacePackages } from './workspace.mjs';

for (const p of workspacePackages()) {
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

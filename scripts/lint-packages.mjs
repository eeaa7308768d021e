#!/usr/bin/env node
// Packaging lint for every publishable workspace package: `publint --strict` and
// `@arethetypeswrong/cli --pack` (ESM-only profile). Run after `npm run build`.
import { spawnSync } from 'node:child_process';
import { workspacePackages } from './workspace.mjs';

let failed = 0;
for (const p of workspacePackages()) {
  if (p.json.private) continue;
  for (const [cmd, args] of [
    ['npx', ['--no-install', 'publint', '--strict']],
    ['npx', ['--no-install', 'attw', '--pack', '.', '--profile', 'esm-only', '--format', 'table-flipped']],
  ]) {
    const r = spawnSync(cmd, args, { cwd: p.dir, encoding: 'utf8' });
    if (r.status !== 0) {
      failed++;
      console.error(`lint-packages: ${p.name}: ${args[1]} failed\n${r.stdout}${r.stderr}`);
    }
  }
  if (!failed) console.log(`lint-packages: ${p.name} ok`);
}
if (failed) process.exit(1);

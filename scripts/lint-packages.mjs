#!/usr/bin/env node
// Packaging lint for every publishable workspace package: `publint --strict`,
// `@arethetypeswrong/cli --pack` (ESM-only profile), and the tarball's contents (LICENSE,
// README.md, every bin target; no src, tests or benchmarks). Run after `npm run build`.
// `--sizes` also prints each tarball's packed and unpacked size.
import { spawnSync } from 'node:child_process';
import { workspacePackages } from './workspace.mjs';

const sizes = process.argv.includes('--sizes');
let failed = 0;
let packed = 0;
let unpacked = 0;
for (const p of workspacePackages()) {
  if (p.json.private) continue;
  const problems = [];
  for (const [cmd, args] of [
    ['npx', ['--no-install', 'publint', '--strict']],
    ['npx', ['--no-install', 'attw', '--pack', '.', '--profile', 'esm-only', '--format', 'table-flipped']],
  ]) {
    const r = spawnSync(cmd, args, { cwd: p.dir, encoding: 'utf8' });
    if (r.status !== 0) problems.push(`${args[1]} failed\n${r.stdout}${r.stderr}`);
  }
  const r = spawnSync('npm', ['pack', '--dry-run', '--json'], {
    cwd: p.dir,
    encoding: 'utf8',
  });
  if (r.status !== 0) problems.push(`npm pack --dry-run failed\n${r.stdout}${r.stderr}`);
  else {
    const [pack] = JSON.parse(r.stdout);
    const files = new Set(pack.files.map((/** @type {{ path: string }} */ f) => f.path));
    for (const required of ['LICENSE', 'README.md', 'package.json', ...Object.values(p.json.bin ?? {})]) {
      const path = required.replace(/^\.\//, '');
      if (!files.has(path))
        problems.push(
          `tarball lacks ${path}${path === 'LICENSE' ? ' (run npm run build: it copies the root LICENSE)' : ''}`,
        );
    }
    // prepack (scripts/publish-manifest.mjs) leaves src/ and the @nodeagent/source condition out.
    for (const f of files) if (/^(src|test|bench)\//.test(f)) problems.push(`tarball ships ${f}`);
    packed += pack.size;
    unpacked += pack.unpackedSize;
    if (sizes)
      console.log(
        `lint-packages: ${p.name}: ${pack.entryCount} files, ${pack.size} B packed, ${pack.unpackedSize} B unpacked`,
      );
  }
  if (problems.length) {
    failed++;
    for (const problem of problems) console.error(`lint-packages: ${p.name}: ${problem}`);
  } else console.log(`lint-packages: ${p.name} ok`);
}
if (sizes) console.log(`lint-packages: total ${packed} B packed, ${unpacked} B unpacked`);
if (failed) process.exit(1);

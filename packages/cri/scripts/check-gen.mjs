// CI guard: regenerates src/gen from proto/ and fails when the committed output is stale
// (changed or new files). Run from the package directory: `npm run gen:check`.
// A file regenerated with the same content gets its old times back, so a current src/gen does
// not look newer than dist/ (the agent benchmark refuses a dist older than its src).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

const GEN = 'src/gen';

/** Every file under src/gen: its content and times. */
function snapshot() {
  const files = new Map();
  for (const rel of readdirSync(GEN, { recursive: true })) {
    const path = join(GEN, String(rel));
    const st = statSync(path);
    // Whole milliseconds, rounded down: a restored time is never later than the original.
    if (st.isFile())
      files.set(path, {
        content: readFileSync(path),
        atime: new Date(Math.floor(st.atimeMs)),
        mtime: new Date(Math.floor(st.mtimeMs)),
      });
  }
  return files;
}

const before = snapshot();
execFileSync('npx', ['buf', 'generate'], { stdio: 'inherit' });
execFileSync(process.execPath, ['scripts/gen-facade.mjs'], { stdio: 'inherit' });
for (const [path, old] of before) {
  if (existsSync(path) && readFileSync(path).equals(old.content)) utimesSync(path, old.atime, old.mtime);
}
const status = execFileSync('git', ['status', '--porcelain', '--', GEN, 'proto'], { encoding: 'utf8' });
if (status.trim() !== '') {
  process.stderr.write(
    `Generated CRI code is stale; run \`npm run gen -w @nodeagent/cri\` and commit:\n${status}`,
  );
  process.exit(1);
}
process.stdout.write('src/gen is current\n');

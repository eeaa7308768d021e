// CI guard: regenerates src/gen from proto/ and fails when the committed output is stale
// (changed or new files). Run from the package directory: `npm run gen:check`.
import { execFileSync } from 'node:child_process';

execFileSync('npx', ['buf', 'generate'], { stdio: 'inherit' });
execFileSync(process.execPath, ['scripts/gen-facade.mjs'], { stdio: 'inherit' });
const status = execFileSync('git', ['status', '--porcelain', '--', 'src/gen', 'proto'], { encoding: 'utf8' });
if (status.trim() !== '') {
  process.stderr.write(
    `Generated CRI code is stale; run \`npm run gen -w @nodeagent/cri\` and commit:\n${status}`,
  );
  process.exit(1);
}
process.stdout.write('src/gen is current\n');

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { runProxyCli } from '../src/cli/run-proxy-cli.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('nodeagent-proxy --version', () => {
  it.each([['--version'], ['-V']])('%s prints the package version, exit 0', async (flag) => {
    let out = '';
    let err = '';
    const code = await runProxyCli([flag], {
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
      env: {},
    });
    expect(code).toBe(0);
    expect(out).toBe(`nodeagent-proxy ${pkg.version}\n`);
    expect(err).toBe('');
  });

  it('finds the version from a bundle in dist/ as well', async () => {
    const dir = mkdtempSync(join(fileURLToPath(new URL('..', import.meta.url)), '.version-test-'));
    try {
      const outfile = join(dir, 'dist', 'cli.js');
      await build({
        stdin: {
          contents: "import { proxierVersion } from './src/cli/version.ts'; console.log(proxierVersion());",
          resolveDir: fileURLToPath(new URL('..', import.meta.url)),
          loader: 'ts',
        },
        bundle: true,
        platform: 'node',
        format: 'esm',
        outfile,
        logLevel: 'silent',
      });
      expect(execFileSync(process.execPath, [outfile], { encoding: 'utf8' })).toBe(`${pkg.version}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

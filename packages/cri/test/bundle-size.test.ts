/**
 * A consumer that only needs `parseEndpoint` must not bundle the generated protobuf codecs.
 *
 * The package is built here exactly as `npm run build` builds it (this package's tsup
 * config: the same entries, code splitting and tree shaking), without declarations and
 * into a temp folder so a concurrent build's `dist/` is left alone. The source condition is
 * not equivalent: the size problem comes from how tsup splits the output into chunks (the
 * endpoint code shared a chunk with the client's codec tables), which bundling `src` never
 * shows. `@nodeagent/core` is resolved through its source condition (it is not the subject).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build as esbuild, type Metafile } from 'esbuild';
import { build as tsup } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');
let outDir: string;

beforeAll(async () => {
  outDir = await mkdtemp(join(pkgDir, '.bundle-test-'));
  // This package's own tsup config (imported by URL: it is not part of the test project).
  const configUrl = pathToFileURL(join(pkgDir, 'tsup.config.ts')).href;
  const options = ((await import(configUrl)) as { default: { entry: string[] } }).default;
  await tsup({
    ...options,
    entry: options.entry.map((e) => join(pkgDir, e)),
    tsconfig: join(pkgDir, 'tsconfig.json'),
    outDir,
    dts: false,
    sourcemap: false,
    silent: true,
  });
}, 120_000);

afterAll(async () => {
  if (outDir !== undefined) await rm(outDir, { recursive: true, force: true });
});

async function bundle(external: string[]): Promise<{ size: number; inputs: Metafile['inputs'] }> {
  const result = await esbuild({
    stdin: {
      contents: `import { parseEndpoint } from './index.js';\nconsole.log(parseEndpoint(process.argv[2] ?? ''));\n`,
      resolveDir: outDir,
      loader: 'js',
    },
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'esm',
    conditions: ['@nodeagent/source'],
    external,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { size: result.outputFiles[0]?.contents.length ?? 0, inputs: result.metafile.inputs };
}

describe('bundling parseEndpoint alone (esbuild --bundle --minify, built package)', () => {
  for (const [label, external] of [
    ['@grpc/grpc-js external', ['@grpc/grpc-js']],
    ['@grpc/grpc-js bundled', []],
  ] as const) {
    it(`stays small and has no generated code (${label})`, async () => {
      const { size, inputs } = await bundle([...external]);
      console.log(`parseEndpoint consumer bundle, ${label}: ${size} bytes`);
      const files = Object.keys(inputs);
      expect(files.filter((f) => /grpc-js|@bufbuild|protobuf/.test(f))).toEqual([]);
      // The generated codecs (api.ts, ~310 kB minified) are absent.
      const output = await bundleText([...external]);
      expect(output).not.toMatch(/RuntimeService|BinaryWriter|PodSandboxConfig/);
      expect(size).toBeLessThan(4_000);
    });
  }
});

async function bundleText(external: string[]): Promise<string> {
  const result = await esbuild({
    stdin: { contents: `export { parseEndpoint } from './index.js';\n`, resolveDir: outDir, loader: 'js' },
    bundle: true,
    minify: false,
    platform: 'node',
    format: 'esm',
    conditions: ['@nodeagent/source'],
    external,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

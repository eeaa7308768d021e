// The agent as a separate process, for tests that kill it (SIGKILL) or run several: bundled
// from src with esbuild (workspace packages from their src too, npm dependencies stay imports)
// and run with `node`.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root. */
export const repoRoot = resolve(here, '../../..');

/** The proxier's loader of its optional backend packages: `import(specifier)` at run time. */
const BACKEND_LOADER = /packages\/proxier\/src\/backend-loader\.ts$/;
const DYNAMIC_LOADER = 'const defaultLoader: ModuleLoader = (specifier) => import(specifier);';

/**
 * Bundles `src/main.ts` into `<dir>/main.mjs` and returns that path. The proxy backends the
 * proxier imports on demand (`import(specifier)`, which a bundler cannot follow) are bundled
 * too, as static `import('@nodeagent/…')` calls, so `--proxy-mode` works from the bundle
 * without a build of the packages.
 */
export async function bundleAgent(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const outfile = join(dir, 'main.mjs');
  await build({
    entryPoints: [join(here, '../src/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@nodeagent/source'],
    logLevel: 'error',
    plugins: [
      {
        name: 'proxy-backends-bundled',
        setup(b) {
          b.onLoad({ filter: BACKEND_LOADER }, async (a) => {
            const text = await readFile(a.path, 'utf8');
            if (!text.includes(DYNAMIC_LOADER))
              throw new Error(`${a.path} no longer holds \`${DYNAMIC_LOADER}\`: update agent-process.ts`);
            const cases = ['iptables', 'nftables', 'ipvs']
              .map((m) => `specifier === '@nodeagent/${m}' ? import('@nodeagent/${m}') : `)
              .join('');
            const loader = `const defaultLoader: ModuleLoader = (specifier) => ${cases}import(specifier);`;
            return { contents: text.replace(DYNAMIC_LOADER, loader), loader: 'ts' };
          });
        },
      },
      {
        name: 'third-party-external',
        setup(b) {
          // Workspace packages are bundled from src; npm dependencies stay imports.
          b.onResolve({ filter: /^[^./]/ }, (r) =>
            r.path.startsWith('@nodeagent/') || r.path.startsWith('node:') ? undefined : { external: true },
          );
        },
      },
    ],
  });
  return outfile;
}

/** A free TCP port on 127.0.0.1 (free when asked; good enough for tests). */
export { freePort } from '@nodeagent/test-support/free-port';

/** An agent process started by {@link startAgentProcess}. */
export interface AgentProcess {
  /** The child process. */
  readonly proc: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code, or the signal that ended it. */
  exited(): Promise<number | string | null>;
  /** True until it exited. */
  alive(): boolean;
}

/**
 * Starts `node <bundle> <args…>` and waits until it logs `node <nodeName> is running`.
 * @throws when it does not within `timeoutMs` (the process is killed, its output in the message)
 */
export async function startAgentProcess(
  bundle: string,
  args: readonly string[],
  nodeName: string,
  timeoutMs = 60_000,
): Promise<AgentProcess> {
  let output = '';
  const proc = spawn(process.execPath, [bundle, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const alive = () => proc.exitCode === null && proc.signalCode === null;
  const exited = () =>
    new Promise<number | string | null>((r) => {
      if (!alive()) r(proc.exitCode ?? proc.signalCode);
      else proc.once('exit', (code, signal) => r(code ?? signal));
    });
  const deadline = Date.now() + timeoutMs;
  let problem: string | undefined;
  while (!output.includes(`node ${nodeName} is running`)) {
    if (!alive()) problem = `agent ${nodeName} exited (${proc.exitCode ?? proc.signalCode}) before running`;
    else if (Date.now() > deadline) problem = `agent ${nodeName} not running after ${timeoutMs} ms`;
    if (problem !== undefined) {
      if (alive()) {
        proc.kill('SIGKILL');
        await exited();
      }
      throw new Error(`${problem}\n--- agent ${nodeName} output ---\n${output.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { proc, output: () => output, exited, alive };
}

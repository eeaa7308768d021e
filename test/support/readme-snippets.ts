/**
 * Running README code blocks exactly as written, so a README example that stops working
 * (or kills the component it starts) fails a test.
 *
 * A snippet is bundled with esbuild (the `@nodeagent/*` packages from their sources, every
 * other package left to Node's resolution), then started as its own Node process. The test
 * gives it the environment a reader would have (`KUBECONFIG` pointing at a mini-apiserver,
 * a CRI endpoint, ...), watches its output, and stops it by PID.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { findBinary, runCommand } from './command.js';

/** The repository root. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CACHE_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'readme-snippets');

/** One fenced code block of a README. */
export interface ReadmeSnippet {
  /** 0-based position among the blocks of the same language. */
  readonly index: number;
  /** The nearest heading above the block (`''` before the first heading). */
  readonly heading: string;
  /** The block's text, without the fences. */
  readonly code: string;
}

/** The fenced blocks of `lang` (default `ts`) in the README at `readmePath`, in order. */
export function readmeSnippets(readmePath: string, lang = 'ts'): ReadmeSnippet[] {
  const lines = readFileSync(readmePath, 'utf8').split('\n');
  const out: ReadmeSnippet[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (h) heading = (h[1] as string).trim();
    const fence = /^```(\S*)\s*$/.exec(line);
    if (!fence) continue;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] as string); i++) body.push(lines[i] as string);
    if (fence[1] === lang) out.push({ index: out.length, heading, code: `${body.join('\n')}\n` });
  }
  return out;
}

/** Options of {@link startSnippet}. */
export interface StartSnippetOptions {
  /** Extra environment variables (merged over `process.env`). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Scales every `AbortSignal.timeout(ms)` of the snippet to `ms × timeScale`, so that a
   * snippet written with a 60 s timeout can be shown to outlive it in a second.
   * @default 1
   */
  readonly timeScale?: number;
  /** A name for the bundle file (letters, digits, dashes). @default 'snippet' */
  readonly name?: string;
  /**
   * Run the snippet inside this named network namespace (`nsenter --net=/run/netns/<name>`),
   * e.g. one the test created, so an example that programs the host's nftables or listens on
   * loopback touches only that namespace.
   * @default the test's own namespace
   */
  readonly netns?: string;
}

/** A started snippet process. */
export interface RunningSnippet {
  /** Its PID. */
  readonly pid: number;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the output once it matches `pattern`; rejects after `timeoutMs` or when the process exits first. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The exit code, or `undefined` while it runs (`null` when killed by a signal). */
  exitCode(): number | null | undefined;
  /** Resolves with the exit code when the process ends by itself. */
  exited(): Promise<number | null>;
  /** Stops the process (SIGTERM, then SIGKILL after 2 s) and removes its bundle. */
  stop(): Promise<void>;
}

/** Bundles `code` into an ES module under `node_modules/.cache` and returns its path. */
export async function bundleSnippet(code: string, name = 'snippet'): Promise<string> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const outfile = join(CACHE_DIR, `${name}-${process.pid}-${Date.now()}.mjs`);
  await build({
    stdin: { contents: code, resolveDir: REPO_ROOT, loader: 'ts', sourcefile: `${name}.ts` },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@nodeagent/source'],
    outfile,
    logLevel: 'silent',
    plugins: [
      {
        name: 'external-third-party',
        setup(b) {
          // Only the workspace's own packages are bundled (from source); the rest load from node_modules.
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('@nodeagent/') ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
  });
  return outfile;
}

/** Starts `code` (a complete ES module, TypeScript allowed) as a Node process. */
export async function startSnippet(code: string, options: StartSnippetOptions = {}): Promise<RunningSnippet> {
  const name = options.name ?? 'snippet';
  const bundle = await bundleSnippet(code, name);
  const files = [bundle];
  const args: string[] = [];
  const scale = options.timeScale ?? 1;
  if (scale !== 1) {
    const preload = bundle.replace(/\.mjs$/, '.preload.mjs');
    writeFileSync(
      preload,
      `const timeout = AbortSignal.timeout.bind(AbortSignal);\nAbortSignal.timeout = (ms) => timeout(Math.max(1, Math.round(ms * ${scale})));\n`,
    );
    files.push(preload);
    args.push('--import', preload);
  }
  const argv = [process.execPath, ...args, bundle];
  if (options.netns !== undefined) {
    if (!/^[A-Za-z0-9_.-]+$/.test(options.netns)) throw new TypeError(`bad netns name ${options.netns}`);
    argv.unshift(findBinary('nsenter') ?? 'nsenter', `--net=/run/netns/${options.netns}`, '--');
  }
  const child: ChildProcess = spawn(argv[0] as string, argv.slice(1), {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  let exitCode: number | null | undefined;
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const l of [...listeners]) l();
  };
  child.stdout?.on('data', (d: Buffer) => {
    text += d.toString('utf8');
    notify();
  });
  child.stderr?.on('data', (d: Buffer) => {
    text += d.toString('utf8');
    notify();
  });
  const exit = new Promise<number | null>((res) =>
    child.on('exit', (c) => {
      exitCode = c;
      notify();
      res(c);
    }),
  );
  const cleanup = (): void => {
    for (const f of files) rmSync(f, { force: true });
  };
  if (child.pid === undefined) {
    cleanup();
    throw new Error(`could not start snippet ${name}`);
  }
  const pid = child.pid;
  return {
    pid,
    output: () => text,
    exitCode: () => exitCode,
    exited: () => exit,
    waitForOutput(pattern, timeoutMs = 15_000) {
      return new Promise<string>((res, rej) => {
        const check = (): void => {
          if (pattern.test(text)) done(() => res(text));
          else if (exitCode !== undefined)
            done(() =>
              rej(new Error(`snippet ${name} exited (${exitCode}) before printing ${pattern}:\n${text}`)),
            );
        };
        const timer = setTimeout(
          () =>
            done(() => rej(new Error(`snippet ${name} printed no ${pattern} in ${timeoutMs} ms:\n${text}`))),
          timeoutMs,
        );
        const done = (f: () => void): void => {
          clearTimeout(timer);
          listeners.delete(check);
          f();
        };
        listeners.add(check);
        check();
      });
    },
    async stop() {
      if (exitCode === undefined) {
        process.kill(pid, 'SIGTERM');
        const killer = setTimeout(() => {
          if (exitCode === undefined) process.kill(pid, 'SIGKILL');
        }, 2_000);
        await exit;
        clearTimeout(killer);
      }
      cleanup();
    },
  };
}

/**
 * Type-checks snippets as a user's project would (strict, NodeNext, the packages' own
 * declarations through their sources). Resolves with tsc's diagnostics, `''` when clean.
 */
export async function typecheckSnippets(name: string, snippets: readonly string[]): Promise<string> {
  const dir = join(CACHE_DIR, `${name}-types-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [i, code] of snippets.entries()) writeFileSync(join(dir, `snippet-${i}.mts`), code);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: join(REPO_ROOT, 'tsconfig.base.json'),
      compilerOptions: {
        composite: false,
        noEmit: true,
        declaration: false,
        declarationMap: false,
        emitDeclarationOnly: false,
        noUnusedLocals: false,
      },
      include: ['*.mts'],
    }),
  );
  try {
    const result = await runCommand(
      [process.execPath, join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir],
      {
        timeoutMs: 120_000,
      },
    );
    return result.code === 0 ? '' : result.stdout + result.stderr;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

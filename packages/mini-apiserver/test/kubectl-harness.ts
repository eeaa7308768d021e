/**
 * The real kubectl against a mini-apiserver started for one describe block: the kubeconfig,
 * HOME and cache in a temp dir, `kubectl(...)` resolving with stdout or rejecting with stderr.
 * Under CI=true a missing kubectl fails the block; elsewhere the caller skips it.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type MiniApiServer, type MiniApiServerOptions, renderKubeconfig } from '../src/index.js';
import { start } from './helpers.js';

/** True when no kubectl binary runs here. */
export const kubectlMissing =
  spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0;

/** Fails the test when kubectl is missing (under CI=true; elsewhere its block is skipped). */
export function requireKubectl(): void {
  if (kubectlMissing) throw new Error('kubectl is required under CI=true (Debian package kubernetes-client)');
}

/** Starts a TLS (self-signed CA) server in RBAC mode knowing one user, `user`, by the bearer token `user`. */
export function startRbacTlsFor(user: string): Promise<MiniApiServer> {
  return start({ authorization: 'RBAC', tls: 'self-signed', tokens: [{ token: user, user }] });
}

/** What {@link useKubectlServer} gives a describe block. */
export interface KubectlServer {
  /** The server (set in beforeAll). */
  readonly server: MiniApiServer;
  /** The temp dir holding the kubeconfig. */
  readonly dir: string;
  /** kubectl's environment (KUBECONFIG, HOME), for spawning it directly. */
  readonly env: NodeJS.ProcessEnv;
  /** Runs kubectl against the server; resolves with stdout, rejects with stderr. */
  kubectl(...args: string[]): Promise<string>;
  /**
   * Runs kubectl against the server (with `extraEnv` on top of {@link KubectlServer.env});
   * resolves with its exit code and output, whatever the outcome.
   */
  run(args: string[], extraEnv?: NodeJS.ProcessEnv): Promise<KubectlRun>;
  /** Starts a long-running kubectl (`get -w`) against the server, collecting its stdout. */
  watch(...args: string[]): KubectlWatch;
}

/** A long-running kubectl started by {@link KubectlServer.watch}. */
export interface KubectlWatch {
  /** What it printed on stdout so far. */
  readonly out: string;
  /** What it printed on stderr so far. */
  readonly err: string;
  /**
   * Resolves once the output contains `text`, or after `timeoutMs` without it (assert on
   * {@link KubectlWatch.out} then).
   */
  until(text: string, timeoutMs?: number): Promise<void>;
  /** Kills it. */
  stop(): void;
}

/** What {@link KubectlServer.run} resolves with. */
export interface KubectlRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Registers beforeAll/afterAll that start and stop a server for kubectl (with `options`);
 * call inside describe.
 */
export function useKubectlServer(prefix: string, options: MiniApiServerOptions = {}): KubectlServer {
  const h = { server: undefined as unknown as MiniApiServer, dir: '', env: {} as NodeJS.ProcessEnv };
  beforeAll(async () => {
    requireKubectl();
    h.dir = await mkdtemp(join(tmpdir(), prefix));
    h.server = await start({ ...options, kubeconfigPath: join(h.dir, 'kubeconfig') });
    h.env = { ...process.env, KUBECONFIG: join(h.dir, 'kubeconfig'), HOME: h.dir };
  });
  afterAll(async () => {
    await h.server?.stop();
    if (h.dir) await rm(h.dir, { recursive: true, force: true });
  });
  const run = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
    new Promise<KubectlRun & { error: string }>((resolve) => {
      execFile(
        'kubectl',
        [...args, `--cache-dir=${join(h.dir, 'cache')}`],
        { env: { ...h.env, ...extraEnv }, timeout: 20_000 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout, stderr, error: err?.message ?? '' });
        },
      );
    });
  return {
    get server() {
      return h.server;
    },
    get dir() {
      return h.dir;
    },
    get env() {
      return h.env;
    },
    kubectl: async (...args) => {
      const r = await run(args);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr || r.error}`);
      return r.stdout;
    },
    run,
    watch: (...args) => {
      const child = spawn('kubectl', [...args, `--cache-dir=${join(h.dir, 'cache')}`], { env: h.env });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
      });
      return {
        get out() {
          return out;
        },
        get err() {
          return err;
        },
        async until(text, timeoutMs = 10_000) {
          const deadline = Date.now() + timeoutMs;
          while (!out.includes(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
        },
        stop: () => child.kill(),
      };
    },
  };
}

/** What a kubectl run ended with: its exit code and its output (stdout then stderr, trimmed). */
export interface KubectlOutcome {
  readonly code: number;
  readonly out: string;
}

/**
 * A kubectl runner with the kubeconfig at `<dir>/kubeconfig` and HOME `dir`, resolving with
 * the outcome (it never rejects: a refusal is an outcome to assert on).
 */
export function kubectlIn(dir: string): (...args: string[]) => Promise<KubectlOutcome> {
  const env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
  return (...args) =>
    new Promise((resolve) => {
      execFile('kubectl', args, { env }, (err, stdout, stderr) =>
        resolve({
          code: err ? ((err as { code?: number }).code ?? 1) : 0,
          out: (stdout + stderr).trim(),
        }),
      );
    });
}

/**
 * Runs `body` with a {@link kubectlIn} runner authenticated to `server` (TLS, its CA trusted) as
 * bearer `token`, its kubeconfig in a temp dir removed afterwards.
 */
export async function withKubectlAs(
  server: MiniApiServer,
  token: string,
  body: (kubectl: (...args: string[]) => Promise<KubectlOutcome>) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), `kubectl-${token}-`));
  try {
    await writeFile(
      join(dir, 'kubeconfig'),
      renderKubeconfig({ server: server.url, token, certificateAuthority: server.tls?.ca ?? '' }),
    );
    await body(kubectlIn(dir));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

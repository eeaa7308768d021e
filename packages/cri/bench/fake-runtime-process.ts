// Runs a FakeRuntime in a child process for the benchmarks (CRI client, PLEG relist), so the
// figures are the client's: the fake's encoding runs on another thread (another core, when
// the machine has one free) instead of interleaving with the decoding being measured.
//
// The child is plain JS (fake-runtime-child.mjs). It loads `@nodeagent/cri/testing` bundled
// from src by esbuild (the engine tsup builds dist with): the same code as the published
// dist, but with no dependency on sibling packages' dist being built and current, and fast
// enough (< 1 s) to do before every run. Set CRI_BENCH_CHILD_NODE_OPTIONS (e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof") to pass Node flags to the child.
import { type ChildProcess, fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const benchDir = dirname(fileURLToPath(import.meta.url));
const rootDir = join(benchDir, '..', '..', '..');
// Under node_modules: ignored by git, and bare imports (@grpc/grpc-js) resolve from there.
const outRoot = join(rootDir, 'node_modules', '.cache', 'nodeagent-cri-bench');

let bundled: Promise<{ dir: string; file: string }> | undefined;

/**
 * Bundles src/testing.ts (with `@nodeagent/core` from its source) into a fresh directory, once
 * until {@link FakeRuntimeProcess.stop} removes it (a loaded module no longer needs its file).
 */
function bundleFakeRuntime(): Promise<{ dir: string; file: string }> {
  bundled ??= (async () => {
    mkdirSync(outRoot, { recursive: true });
    const dir = mkdtempSync(join(outRoot, 'bundle-'));
    const outfile = join(dir, 'testing.mjs');
    await build({
      entryPoints: [join(benchDir, '..', 'src', 'testing.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      conditions: ['@nodeagent/source'],
      external: ['@grpc/grpc-js', '@bufbuild/protobuf', 'yaml', 'prom-client'],
      logLevel: 'error',
    });
    return { dir, file: outfile };
  })();
  return bundled;
}

/** Partial-message JSON of a sandbox and its containers, seeded without RPCs. */
export interface SeedPod {
  readonly sandbox: object;
  readonly containers: readonly object[];
}

/** A FakeRuntime living in a child process. */
export interface FakeRuntimeProcess {
  /** `unix:///…` socket the fake serves on. */
  readonly endpoint: string;
  /** The child's PID. */
  readonly pid: number;
  /** Adds sandboxes and containers (started) directly; resolves with their IDs in order. */
  seed(pods: readonly SeedPod[]): Promise<{ sandboxIds: string[]; containerIds: string[] }>;
  /** Ends running containers' processes from outside (exit code 1). */
  kill(ids: readonly string[]): Promise<void>;
  /** CPU time the child has used so far, µs. */
  cpuUs(): Promise<number>;
  /** Stops the fake and waits for the child to exit. */
  stop(): Promise<void>;
}

/** Forks the child and starts a FakeRuntime in it with `options` (JSON-serialisable). */
export async function startFakeRuntimeProcess(options: object = {}): Promise<FakeRuntimeProcess> {
  const bundle = await bundleFakeRuntime();
  const execArgv = (process.env.CRI_BENCH_CHILD_NODE_OPTIONS ?? '').split(/\s+/).filter((a) => a !== '');
  const child: ChildProcess = fork(join(benchDir, 'fake-runtime-child.mjs'), [bundle.file], {
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 0;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`fake runtime child exited early (code ${code})`)));
    child.on('message', (raw) => {
      const message = raw as { ready?: boolean; id?: number; result?: unknown; error?: string };
      if (message.ready) return resolve();
      const waiter = message.id === undefined ? undefined : pending.get(message.id);
      if (waiter === undefined) return;
      pending.delete(message.id as number);
      if (message.error !== undefined) waiter.reject(new Error(`fake runtime child: ${message.error}`));
      else waiter.resolve(message.result);
    });
  });
  const request = <T>(op: string, args: object = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ id, op, ...args });
    });
  await ready;
  const { endpoint } = await request<{ endpoint: string }>('start', { options });
  return {
    endpoint,
    pid: child.pid ?? -1,
    seed: (pods) => request('seed', { pods }),
    kill: async (ids) => {
      await request('kill', { ids });
    },
    cpuUs: async () => (await request<{ cpuUs: number }>('cpu')).cpuUs,
    async stop() {
      if (child.exitCode === null) {
        await request('stop').catch(() => undefined);
        child.disconnect();
        await exited;
      }
      bundled = undefined;
      rmSync(bundle.dir, { recursive: true, force: true });
    },
  };
}

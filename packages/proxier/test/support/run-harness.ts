/**
 * `nodeagent-proxy run` in-process against a mini-apiserver: the kubeconfig in a temp dir, the
 * command line every `run` test uses (nftables mode, no healthz, metrics on a free port) and the
 * stop signal. What the dual-stack and RBAC `run` tests share.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type MiniApiServer, renderKubeconfig } from '@nodeagent/mini-apiserver';
import { freePort } from '@nodeagent/test-support/free-port';
import { type RunIo, runProxy } from '../../src/cli/run.js';
import { parseRunCommandLine, type RunCommand } from '../../src/cli/run-config.js';

/** A `run` started by {@link startProxyRun}. */
export interface ProxyRun {
  /** Resolves with the exit code. */
  readonly done: Promise<number>;
  /** Everything it logged so far. */
  log(): string;
  /** Sends SIGTERM (again: harmless). */
  stop(): void;
  /** Stops it and removes the temp dir; the server is the caller's. */
  close(): Promise<void>;
}

/**
 * Starts `run` for `nodeName` against `server` (as `token`'s user when given), with `args` after
 * the common ones and `io`'s seams (backend, platform, node wait, interface addresses, …).
 */
export async function startProxyRun(
  server: MiniApiServer,
  opts: {
    nodeName: string;
    token?: string;
    args?: readonly string[];
    io: Omit<RunIo, 'stderr' | 'env' | 'stopSignal'>;
  },
): Promise<ProxyRun> {
  const dir = await mkdtemp(join(tmpdir(), 'proxy-run-'));
  let stop!: (s: string) => void;
  const stopSignal = new Promise<string>((r) => {
    stop = r;
  });
  try {
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      renderKubeconfig({ server: server.url, ...(opts.token !== undefined ? { token: opts.token } : {}) }),
    );
    const cmd = (await parseRunCommandLine(
      [
        '--kubeconfig',
        kubeconfig,
        '--proxy-mode',
        'nftables',
        '--hostname-override',
        opts.nodeName,
        '--healthz-bind-address=',
        '--metrics-bind-address',
        `127.0.0.1:${await freePort()}`,
        ...(opts.args ?? []),
      ],
      async () => '',
    )) as RunCommand;
    const logs: string[] = [];
    const done = runProxy(cmd, {
      stderr: { write: (t: string) => logs.push(t) },
      env: {},
      stopSignal,
      ...opts.io,
    });
    return {
      done,
      log: () => logs.join(''),
      stop: () => stop('SIGTERM'),
      close: async () => {
        stop('SIGTERM');
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

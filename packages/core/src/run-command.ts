/**
 * A small process runner for tools driven from code (iptables-restore, nft, ipvsadm,
 * conntrack...): no shell, the input written to stdin, stdout/stderr collected, optionally
 * inside a named network namespace, with a timeout and an abort signal.
 *
 * @module
 */
import { spawn } from 'node:child_process';

/** Options of {@link runCommand}. */
export interface RunCommandOptions {
  /**
   * Written to the child's stdin, which is then closed.
   * @default undefined (stdin is `/dev/null`)
   */
  readonly input?: string | Uint8Array | undefined;
  /**
   * Run the command inside this named network namespace (`/run/netns/<name>`), entered with
   * `nsenter --net=/run/netns/<name> --` (see {@link commandArgv}).
   * @default undefined (the caller's namespace)
   */
  readonly netns?: string | undefined;
  /**
   * Kill the child with SIGKILL after this many milliseconds; the result then has
   * `signal: 'SIGKILL'` and `timedOut: true`.
   * @default undefined (no timeout)
   */
  readonly timeoutMs?: number | undefined;
  /** Aborting kills the child (SIGKILL) and rejects with a {@link CommandError}. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The child's environment.
   * @default process.env
   */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /**
   * The child's working directory.
   * @default process.cwd()
   */
  readonly cwd?: string | undefined;
}

/** How a command ended. */
export interface RunCommandResult {
  /** Everything it wrote to stdout (UTF-8). */
  readonly stdout: string;
  /** Everything it wrote to stderr (UTF-8). */
  readonly stderr: string;
  /** Exit code, or undefined when it was killed by a signal. */
  readonly code: number | undefined;
  /** The signal that killed it, if any. */
  readonly signal: NodeJS.Signals | undefined;
  /** True if it was killed because `timeoutMs` passed. */
  readonly timedOut: boolean;
}

/**
 * A command that could not be run (not found, aborted) or, when a caller chooses to throw
 * one, that failed. Subclass it for a tool-specific error type.
 */
export class CommandError extends Error {
  override readonly name: string = 'CommandError';
  /** The argv that failed. */
  readonly argv: readonly string[];
  /** Exit code (undefined if killed by a signal or not started). */
  readonly exitCode: number | undefined;
  /** Captured stderr, or why the command could not be started. */
  readonly stderr: string;
  /**
   * @param argv command; @param exitCode exit status; @param stderr its stderr;
   * @param options `cause`: the underlying error (spawn failure, abort reason).
   */
  constructor(
    argv: readonly string[],
    exitCode: number | undefined,
    stderr: string,
    options?: { readonly cause?: unknown },
  ) {
    super(
      `${argv.join(' ')} failed (exit ${exitCode ?? 'signal'}): ${stderr.trim().slice(0, 2000)}`,
      options,
    );
    this.argv = argv;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

const NETNS_NAME = /^[A-Za-z0-9_.-]+$/;

/**
 * The argv {@link runCommand} spawns for `argv` and `options` (the `nsenter` prefix when
 * `netns` is set), for logs and tests.
 * @throws TypeError when `netns` is not a valid namespace name.
 */
export function commandArgv(
  argv: readonly string[],
  options: Pick<RunCommandOptions, 'netns'> = {},
): string[] {
  const ns = options.netns;
  if (ns === undefined) return [...argv];
  if (!NETNS_NAME.test(ns)) throw new TypeError(`netns ${JSON.stringify(ns)} is not a valid namespace name`);
  return ['nsenter', `--net=/run/netns/${ns}`, '--', ...argv];
}

/**
 * Runs `argv` without a shell and collects its output. Resolves whatever the exit status
 * (check `code`); rejects with a {@link CommandError} only when the command cannot be
 * started or `signal` aborts it.
 *
 * @example
 * ```ts
 * const r = await runCommand(['cat'], { input: 'hello', timeoutMs: 5000 });
 * r.stdout; // 'hello'
 * ```
 */
export function runCommand(
  argv: readonly string[],
  options: RunCommandOptions = {},
): Promise<RunCommandResult> {
  const full = commandArgv(argv, options);
  if (full.length === 0) return Promise.reject(new TypeError('runCommand needs a non-empty argv'));
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const child = spawn(full[0]!, full.slice(1), {
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env: options.env,
      cwd: options.cwd,
      signal: options.signal,
      killSignal: 'SIGKILL',
    });
    // Killed on timeout (not through spawn's own `timeout`, so the result can say why).
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, options.timeoutMs);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new CommandError(full, undefined, e.message, { cause: e }));
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      resolve({
        code: code ?? undefined,
        signal: sig ?? undefined,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
        timedOut,
      });
    });
    if (child.stdin) {
      // A tool that exits early closes stdin; its exit code reports the problem.
      child.stdin.on('error', () => {});
      child.stdin.end(options.input);
    }
  });
}

/**
 * Running programs without a shell, for the real-node test helpers.
 *
 * Every helper here takes an argv array (never a shell string), so arguments with spaces or
 * quotes cannot be misparsed and nothing is interpreted by `/bin/sh`.
 * @module
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { runCommand as coreRunCommand } from '@nodeagent/core';

/** What a finished command produced. */
export interface CommandResult {
  /** Everything the command wrote to stdout (UTF-8). */
  readonly stdout: string;
  /** Everything the command wrote to stderr (UTF-8). */
  readonly stderr: string;
  /** Exit code; `null` when the process was ended by a signal (see `signal`). */
  readonly code: number | null;
  /** The signal that ended the process, if any (e.g. after a timeout). */
  readonly signal: NodeJS.Signals | null;
}

/** Options for {@link runCommand}. */
export interface RunCommandOptions {
  /** Text written to the command's stdin (then stdin is closed). @default no input, stdin closed */
  readonly input?: string | Buffer;
  /** Kill the command with SIGKILL after this many milliseconds. @default 30000 */
  readonly timeoutMs?: number;
  /** Environment of the command. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Working directory. @default process.cwd() */
  readonly cwd?: string;
}

/** Thrown by {@link runChecked} when a command exits non-zero or is killed. */
export class CommandFailedError extends Error {
  override readonly name = 'CommandFailedError';
  /** The argv that failed. */
  readonly argv: readonly string[];
  /** The full result of the failed run. */
  readonly result: CommandResult;
  constructor(argv: readonly string[], result: CommandResult) {
    const how = result.signal ? `signal ${result.signal}` : `exit code ${result.code}`;
    const detail = (result.stderr.trim() || result.stdout.trim()).slice(-2000);
    super(`command failed (${how}): ${argv.join(' ')}${detail ? `\n${detail}` : ''}`);
    this.argv = argv;
    this.result = result;
  }
}

/** Directories searched after `$PATH`, since sbin tools (`ip`, `iptables`) are often missing from it. */
const EXTRA_BIN_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/**
 * Find an executable by name on `$PATH` and the usual sbin/bin directories.
 * A name containing `/` is checked as a path.
 * @returns the absolute path, or `undefined` when not found or not executable.
 */
export function findBinary(name: string): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...EXTRA_BIN_DIRS].map((d) =>
        join(d, name),
      );
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not here, keep looking
    }
  }
  return undefined;
}

/** Thrown by {@link requireBinary} when a program is not installed. */
export class BinaryNotFoundError extends Error {
  override readonly name = 'BinaryNotFoundError';
  constructor(readonly binary: string) {
    super(`executable not found on PATH or in sbin/bin directories: ${binary}`);
  }
}

/** Like {@link findBinary} but throws {@link BinaryNotFoundError} when missing. */
export function requireBinary(name: string): string {
  const found = findBinary(name);
  if (!found) throw new BinaryNotFoundError(name);
  return found;
}

/**
 * Run `argv` (no shell) and collect its output: core's `runCommand` with the program looked
 * up on `$PATH` and the sbin directories, a 30 s default timeout and Node's `null` exit-code
 * convention. Never rejects for a non-zero exit: check `code`, or use {@link runChecked}.
 * Rejects only when the program cannot be started.
 */
export async function runCommand(
  argv: readonly string[],
  opts: RunCommandOptions = {},
): Promise<CommandResult> {
  const [file, ...args] = argv;
  if (!file) throw new TypeError('runCommand: argv must not be empty');
  const result = await coreRunCommand([findBinary(file) ?? file, ...args], {
    input: opts.input ?? '',
    env: opts.env ?? process.env,
    cwd: opts.cwd,
    timeoutMs: opts.timeoutMs ?? 30_000,
  });
  return {
    stdout: result.stdout,
    stderr: result.stderr,
    code: result.code ?? null,
    signal: result.signal ?? null,
  };
}

/** Run `argv` and return its stdout; throws {@link CommandFailedError} unless it exits 0. */
export async function runChecked(argv: readonly string[], opts: RunCommandOptions = {}): Promise<string> {
  const result = await runCommand(argv, opts);
  if (result.code !== 0) throw new CommandFailedError(argv, result);
  return result.stdout;
}

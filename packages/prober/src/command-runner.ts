/**
 * How exec probes run their command in the container (upstream `kubecontainer.CommandRunner`),
 * and the adapter over `@nodeagent/cri`'s `ExecSync`.
 *
 * @module
 */
import { type CriClient, isDeadlineExceeded } from '@nodeagent/cri';

/** What a command printed and how it ended. */
export interface CommandResult {
  /** stdout followed by stderr (upstream combines them), as returned by the runtime. */
  readonly output: Uint8Array | string;
  /** The exit code; 0 is success. */
  readonly exitCode: number;
}

/**
 * Thrown (or rejected with) by a {@link CommandRunner} when the command ran past its timeout
 * (upstream `exec.TimeoutError`, made from a `DEADLINE_EXCEEDED` ExecSync). The exec probe
 * turns it into a failure with the message `command "<argv joined>" timed out`.
 */
export class ExecTimeoutError extends Error {
  override readonly name = 'ExecTimeoutError';
  /**
   * @param command the argv that timed out.
   * @param timeoutMs the timeout it was given.
   * @param options the underlying error.
   */
  constructor(
    readonly command: readonly string[],
    readonly timeoutMs: number,
    options: { readonly cause?: unknown } = {},
  ) {
    super(`command ${goQuote(command.join(' '))} timed out`, { cause: options.cause });
  }
}

/** Runs a command in a running container and waits for it. */
export interface CommandRunner {
  /**
   * Runs `cmd` in `containerId` (the runtime's ID, without the `<runtime>://` prefix) with a
   * timeout of `timeoutMs`. Rejects with {@link ExecTimeoutError} when the command timed out;
   * any other rejection is a probe error (retried, then reported). `signal` aborts when the
   * prober gives up waiting (the probe timeout plus its runtime request timeout, or `stop()`).
   */
  runInContainer(
    containerId: string,
    cmd: readonly string[],
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<CommandResult>;
}

/** Options of {@link criCommandRunner}. */
export interface CriCommandRunnerOptions {
  /**
   * Added to the probe timeout for the gRPC deadline of `ExecSync`, as the kubelet adds its
   * runtime request timeout, so the runtime has time to stop the command and answer.
   * @default 120_000 (the kubelet's `runtimeRequestTimeout`, 2 minutes)
   */
  readonly runtimeRequestTimeoutMs?: number;
}

/**
 * A {@link CommandRunner} over CRI `ExecSync` (upstream `RunInContainer`): the request carries
 * the probe timeout in whole seconds (rounded up, at least 1), output is stdout then stderr, and
 * a `DEADLINE_EXCEEDED` answer becomes an {@link ExecTimeoutError}.
 *
 * @example
 * ```ts
 * const runner = criCommandRunner(createCriClient('unix:///run/containerd/containerd.sock'));
 * ```
 */
export function criCommandRunner(
  cri: Pick<CriClient, 'runtime'>,
  options: CriCommandRunnerOptions = {},
): CommandRunner {
  const slackMs = options.runtimeRequestTimeoutMs ?? 120_000;
  return {
    async runInContainer(containerId, cmd, timeoutMs, signal) {
      try {
        const response = await cri.runtime.execSync(
          { containerId, cmd: [...cmd], timeout: BigInt(Math.max(1, Math.ceil(timeoutMs / 1000))) },
          { timeoutMs: timeoutMs + slackMs, signal },
        );
        return { output: Buffer.concat([response.stdout, response.stderr]), exitCode: response.exitCode };
      } catch (error) {
        if (isDeadlineExceeded(error)) throw new ExecTimeoutError(cmd, timeoutMs, { cause: error });
        throw error;
      }
    },
  };
}

/** Go's `%q` of a string: double quotes, backslash escapes for quotes, backslashes and control characters. */
export function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/**
 * The `exec` probe (upstream `pkg/probe/exec`): the command through the injected runner with
 * the probe's timeout; exit code 0 is success, any other a failure with the output, a timeout
 * a failure with `command "<argv>" timed out` (the `ExecProbeTimeout` behaviour, on since v1.20).
 *
 * @module
 */
import { type CommandRunner, ExecTimeoutError } from '../command-runner.js';
import { cappedText, type ProbeRun } from './probe-run.js';

/** Runs `cmd` in `containerId` and classifies the result. */
export async function execProbe(
  runner: CommandRunner,
  containerId: string,
  cmd: readonly string[],
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ProbeRun> {
  try {
    const { output, exitCode } = await runner.runInContainer(containerId, cmd, timeoutMs, signal);
    return { outcome: exitCode === 0 ? 'success' : 'failure', output: cappedText(output) };
  } catch (error) {
    if (error instanceof ExecTimeoutError) return { outcome: 'failure', output: error.message };
    return {
      outcome: 'unknown',
      output: '',
      error: error instanceof Error ? error : new Error(String(error)),
    };
  }
}

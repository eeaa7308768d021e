/**
 * `ExecSync` in the fake: the answer comes from the container's scripts, then the
 * runtime-wide scripts, then the default handler; the command "runs" for its scripted
 * duration on the fake clock and is cut off at the request's timeout.
 *
 * @module
 */
import { status } from '@grpc/grpc-js';
import type { Clock } from '@nodeagent/core';
import { ContainerState } from '../gen/runtime/v1/api.js';
import { type ExecResult, type ExecScript, execResultOf, execScriptMatches } from './behaviours.js';
import { FakeRuntimeError, invalidArgument, wrongState } from './fake-error.js';
import type { RuntimeState } from './runtime-state.js';

/** Answers commands no script matches. */
export type DefaultExecHandler = (argv: readonly string[], containerId: string) => ExecResult;

/** The default for unscripted commands: success with no output. */
export const succeedSilently: DefaultExecHandler = () => ({
  stdout: '',
  stderr: '',
  exitCode: 0,
  durationMs: 0,
});

/** What {@link runExecSync} needs. */
export interface ExecDeps {
  readonly state: RuntimeState;
  readonly clock: Clock;
  readonly scripts: readonly ExecScript[];
  readonly defaultExec: DefaultExecHandler;
}

/** Runs `argv` in the running container `idOrPrefix`, following the scripts. */
export async function runExecSync(
  deps: ExecDeps,
  idOrPrefix: string,
  argv: readonly string[],
  timeoutSeconds: number,
): Promise<ExecResult> {
  if (argv.length === 0) throw invalidArgument('exec command must not be empty');
  const c = deps.state.requireContainer(idOrPrefix);
  if (c.state !== ContainerState.CONTAINER_RUNNING) {
    throw wrongState(
      `container "${c.id}" is in ${ContainerState[c.state]} state, exec needs a running container`,
    );
  }
  const script = [...(c.behaviour.exec ?? []), ...deps.scripts].find((s) => execScriptMatches(s, argv));
  const result = script === undefined ? deps.defaultExec(argv, c.id) : execResultOf(script);
  const limitMs = timeoutSeconds > 0 ? timeoutSeconds * 1000 : Number.POSITIVE_INFINITY;
  if (result.durationMs > limitMs) {
    await deps.clock.sleep(limitMs);
    throw new FakeRuntimeError(
      status.DEADLINE_EXCEEDED,
      `failed to exec in container: timeout ${timeoutSeconds}s exceeded: context deadline exceeded`,
    );
  }
  if (result.durationMs > 0) await deps.clock.sleep(result.durationMs);
  return result;
}

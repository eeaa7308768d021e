/**
 * `ExecSync` in the fake: the answer comes from the container's scripts, then the
 * runtime-wide scripts, then the default handler; the command "runs" for its scripted
 * duration on the fake clock and is cut off at the request's timeout.
 *
 * @module
 */
import { status } from '@grpc/grpc-js';
import type { Clock } from '@nodeagent/core';
import { ContainerState, type KeyValue } from '../gen/runtime/v1/api.js';
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

/**
 * `env` and `printenv [NAME…]`, answered from the container's `envs` as given at
 * CreateContainer (raw bytes: `KeyValue.value` is `bytes`): every `KEY=value` line, or each
 * value and a newline; exit code 1 when a NAME is not set, as busybox does.
 */
function printenv(envs: readonly KeyValue[], argv: readonly string[]): ExecResult {
  const NEWLINE = Buffer.from('\n');
  const names = argv.slice(1);
  const result = (chunks: Buffer[], exitCode: number): ExecResult => ({
    stdout: Buffer.concat(chunks),
    stderr: '',
    exitCode,
    durationMs: 0,
  });
  if (names.length === 0) {
    return result(
      envs.flatMap((e) => [Buffer.from(`${e.key}=`), Buffer.from(e.value), NEWLINE]),
      0,
    );
  }
  // The last definition of a name wins, as in the process environment.
  const found = names.flatMap((n) => envs.filter((e) => e.key === n).slice(-1));
  return result(
    found.flatMap((e) => [Buffer.from(e.value), NEWLINE]),
    found.length === names.length ? 0 : 1,
  );
}

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
  const result =
    script !== undefined
      ? execResultOf(script)
      : argv[0] === 'printenv' || (argv[0] === 'env' && argv.length === 1)
        ? printenv(c.config.envs, argv)
        : deps.defaultExec(argv, c.id);
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

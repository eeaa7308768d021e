/**
 * Scripted container behaviour: how the fake's "process" of a container acts when it
 * is started, signalled and exec'd into. A behaviour is attached to containers by name,
 * image or command; everything timed runs on the fake's injected clock.
 *
 * @module
 */
import type { FakeLogLine } from './container-log.js';

/** Which containers a behaviour applies to. Every given field must match; an empty match applies to all. */
export interface ContainerMatch {
  /** The container's `metadata.name`, exactly or by pattern. */
  readonly name?: string | RegExp;
  /**
   * The image of the container config, as written in the request (`busybox`) or
   * normalised (`docker.io/library/busybox:latest`), or a pattern tested against both.
   */
  readonly image?: string | RegExp;
  /** `command` followed by `args` of the container config, element by element, or a pattern over them joined by spaces. */
  readonly command?: readonly string[] | RegExp;
}

/** The scripted answer to one `ExecSync` command. */
export interface ExecScript {
  /** The command it answers: exact argv, a pattern over the argv joined by spaces, or a predicate. */
  readonly cmd: readonly string[] | RegExp | ((argv: readonly string[]) => boolean);
  /** Standard output returned. @default "" */
  readonly stdout?: string;
  /** Standard error returned. @default "" */
  readonly stderr?: string;
  /** Exit code returned. @default 0 */
  readonly exitCode?: number;
  /**
   * How long the command runs (fake clock). If it exceeds the request's `timeout`
   * (seconds, when > 0) the call fails with `DEADLINE_EXCEEDED` at the timeout. @default 0
   */
  readonly durationMs?: number;
}

/** What the fake does with the output of a command no script answers. */
export interface ExecResult {
  /** Standard output (text, or raw bytes such as a `printenv` of a binary value). */
  readonly stdout: string | Uint8Array;
  /** Standard error. */
  readonly stderr: string;
  /** Exit code. */
  readonly exitCode: number;
  /** Run time on the fake clock, in ms. */
  readonly durationMs: number;
}

/**
 * How a container's process behaves. Without any behaviour a started container runs
 * until it is stopped, and exits with `sigtermExitCode` (143) on `StopContainer`.
 */
export interface ContainerBehaviour {
  /** The process exits by itself this many ms after it started. @default never */
  readonly exitAfterMs?: number;
  /** Exit code of a process that exits by itself (`exitAfterMs`, `crashOnStart`). @default 0, or 1 with `crashOnStart` */
  readonly exitCode?: number;
  /**
   * The `reason` reported once it exited by itself, e.g. `"OOMKilled"` (use with exit
   * code 137). @default "Completed" for exit code 0, "Error" otherwise (containerd's words)
   */
  readonly reason?: string;
  /** The `message` reported once it exited by itself. @default "" */
  readonly message?: string;
  /**
   * The process dies the moment it starts: `StartContainer` SUCCEEDS, and the container
   * is already EXITED (exit code `exitCode`, default 1; `startedAt` = `finishedAt`) when
   * the call returns. This is what a crashing binary looks like to the kubelet. To make
   * `StartContainer` itself fail, use `startError`.
   */
  readonly crashOnStart?: boolean;
  /**
   * `StartContainer` FAILS with this message (gRPC UNKNOWN, like an OCI runtime error)
   * and the container is left EXITED with exit code 128 and reason "StartError", as
   * containerd leaves it.
   */
  readonly startError?: string;
  /** `StartContainer` takes this long (fake clock) before the container is RUNNING. @default 0 */
  readonly startDelayMs?: number;
  /**
   * The process ignores SIGTERM: `StopContainer` with timeout T seconds only returns
   * after T s, when the container is killed (exit code 137, reason "Error").
   * @default false
   */
  readonly ignoreSigterm?: boolean;
  /** After SIGTERM the process needs this long to exit; if longer than the stop timeout it is killed (137). @default 0 */
  readonly sigtermDelayMs?: number;
  /** Exit code of a process that exits on SIGTERM. @default 143 (128 + SIGTERM, a process with no handler) */
  readonly sigtermExitCode?: number;
  /**
   * Lines the process prints when it starts, written to the container's log file
   * (`log_directory` of the sandbox + `log_path` of the container) in the CRI log format.
   * Nothing is written without them, or when the container has no log path. @default none
   */
  readonly logLines?: readonly (string | FakeLogLine)[];
  /** `ExecSync` scripts of this container, tried before the runtime-wide ones. */
  readonly exec?: readonly ExecScript[];
  /** Working-set memory reported by stats while running, in bytes. @default 4 MiB */
  readonly memoryWorkingSetBytes?: number;
  /** CPU used while running, in cores (0.25 = a quarter core), for the stats counters. @default 0.01 */
  readonly cpuCores?: number;
}

/** A behaviour together with the containers it applies to. */
export interface BehaviourRule {
  /** Which containers. */
  readonly match: ContainerMatch;
  /** What they do. */
  readonly behaviour: ContainerBehaviour;
}

/** The facts of a container a rule is matched against. */
export interface ContainerIdentity {
  readonly name: string;
  readonly image: string;
  readonly normalizedImage: string;
  readonly argv: readonly string[];
}

function matchText(pattern: string | RegExp | undefined, ...values: readonly string[]): boolean {
  if (pattern === undefined) return true;
  if (typeof pattern === 'string') return values.includes(pattern);
  return values.some((v) => {
    pattern.lastIndex = 0;
    return pattern.test(v);
  });
}

function matchArgv(pattern: readonly string[] | RegExp | undefined, argv: readonly string[]): boolean {
  if (pattern === undefined) return true;
  if (pattern instanceof RegExp) {
    pattern.lastIndex = 0;
    return pattern.test(argv.join(' '));
  }
  return pattern.length === argv.length && pattern.every((part, i) => part === argv[i]);
}

/** Whether `rule` applies to the container `who`. */
export function ruleMatches(match: ContainerMatch, who: ContainerIdentity): boolean {
  return (
    matchText(match.name, who.name) &&
    matchText(match.image, who.image, who.normalizedImage) &&
    matchArgv(match.command, who.argv)
  );
}

/** The behaviour of the first rule that matches `who` (rules are tried in the order they were added). */
export function findBehaviour(rules: readonly BehaviourRule[], who: ContainerIdentity): ContainerBehaviour {
  return rules.find((r) => ruleMatches(r.match, who))?.behaviour ?? {};
}

/** Whether `script` answers `argv`. */
export function execScriptMatches(script: ExecScript, argv: readonly string[]): boolean {
  const { cmd } = script;
  if (typeof cmd === 'function') return cmd(argv);
  return matchArgv(cmd, argv);
}

/** The result of running `script`, with defaults filled in. */
export function execResultOf(script: ExecScript): ExecResult {
  return {
    stdout: script.stdout ?? '',
    stderr: script.stderr ?? '',
    exitCode: script.exitCode ?? 0,
    durationMs: script.durationMs ?? 0,
  };
}

/** containerd's `reason` for a process that exited with `exitCode` on its own. */
export function defaultExitReason(exitCode: number): string {
  return exitCode === 0 ? 'Completed' : 'Error';
}

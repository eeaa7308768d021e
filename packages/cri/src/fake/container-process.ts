/**
 * The simulated process of a container: how it starts (delay, start error, crash,
 * scripted exit), how it reacts to StopContainer's SIGTERM and the SIGKILL at the
 * timeout, and how it ends. All timing runs on the injected clock.
 *
 * @module
 */
import { status } from '@grpc/grpc-js';
import type { Clock } from '@nodeagent/core';
import { ContainerEventType, ContainerState } from '../gen/runtime/v1/api.js';
import { defaultExitReason } from './behaviours.js';
import { appendCriLog } from './container-log.js';
import { FakeRuntimeError, wrongState } from './fake-error.js';
import type { ContainerRecord, NanoClock } from './records.js';

/** containerd's exit code and reason for a container whose StartContainer failed. */
const START_ERROR_EXIT_CODE = 128;
const START_ERROR_REASON = 'StartError';
/** 128 + SIGKILL. */
export const KILLED_EXIT_CODE = 137;
/** 128 + SIGTERM: a process without a handler. */
const TERMINATED_EXIT_CODE = 143;

/** What the processes need from the runtime state. */
export interface ContainerProcessDeps {
  readonly clock: Clock;
  readonly nanos: NanoClock;
  /** Sends a container event for `c`. */
  emit(c: ContainerRecord, type: ContainerEventType): void;
  /** Whether `c` is still known (not removed). */
  exists(c: ContainerRecord): boolean;
}

/** Runs the processes of all containers of one fake. */
export class ContainerProcesses {
  readonly #deps: ContainerProcessDeps;
  constructor(deps: ContainerProcessDeps) {
    this.#deps = deps;
  }

  /** Starts the process of the CREATED container `c` according to its behaviour. */
  async start(c: ContainerRecord): Promise<void> {
    const b = c.behaviour;
    if ((b.startDelayMs ?? 0) > 0) {
      c.starting = true;
      try {
        await this.#deps.clock.sleep(b.startDelayMs ?? 0);
      } finally {
        c.starting = false;
      }
      if (!this.#deps.exists(c) || c.state !== ContainerState.CONTAINER_CREATED) {
        throw wrongState(`container "${c.id}" was stopped or removed while starting`);
      }
    }
    if (b.startError !== undefined) {
      this.#finish(c, START_ERROR_EXIT_CODE, START_ERROR_REASON, b.startError);
      this.#deps.emit(c, ContainerEventType.CONTAINER_STOPPED_EVENT);
      throw new FakeRuntimeError(
        status.UNKNOWN,
        `failed to start containerd task "${c.id}": ${b.startError}`,
      );
    }
    c.state = ContainerState.CONTAINER_RUNNING;
    c.startedAtNs = this.#deps.nanos.now();
    // Like containerd, the log file exists from the start (empty when nothing is printed).
    if (c.logPath !== '') await appendCriLog(c.logPath, b.logLines ?? [], c.startedAtNs);
    this.#deps.emit(c, ContainerEventType.CONTAINER_STARTED_EVENT);
    if (b.crashOnStart) {
      const code = b.exitCode ?? 1;
      this.exit(c, code, b.reason ?? defaultExitReason(code), b.message ?? '');
    } else if (b.exitAfterMs !== undefined) {
      const code = b.exitCode ?? 0;
      const exitLater = () => this.exit(c, code, b.reason ?? defaultExitReason(code), b.message ?? '');
      c.timers.push(this.#deps.clock.setTimeout(exitLater, b.exitAfterMs).unref());
    }
  }

  /** SIGTERM, wait up to `timeoutSeconds` on the clock for the exit, then SIGKILL (137). */
  async stop(c: ContainerRecord, timeoutSeconds: number): Promise<void> {
    if (c.state !== ContainerState.CONTAINER_RUNNING) return;
    if (timeoutSeconds > 0) {
      const b = c.behaviour;
      if (!b.ignoreSigterm) {
        const code = b.sigtermExitCode ?? TERMINATED_EXIT_CODE;
        const termExit = (): void => this.exit(c, code, defaultExitReason(code), '');
        const delayMs = b.sigtermDelayMs ?? 0;
        if (delayMs <= 0) termExit();
        else c.timers.push(this.#deps.clock.setTimeout(termExit, delayMs).unref());
      }
      if (c.state === ContainerState.CONTAINER_RUNNING) await this.#waitForExit(c, timeoutSeconds * 1000);
    }
    this.kill(c);
  }

  /** SIGKILL: a running process ends now with 137. */
  kill(c: ContainerRecord): void {
    this.exit(c, KILLED_EXIT_CODE, 'Error', '');
  }

  /** Ends a running process now with `exitCode` and `reason` (no-op if it is not running). */
  exit(c: ContainerRecord, exitCode: number, reason: string, message: string): void {
    if (c.state !== ContainerState.CONTAINER_RUNNING) return;
    this.#finish(c, exitCode, reason, message);
    this.#deps.emit(c, ContainerEventType.CONTAINER_STOPPED_EVENT);
  }

  #finish(c: ContainerRecord, exitCode: number, reason: string, message: string): void {
    for (const t of c.timers.splice(0)) t.cancel();
    c.state = ContainerState.CONTAINER_EXITED;
    c.finishedAtNs = this.#deps.nanos.now();
    c.exitCode = exitCode;
    c.reason = reason;
    c.message = message;
    for (const wake of c.exitWaiters.splice(0)) wake();
  }

  #waitForExit(c: ContainerRecord, maxMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        timer.cancel();
        resolve();
      };
      const timer = this.#deps.clock.setTimeout(() => {
        const at = c.exitWaiters.indexOf(wake);
        if (at >= 0) c.exitWaiters.splice(at, 1);
        resolve();
      }, maxMs);
      timer.unref();
      c.exitWaiters.push(wake);
    });
  }
}

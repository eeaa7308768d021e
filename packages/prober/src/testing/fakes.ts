/**
 * The fakes behind `@nodeagent/prober/testing`.
 *
 * @module
 */
import type { V1Container, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { type CommandResult, type CommandRunner, ExecTimeoutError } from '../command-runner.js';
import type { ProbeEventReason, ProbeEventType } from '../event-recorder.js';
import type { PodStatusProvider } from '../pod-status-provider.js';

/** One recorded event. */
export interface RecordedProbeEvent {
  /** `namespace/name` of the pod. */
  readonly pod: string;
  /** The container's name. */
  readonly container: string;
  /** The event type. */
  readonly type: ProbeEventType;
  /** The reason. */
  readonly reason: ProbeEventReason;
  /** The message. */
  readonly message: string;
}

/** Keeps every event; pass {@link RecordingEventRecorder.record} as the manager's `recorder`. */
export class RecordingEventRecorder {
  /** The events, oldest first. */
  readonly events: RecordedProbeEvent[] = [];
  /** The recorder function. */
  readonly record = (
    pod: V1Pod,
    container: V1Container,
    type: ProbeEventType,
    reason: ProbeEventReason,
    message: string,
  ): void => {
    this.events.push({
      pod: `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`,
      container: container.name,
      type,
      reason,
      message,
    });
  };

  /** `"<type> <reason> <message>"` lines, like client-go's `FakeRecorder`. */
  lines(): string[] {
    return this.events.map((e) => `${e.type} ${e.reason} ${e.message}`);
  }
}

/** What a {@link FakeCommandRunner} answers: a result, `'timeout'`, `'hang'` (never answers) or an error. */
export type FakeCommandScript = CommandResult | 'timeout' | 'hang' | Error;

/** A scripted {@link CommandRunner}: `script` decides each answer; every call is recorded. */
export class FakeCommandRunner implements CommandRunner {
  /** The calls made, oldest first. */
  readonly calls: { containerId: string; cmd: readonly string[]; timeoutMs: number }[] = [];
  /** Decides the answer of a call (change it between probes). */
  script: (cmd: readonly string[], containerId: string) => FakeCommandScript;

  /** @param script the answer of every call. @default exit code 0 with no output */
  constructor(
    script: (cmd: readonly string[], containerId: string) => FakeCommandScript = () => ({
      output: '',
      exitCode: 0,
    }),
  ) {
    this.script = script;
  }

  /** Answers from the script. */
  runInContainer(
    containerId: string,
    cmd: readonly string[],
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<CommandResult> {
    this.calls.push({ containerId, cmd, timeoutMs });
    const answer = this.script(cmd, containerId);
    if (answer === 'hang') {
      return new Promise<CommandResult>((_resolve, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
      );
    }
    if (answer === 'timeout') return Promise.reject(new ExecTimeoutError(cmd, timeoutMs));
    if (answer instanceof Error) return Promise.reject(answer);
    return Promise.resolve(answer);
  }
}

/** A {@link PodStatusProvider} over a map the test sets. */
export class StaticPodStatusProvider implements PodStatusProvider {
  readonly #statuses = new Map<string, V1PodStatus>();

  /** Sets (or with `undefined` removes) the status of `uid`. */
  set(uid: string, status: V1PodStatus | undefined): void {
    if (status === undefined) this.#statuses.delete(uid);
    else this.#statuses.set(uid, status);
  }

  /** The status of `uid`. */
  getPodStatus(uid: string): V1PodStatus | undefined {
    return this.#statuses.get(uid);
  }
}

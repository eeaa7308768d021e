/**
 * The embedded runtime's containers print what their shell script `echo`es: when a
 * container starts, its script's `echo` steps are appended to its CRI log file
 * (`<RFC3339Nano> stdout F <text>`), each at the time it would run — `sleep N` steps delay
 * the ones after them — until a step that would block or end the shell (`httpd -f`, `exit`,
 * `false`) or the container stops. So `kubectl logs` (and `-f`) show real lines for pods on
 * the fake runtime. Only `echo` prints: no variables, no redirections (`echo x > f` prints
 * nothing), no loops.
 *
 * @module
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock, Logger, Timer } from '@nodeagent/core';
import { type ContainerEventResponse, ContainerEventType } from '@nodeagent/cri';
import type { FakeRuntime } from '@nodeagent/cri/testing';

/** One `echo` of a script and when it runs, ms after the start. */
export interface ScriptOutput {
  readonly atMs: number;
  readonly text: string;
}

/** The words of an `echo` step without shell quotes (`echo 'a b' c` → `a b c`). */
function echoText(args: string): string {
  return [...args.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '').join(' ');
}

/** The `echo` output of `script` (steps split at `;`, `&&`, newlines), with the time each runs. */
export function scriptOutput(script: string): ScriptOutput[] {
  const out: ScriptOutput[] = [];
  let at = 0;
  for (const step of script.split(/;|&&|\n/).map((x) => x.trim())) {
    const [cmd, ...rest] = step.split(/\s+/);
    if (cmd === 'echo') {
      if (/[<>|]/.test(step)) continue;
      out.push({ atMs: at, text: echoText(step.slice(4)) });
    } else if (cmd === 'sleep' && rest.length === 1 && Number.isFinite(Number(rest[0]))) {
      at += Number(rest[0]) * 1000;
    } else if ((cmd === 'httpd' && rest.includes('-f')) || cmd === 'exit' || cmd === 'false') {
      break;
    }
  }
  return out;
}

function rfc3339Nano(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}.${String(ms % 1000).padStart(3, '0')}000000Z`;
}

/** What {@link EmbeddedContainerOutput} needs. */
export interface EmbeddedContainerOutputDeps {
  readonly runtime: FakeRuntime;
  /** The shell script container `id` runs. */
  readonly script: (containerId: string) => string | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Writes the containers' `echo` output to their logs as they start. */
export class EmbeddedContainerOutput {
  readonly #deps: EmbeddedContainerOutputDeps;
  readonly #timers = new Map<string, Timer[]>();
  #unsubscribe: (() => void) | undefined;

  constructor(deps: EmbeddedContainerOutputDeps) {
    this.#deps = deps;
  }

  /** Follows the runtime's container events from now on. */
  start(): void {
    this.#unsubscribe ??= this.#deps.runtime.onContainerEvent((e) => this.#onEvent(e));
  }

  /** Stops following events and cancels pending output. */
  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    for (const id of [...this.#timers.keys()]) this.#cancel(id);
  }

  #cancel(id: string): void {
    for (const t of this.#timers.get(id) ?? []) t.cancel();
    this.#timers.delete(id);
  }

  #onEvent(e: ContainerEventResponse): void {
    if (e.containerEventType !== ContainerEventType.CONTAINER_STARTED_EVENT) {
      if (e.containerEventType !== ContainerEventType.CONTAINER_CREATED_EVENT) this.#cancel(e.containerId);
      return;
    }
    const script = this.#deps.script(e.containerId);
    const logPath = this.#deps.runtime.containers().find((c) => c.id === e.containerId)?.logPath ?? '';
    if (script === undefined || logPath === '') return;
    const timers: Timer[] = [];
    // One append at a time, in script order: two echoes due at once must not race.
    const outputs = scriptOutput(script);
    if (outputs.length === 0) return;
    let written: Promise<void> = mkdir(dirname(logPath), { recursive: true }).then(
      () => undefined,
      (err: unknown) => this.#deps.logger.warn({ err, logPath }, 'Embedded container output'),
    );
    for (const o of outputs) {
      const write = (): void => {
        const line = `${rfc3339Nano(this.#deps.clock.now())} stdout F ${o.text}\n`;
        written = written
          .then(() => appendFile(logPath, line))
          .catch((err: unknown) => this.#deps.logger.warn({ err, logPath }, 'Embedded container output'));
      };
      const t = this.#deps.clock.setTimeout(write, o.atMs);
      t.unref?.();
      timers.push(t);
    }
    this.#timers.set(e.containerId, timers);
  }
}

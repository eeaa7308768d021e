/**
 * The `tcpSocket` probe (upstream `pkg/probe/tcp`): a TCP connect within the timeout, then close.
 *
 * @module
 */
import { connect, type Socket } from 'node:net';
import { joinHostPort } from '@nodeagent/core';
import { dialErrorText } from './go-net-errors.js';
import { type Cancellable, ProbeCancel } from './probe-cancel.js';
import { errored, type ProbeRun } from './probe-run.js';

const CONNECTED: ProbeRun = Object.freeze({ outcome: 'success', output: '' });

/**
 * Connects to `host:port` within `timeoutMs`: success when the connection opens (it is closed
 * at once), failure with Go's dial error text otherwise (`dial tcp 10.0.0.5:80: i/o timeout`).
 * Never a probe error.
 */
export function tcpProbe(
  host: string,
  port: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ProbeRun> {
  if (signal === undefined) return tcpProbeWith(host, port, timeoutMs, undefined);
  const { cancel, detach } = ProbeCancel.fromSignal(signal);
  return tcpProbeWith(host, port, timeoutMs, cancel).finally(detach);
}

/**
 * {@link tcpProbe} with a worker's cancellation; with `errorsAsRuns` a connect that throws
 * resolves as a probe error instead of rejecting. @internal
 */
export function tcpProbeWith(
  host: string,
  port: number,
  timeoutMs: number,
  cancel: ProbeCancel | undefined,
  errorsAsRuns = false,
): Promise<ProbeRun> {
  return new Promise<ProbeRun>((resolve, reject) => {
    const dial = new Dial(host, port, cancel, resolve);
    if (cancel?.aborted) return dial.cancel();
    try {
      dial.start(timeoutMs);
    } catch (error) {
      dial.abandon();
      if (!errorsAsRuns) reject(error);
      else resolve(errored(error instanceof Error ? error.message : String(error)));
    }
  });
}

/** One connect attempt: the socket, its deadline and how it ends (methods, not closures per probe). */
class Dial implements Cancellable {
  readonly #host: string;
  readonly #port: number;
  readonly #cancel: ProbeCancel | undefined;
  readonly #resolve: (run: ProbeRun) => void;
  #socket: Socket | undefined;
  #timer: NodeJS.Timeout | undefined;
  #done = false;

  constructor(host: string, port: number, cancel: ProbeCancel | undefined, resolve: (run: ProbeRun) => void) {
    this.#host = host;
    this.#port = port;
    this.#cancel = cancel;
    this.#resolve = resolve;
  }

  start(timeoutMs: number): void {
    const socket = connect({ host: this.#host, port: this.#port });
    this.#socket = socket;
    this.#timer = setTimeout(Dial.#onTimeout, timeoutMs, this);
    if (this.#cancel !== undefined) this.#cancel.current = this;
    socket.once('connect', () => this.#finish(CONNECTED));
    socket.once('error', (error) =>
      this.#finish({ outcome: 'failure', output: dialErrorText(this.#address(), error) }),
    );
  }

  static #onTimeout(dial: Dial): void {
    dial.#finish({ outcome: 'failure', output: `dial tcp ${dial.#address()}: i/o timeout` });
  }

  /** Forgets a dial whose start threw. */
  abandon(): void {
    this.#done = true;
    clearTimeout(this.#timer);
    if (this.#cancel !== undefined && this.#cancel.current === this) this.#cancel.current = undefined;
  }

  cancel(): void {
    this.#finish({ outcome: 'failure', output: `dial tcp ${this.#address()}: operation was canceled` });
  }

  #address(): string {
    return joinHostPort(this.#host, this.#port);
  }

  #finish(run: ProbeRun): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#timer);
    if (this.#cancel !== undefined && this.#cancel.current === this) this.#cancel.current = undefined;
    this.#socket?.destroy();
    this.#resolve(run);
  }
}

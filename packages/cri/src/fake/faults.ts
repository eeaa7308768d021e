/**
 * What a test can do to any RPC of the fake: queue errors for it (FIFO per method,
 * like upstream's `InjectError`), slow it down, and read back the calls it received.
 *
 * @module
 */
import type { status } from '@grpc/grpc-js';
import { FakeRuntimeError } from './fake-error.js';

/** An error to answer one call with: a `FakeRuntimeError`, any `Error` (answered as UNKNOWN), or a code and message. */
export type InjectedError = Error | { readonly code: status; readonly message: string };

/** One RPC the fake received. */
export interface RecordedCall {
  /** The RPC name as in the proto, e.g. `"StartContainer"`. */
  readonly method: string;
  /** The decoded request message. */
  readonly request: unknown;
  /** When it arrived, on the fake's clock (ms since the epoch). */
  readonly atMs: number;
}

/** Per-method error queues, latencies and the call log. */
export class FaultPlan {
  readonly #errors = new Map<string, InjectedError[]>();
  readonly #latencies = new Map<string, number>();
  readonly #log: RecordedCall[] = [];

  /** Queues `error` for the next call of `method`. */
  injectError(method: string, error: InjectedError): void {
    const queue = this.#errors.get(method) ?? [];
    queue.push(error);
    this.#errors.set(method, queue);
  }

  /** Takes the next queued error of `method`, as a `FakeRuntimeError` or a plain `Error`. */
  popError(method: string): Error | undefined {
    const queue = this.#errors.get(method);
    const next = queue?.shift();
    if (next === undefined) return undefined;
    if (next instanceof Error) return next;
    return new FakeRuntimeError(next.code, next.message);
  }

  /** How many errors are still queued for `method`. */
  pendingErrors(method: string): number {
    return this.#errors.get(method)?.length ?? 0;
  }

  /** Sets the delay before every call of `method` is handled; 0 removes it. */
  setLatency(method: string, delayMs: number): void {
    if (!Number.isFinite(delayMs) || delayMs < 0)
      throw new RangeError(`latency must be >= 0 ms, got ${delayMs}`);
    if (delayMs === 0) this.#latencies.delete(method);
    else this.#latencies.set(method, delayMs);
  }

  /** The configured delay of `method` in ms (0 if none). */
  latencyMs(method: string): number {
    return this.#latencies.get(method) ?? 0;
  }

  /** Appends a call to the log. */
  record(call: RecordedCall): void {
    this.#log.push(call);
  }

  /** The calls received so far, oldest first (a copy). */
  calls(): RecordedCall[] {
    return [...this.#log];
  }

  /** Forgets the logged calls (errors and latencies stay). */
  clearCalls(): void {
    this.#log.length = 0;
  }

  /** Forgets everything: calls, queued errors and latencies. */
  reset(): void {
    this.#log.length = 0;
    this.#errors.clear();
    this.#latencies.clear();
  }
}

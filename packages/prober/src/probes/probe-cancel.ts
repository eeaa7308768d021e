/**
 * A probe worker's cancellation for its `httpGet` and `tcpSocket` probes: one flag and one slot
 * for the probe in flight (a worker runs one probe at a time). Cheaper than adding and removing
 * an `AbortSignal` listener on every probe at thousands of probes per second.
 *
 * @module
 */

/** What a probe in flight does when its worker stops. @internal */
export interface Cancellable {
  /** Ends the probe now (it resolves as cancelled or timed out, as it would on abort). */
  cancel(): void;
}

/** A worker's cancellation: {@link ProbeCancel.abort} once, when the worker stops. @internal */
export class ProbeCancel {
  /** True once aborted. */
  aborted = false;
  /** The probe in flight, if any (set by the probe, cleared when it ends). */
  current: Cancellable | undefined = undefined;

  /** Aborts: the probe in flight is cancelled; later probes end at once. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const c = this.current;
    this.current = undefined;
    c?.cancel();
  }

  /** A cancellation that follows `signal` (one listener, removed by `detach`). */
  static fromSignal(signal: AbortSignal): { cancel: ProbeCancel; detach: () => void } {
    const cancel = new ProbeCancel();
    if (signal.aborted) {
      cancel.aborted = true;
      return { cancel, detach: () => {} };
    }
    const onAbort = (): void => cancel.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    return { cancel, detach: () => signal.removeEventListener('abort', onAbort) };
  }
}

/**
 * What one run of a probe action returns (upstream `(probe.Result, string, error)`).
 *
 * @module
 */
import type { ProbeOutcome } from '../probe-types.js';

/**
 * The outcome of one probe action and its output. With `error` the run is a probe *error*:
 * the prober retries it (up to 3 attempts), reports it, and the worker discards it.
 */
export interface ProbeRun {
  /** What the probe found. */
  readonly outcome: ProbeOutcome;
  /** The probe's output (HTTP body, command output, message) used in events. */
  readonly output: string;
  /** Set when the probe itself could not run (bad port, no handler, runtime error). */
  readonly error?: Error;
}

/** Upstream caps HTTP bodies and exec output at 10 KiB (`maxRespBodyLength`, `maxReadLength`). */
export const MAX_PROBE_OUTPUT_BYTES = 10 * 1024;

/** The first {@link MAX_PROBE_OUTPUT_BYTES} of `data`, as text. */
export function cappedText(data: Uint8Array | string): string {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  return Buffer.from(bytes.subarray(0, MAX_PROBE_OUTPUT_BYTES)).toString('utf8');
}

/** An error of a probe run (the `error` of a {@link ProbeRun}). */
export function errored(message: string, outcome: ProbeOutcome = 'unknown'): ProbeRun {
  return { outcome, output: '', error: new Error(message) };
}

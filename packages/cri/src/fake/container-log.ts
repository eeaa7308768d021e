/**
 * Writes scripted container output to the container's log file in the CRI log format
 * (`<RFC3339Nano> <stdout|stderr> F <line>`), as a runtime's log shim does, so log
 * readers can be tested against the fake.
 *
 * @module
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/** One line a container "prints". */
export interface FakeLogLine {
  /** @default "stdout" */
  readonly stream?: 'stdout' | 'stderr';
  /** The line, without its newline. */
  readonly text: string;
}

/** RFC 3339 with 9 fractional digits, UTC, from ns since the epoch. */
export function rfc3339Nano(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${new Date(ms).toISOString().slice(0, 19)}.${fraction}Z`;
}

/** Appends `lines` to the CRI log file at `path` (creating its directory), stamped `atNs`. */
export async function appendCriLog(
  path: string,
  lines: readonly (string | FakeLogLine)[],
  atNs: bigint,
): Promise<void> {
  const stamp = rfc3339Nano(atNs);
  const text = lines
    .map((l) =>
      typeof l === 'string' ? { stream: 'stdout', text: l } : { stream: l.stream ?? 'stdout', text: l.text },
    )
    .map((l) => `${stamp} ${l.stream} F ${l.text}\n`)
    .join('');
  await mkdir(dirname(path), { recursive: true });
  await appendFile(path, text);
}

/**
 * Streams a CRI container log file to a writer as the kubelet's `ReadLogs` does for
 * `kubectl logs`: from the start of the last `tailLines` lines, skipping lines before
 * `sinceNs`, optionally prefixed with their timestamp (9 fractional digits), joined across
 * partial (`P`) entries by simply not ending them, cut at `limitBytes`; with `follow`, waits
 * for more at the end of the file, reopens the log after a rotation, and ends once the
 * container is no longer running and the file is drained. Every write waits for the
 * writer's `drain`, so a client that stops reading holds the reader, not memory.
 *
 * @module
 */
import { type FileHandle, open, stat } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { type Clock, realClock } from '@nodeagent/core';
import { parseCriLogEntry } from '@nodeagent/cri';
import { findTailLineStart, randomAccessFile } from '@nodeagent/kuberuntime';
import { rfc3339ToNs } from './pod-log-options.js';

/** What to read. */
export interface ReadContainerLogOptions {
  /** Only the last N lines. */
  readonly tailLines?: number;
  /** Only lines stamped at or after this time, ns since the epoch. */
  readonly sinceNs?: bigint;
  /** Stop after writing this many bytes. */
  readonly limitBytes?: number;
  /** Prefix each line with its timestamp. */
  readonly timestamps?: boolean;
  /** Keep reading while the container runs. */
  readonly follow?: boolean;
}

/** What the reader needs around the file. */
export interface ReadContainerLogDeps {
  /** Whether the container still runs (asked while following, at most every `statePeriodMs`). */
  readonly isRunning: () => Promise<boolean>;
  /** @default realClock */
  readonly clock?: Clock;
  /** Ends the read (the client went away). */
  readonly signal?: AbortSignal;
  /** How often to look for new lines at the end of the file while following, ms. @default 250 */
  readonly pollMs?: number;
  /** How often to ask {@link ReadContainerLogDeps.isRunning} while following, ms. @default 1_000 */
  readonly statePeriodMs?: number;
  /** Counts the bytes read from the file (diagnostics). */
  readonly onRead?: (bytes: number) => void;
}

const CHUNK_BYTES = 64 * 1024;

/** Renders a CRI timestamp with exactly 9 fractional digits, keeping its zone (upstream `timeFormatOut`). */
export function formatLogTimestamp(ts: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(ts);
  if (m === null) return ts;
  return `${m[1]}.${(m[2] ?? '').padEnd(9, '0').slice(0, 9)}${m[3]}`;
}

function waitDrain(out: Writable, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      out.off('error', done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
    out.on('error', done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Streams the log at `path` to `out` per `options`; resolves when done (end of file, the
 * container stopped while following, the byte limit, the writer closed, or `signal`). Does
 * not end `out`. Malformed lines are skipped, as upstream.
 */
export async function readContainerLog(
  path: string,
  options: ReadContainerLogOptions,
  out: Writable,
  deps: ReadContainerLogDeps,
): Promise<void> {
  const clock = deps.clock ?? realClock;
  const pollMs = deps.pollMs ?? 250;
  const statePeriodMs = deps.statePeriodMs ?? 1_000;
  const signal = deps.signal;
  let remaining = options.limitBytes ?? Number.POSITIVE_INFINITY;
  const stopped = (): boolean =>
    signal?.aborted === true || out.destroyed || out.writableEnded || remaining <= 0;

  let fh: FileHandle = await open(path, 'r');
  let ino = (await fh.stat()).ino;
  try {
    let position =
      options.tailLines === undefined ? 0 : await findTailLineStart(randomAccessFile(fh), options.tailLines);
    const chunk = Buffer.alloc(CHUNK_BYTES);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let lastStateCheckMs = clock.now();

    // The lines of one read chunk are formatted into `batch` and written with one write.
    let batch: string[] = [];
    const format = (line: string): void => {
      let entry: ReturnType<typeof parseCriLogEntry>;
      try {
        entry = parseCriLogEntry(line);
      } catch {
        return;
      }
      if (options.sinceNs !== undefined) {
        const ns = rfc3339ToNs(entry.timestamp);
        if (ns !== undefined && ns < options.sinceNs) return;
      }
      if (options.timestamps === true) batch.push(formatLogTimestamp(entry.timestamp), ' ');
      batch.push(entry.content);
      if (!entry.partial) batch.push('\n');
    };
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      let bytes = Buffer.from(batch.join(''), 'utf8');
      batch = [];
      if (bytes.length > remaining) bytes = bytes.subarray(0, remaining);
      remaining -= bytes.length;
      if (!out.write(bytes)) await waitDrain(out, signal);
    };
    const emitRest = async (): Promise<void> => {
      if (pendingBytes > 0) format(Buffer.concat(pending, pendingBytes).toString('utf8'));
      pending = [];
      pendingBytes = 0;
      await flush();
    };

    for (;;) {
      if (stopped()) return;
      const n = (await fh.read(chunk, 0, CHUNK_BYTES, position)).bytesRead;
      if (n > 0) {
        position += n;
        deps.onRead?.(n);
        let start = 0;
        for (let nl = chunk.indexOf(0x0a, start); nl >= 0 && nl < n; nl = chunk.indexOf(0x0a, start)) {
          if (pendingBytes > 0) {
            pending.push(chunk.subarray(start, nl));
            format(Buffer.concat(pending).toString('utf8'));
            pending = [];
            pendingBytes = 0;
          } else {
            format(chunk.toString('utf8', start, nl));
          }
          start = nl + 1;
        }
        if (start < n) {
          pending.push(Buffer.from(chunk.subarray(start, n)));
          pendingBytes += n - start;
        }
        await flush();
        continue;
      }
      // End of the file.
      if (options.follow !== true) {
        await emitRest();
        return;
      }
      // A rotation put a new file at `path`: drain this one (done: at EOF), then switch.
      const current = await stat(path).catch(() => undefined);
      if (current !== undefined && current.ino !== ino) {
        const next = await open(path, 'r').catch(() => undefined);
        if (next !== undefined) {
          await fh.close();
          fh = next;
          ino = (await fh.stat()).ino;
          position = 0;
          continue;
        }
      }
      if (clock.now() - lastStateCheckMs >= statePeriodMs) {
        lastStateCheckMs = clock.now();
        if (!(await deps.isRunning())) {
          // One last look: lines written just before the container stopped.
          const size = (await fh.stat()).size;
          if (size > position) continue;
          await emitRest();
          return;
        }
      }
      await clock.sleep(pollMs, signal).catch(() => undefined);
    }
  } finally {
    await fh.close();
  }
}

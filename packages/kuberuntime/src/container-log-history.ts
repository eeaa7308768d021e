/**
 * Reads a container's log across rotations: the rotated files `<log>.<timestamp>` (gzip
 * ones decompressed) oldest first, then the live log, as CRI log entries. The kubelet's own
 * `kubectl logs` reads only the live file; this reader is for servers that want the
 * history the {@link ContainerLogManager} kept.
 *
 * @module
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { type CriLogEntry, parseCriLogEntry } from '@nodeagent/cri';
import { rotatedLogs } from './container-log-manager.js';

/** Options of {@link readContainerLogHistory}. */
export interface ReadContainerLogHistoryOptions {
  /** Called for a malformed line, which is skipped. @default ignores it */
  readonly onInvalidLine?: (line: string, file: string) => void;
}

function linesOf(stream: Readable): AsyncIterable<string> {
  return createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
}

/**
 * Yields the entries of every rotated file of `logPath` (sorted by name, which is by time)
 * and then of `logPath` itself. Files that vanish while being listed (removed by a rotation)
 * are skipped; a missing live log ends the history.
 */
export async function* readContainerLogHistory(
  logPath: string,
  options: ReadContainerLogHistoryOptions = {},
): AsyncGenerator<CriLogEntry> {
  const files = (await rotatedLogs(logPath)).filter((f) => !f.endsWith('.tmp'));
  for (const file of [...files, logPath]) {
    const raw = createReadStream(file);
    const opened = await new Promise<boolean>((resolve) => {
      raw.once('open', () => resolve(true));
      raw.once('error', () => resolve(false));
    });
    if (!opened) continue;
    const input = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
    try {
      for await (const line of linesOf(input)) {
        if (line === '') continue;
        try {
          yield parseCriLogEntry(line);
        } catch {
          options.onInvalidLine?.(line, file);
        }
      }
    } finally {
      raw.destroy();
    }
  }
}

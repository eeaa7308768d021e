/**
 * The CRI container log file format the runtime writes for the kubelet:
 * `<RFC3339Nano timestamp> <stdout|stderr> <F|P> <content>` per line, where `P` marks a
 * partial line (the runtime split a long line) continued by the next entry of the same
 * stream, and `F` ends it.
 *
 * @module
 */

/** One raw line of a CRI log file. */
export interface CriLogEntry {
  /** Timestamp exactly as written (RFC 3339 with nanoseconds). */
  readonly timestamp: string;
  /** The stream the content came from. */
  readonly stream: 'stdout' | 'stderr';
  /** True for a `P` (partial) entry continued by the next entry of the stream. */
  readonly partial: boolean;
  /** The content, without the trailing newline. */
  readonly content: string;
}

/** One complete log line, with partial entries joined. */
export interface CriLogLine {
  /** Timestamp of the line's first entry. */
  readonly timestamp: string;
  /** The stream the line came from. */
  readonly stream: 'stdout' | 'stderr';
  /** The full line. */
  readonly content: string;
}

/** Thrown for a line that is not in the CRI log format. */
export class InvalidCriLogLineError extends Error {
  /**
   * @param line the rejected line.
   * @param reason what is wrong with it.
   */
  constructor(
    readonly line: string,
    reason: string,
  ) {
    super(
      `invalid CRI log line ${JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line)}: ${reason}`,
    );
    this.name = 'InvalidCriLogLineError';
  }
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Parses one line of a CRI log file (without its newline).
 *
 * @throws {@link InvalidCriLogLineError} when the line does not have the four fields or a
 * field is malformed.
 */
export function parseCriLogEntry(line: string): CriLogEntry {
  const first = line.indexOf(' ');
  const second = first < 0 ? -1 : line.indexOf(' ', first + 1);
  if (first < 0 || second < 0)
    throw new InvalidCriLogLineError(line, 'expected "<time> <stream> <F|P> <content>"');
  const timestamp = line.slice(0, first);
  const stream = line.slice(first + 1, second);
  if (!TIMESTAMP.test(timestamp))
    throw new InvalidCriLogLineError(line, `bad timestamp ${JSON.stringify(timestamp)}`);
  if (stream !== 'stdout' && stream !== 'stderr') {
    throw new InvalidCriLogLineError(line, `bad stream ${JSON.stringify(stream)} (stdout or stderr)`);
  }
  // Tag and content; an empty F line may end right after the tag.
  const rest = line.slice(second + 1);
  const tag = rest.length === 1 ? rest : rest.slice(0, rest.indexOf(' '));
  if (tag !== 'F' && tag !== 'P')
    throw new InvalidCriLogLineError(line, `bad tag ${JSON.stringify(tag)} (F or P)`);
  return { timestamp, stream, partial: tag === 'P', content: rest.length === 1 ? '' : rest.slice(2) };
}

/** Options of {@link parseCriLog}. */
export interface ParseCriLogOptions {
  /** Called for each malformed line, which is then skipped. @default rethrows the error */
  readonly onInvalidLine?: (error: InvalidCriLogLineError) => void;
}

/**
 * Parses a CRI log file's text into complete lines, joining partial entries per stream (a
 * stdout line split by the runtime may be interleaved with stderr entries). A partial line
 * still open at the end of the text is returned as it is.
 */
export function parseCriLog(text: string, options: ParseCriLogOptions = {}): CriLogLine[] {
  const lines: CriLogLine[] = [];
  const open: Partial<Record<'stdout' | 'stderr', { timestamp: string; parts: string[] }>> = {};
  const raw = text.split('\n');
  if (raw[raw.length - 1] === '') raw.pop();
  for (const line of raw) {
    let entry: CriLogEntry;
    try {
      entry = parseCriLogEntry(line);
    } catch (error) {
      if (options.onInvalidLine && error instanceof InvalidCriLogLineError) {
        options.onInvalidLine(error);
        continue;
      }
      throw error;
    }
    const pending = open[entry.stream];
    if (entry.partial) {
      if (pending) pending.parts.push(entry.content);
      else open[entry.stream] = { timestamp: entry.timestamp, parts: [entry.content] };
      continue;
    }
    if (pending) {
      pending.parts.push(entry.content);
      lines.push({ timestamp: pending.timestamp, stream: entry.stream, content: pending.parts.join('') });
      delete open[entry.stream];
    } else {
      lines.push({ timestamp: entry.timestamp, stream: entry.stream, content: entry.content });
    }
  }
  for (const stream of ['stdout', 'stderr'] as const) {
    const pending = open[stream];
    if (pending) lines.push({ timestamp: pending.timestamp, stream, content: pending.parts.join('') });
  }
  return lines;
}

/**
 * Reads the end of a CRI container log without reading the whole file, as the kubelet's
 * `tail.FindTailLineStartIndex` + `ReadLogs` do for the termination-message fallback: scan
 * backwards from the end in blocks for the start of the last N lines, then stream those
 * lines forward keeping only the last bytes of their content.
 *
 * @module
 */
import { open } from 'node:fs/promises';
import { parseCriLogEntry } from '@nodeagent/cri';

/** The read side of an open file: its size and positional reads (a `FileHandle` fits). */
export interface RandomAccessFile {
  /** Current size in bytes. */
  size(): Promise<number>;
  /** Reads up to `length` bytes at `position` into `buffer`; resolves with the count read. */
  read(buffer: Buffer, length: number, position: number): Promise<number>;
}

/** Wraps a `FileHandle` as a {@link RandomAccessFile}. */
export function randomAccessFile(fh: import('node:fs/promises').FileHandle): RandomAccessFile {
  return {
    size: async () => (await fh.stat()).size,
    read: async (buffer, length, position) => (await fh.read(buffer, 0, length, position)).bytesRead,
  };
}

/** Block size of the backwards scan. */
const BLOCK_BYTES = 8192;
/** Bytes read per step of the forward pass. */
const CHUNK_BYTES = 65536;
/** Longest CRI line prefix (`<timestamp> <stream> <tag> `) kept of an overlong line. */
const HEAD_BYTES = 128;

/**
 * Byte offset where the last `lines` lines of the file start (0 when it has fewer), as
 * upstream `FindTailLineStartIndex`: a final newline ends the last line, it does not start
 * an empty one. Reads backwards, one block at a time.
 */
export async function findTailLineStart(file: RandomAccessFile, lines: number): Promise<number> {
  const size = await file.size();
  const buf = Buffer.alloc(BLOCK_BYTES);
  let count = 0;
  for (let right = size; right > 0; ) {
    const left = Math.max(0, right - BLOCK_BYTES);
    const n = await file.read(buf, right - left, left);
    // Walk this block from its end; the (lines+1)-th newline from the end precedes the start.
    for (let i = n - 1; i >= 0; i--) {
      if (buf[i] === 0x0a && ++count > lines) return left + i + 1;
    }
    right = left;
  }
  return 0;
}

/**
 * Keeps the last `limit` bytes written to it (upstream's `circbuf` of the message).
 * @internal
 */
class TailBuffer {
  readonly #buf: Buffer;
  #len = 0;

  constructor(readonly limit: number) {
    this.#buf = Buffer.alloc(limit);
  }

  write(data: Buffer): void {
    if (data.length >= this.limit) {
      data.copy(this.#buf, 0, data.length - this.limit);
      this.#len = this.limit;
      return;
    }
    const keep = Math.min(this.#len, this.limit - data.length);
    this.#buf.copy(this.#buf, 0, this.#len - keep, this.#len);
    data.copy(this.#buf, keep);
    this.#len = keep + data.length;
  }

  bytes(): Buffer {
    return Buffer.from(this.#buf.subarray(0, this.#len));
  }

  reset(): void {
    this.#len = 0;
  }

  toString(): string {
    return this.#buf.subarray(0, this.#len).toString('utf8');
  }
}

/**
 * The content of the last `lines` CRI log lines of a file, newline-terminated for full
 * (`F`) entries, cut to its last `maxBytes` bytes; malformed lines are skipped, as the
 * kubelet's log reader does. Memory stays within a few blocks whatever the file size: of a
 * line longer than the read chunk only the head (for the CRI prefix) and the tail are kept.
 */
export async function tailCriLogContent(
  file: RandomAccessFile,
  lines: number,
  maxBytes: number,
): Promise<string> {
  const out = new TailBuffer(maxBytes);
  const size = await file.size();
  let position = await findTailLineStart(file, lines);
  const chunk = Buffer.alloc(CHUNK_BYTES);
  let parts: Buffer[] = [];
  let partBytes = 0;
  // Set once the current line outgrew the chunk: its first bytes and its last `maxBytes`.
  let head: string | undefined;
  const tail = new TailBuffer(maxBytes);
  const endLine = (): void => {
    const rest = Buffer.concat(parts, partBytes);
    let text: string;
    if (head === undefined) text = rest.toString('utf8');
    else {
      tail.write(rest);
      text = head;
    }
    try {
      const entry = parseCriLogEntry(text);
      out.write(head === undefined ? Buffer.from(entry.content, 'utf8') : tail.bytes());
      if (!entry.partial) out.write(NEWLINE);
    } catch {
      // Malformed: skipped.
    }
    parts = [];
    partBytes = 0;
    head = undefined;
    tail.reset();
  };
  while (position < size) {
    const n = await file.read(chunk, Math.min(CHUNK_BYTES, size - position), position);
    if (n <= 0) break;
    position += n;
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl >= 0 && nl < n; nl = chunk.indexOf(0x0a, start)) {
      parts.push(Buffer.from(chunk.subarray(start, nl)));
      partBytes += nl - start;
      endLine();
      start = nl + 1;
    }
    if (start >= n) continue;
    parts.push(Buffer.from(chunk.subarray(start, n)));
    partBytes += n - start;
    if (partBytes > CHUNK_BYTES) {
      const whole = Buffer.concat(parts, partBytes);
      if (head === undefined) {
        head = whole.subarray(0, HEAD_BYTES).toString('utf8');
        tail.write(whole.subarray(HEAD_BYTES));
      } else tail.write(whole);
      parts = [];
      partBytes = 0;
    }
  }
  if (partBytes > 0 || head !== undefined) endLine();
  return out.toString();
}

const NEWLINE = Buffer.from('\n');

/**
 * The termination-message fallback read of a container log (upstream
 * `readLastStringFromContainerLogs`): the last `lines` lines, at most `maxBytes` bytes. A log
 * that cannot be opened gives upstream's `Error on reading termination message from logs: …`.
 */
export async function readLastStringFromContainerLog(
  path: string,
  lines: number,
  maxBytes: number,
): Promise<string> {
  let fh: import('node:fs/promises').FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    return `Error on reading termination message from logs: failed to open log file ${JSON.stringify(path)}: ${(err as Error).message}`;
  }
  try {
    return await tailCriLogContent(randomAccessFile(fh), lines, maxBytes);
  } finally {
    await fh.close();
  }
}

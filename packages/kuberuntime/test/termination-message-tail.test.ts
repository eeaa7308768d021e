// The termination-message fallback reads only the end of the container log, as the kubelet
// (FindTailLineStartIndex + ReadLogs into a 2048-byte circular buffer): the last 80 lines,
// cut to their last 2048 bytes, without reading the rest of the file.
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  findTailLineStart,
  type RandomAccessFile,
  randomAccessFile,
  readLastStringFromContainerLog,
  tailCriLogContent,
} from '../src/container-log-tail.js';
import {
  MAX_TERMINATION_MESSAGE_LOG_BYTES,
  MAX_TERMINATION_MESSAGE_LOG_LINES,
} from '../src/termination-message.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tail-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const TS = '2026-01-02T03:04:05.123456789Z';
const cri = (content: string, tag: 'F' | 'P' = 'F', stream = 'stdout'): string =>
  `${TS} ${stream} ${tag} ${content}\n`;

/** A file in memory that counts the bytes read from it. */
function memoryFile(data: Buffer): RandomAccessFile & { bytesRead: number } {
  const f = {
    bytesRead: 0,
    size: async () => data.length,
    read: async (buffer: Buffer, length: number, position: number) => {
      const n = data.copy(buffer, 0, position, Math.min(data.length, position + length));
      f.bytesRead += n;
      return n;
    },
  };
  return f;
}

describe('findTailLineStart (upstream FindTailLineStartIndex)', () => {
  test.each([
    ['a\nb\nc\n', 2, 2],
    ['a\nb\nc\n', 3, 0],
    ['a\nb\nc\n', 10, 0],
    ['a\nb\nc\n', 0, 6],
    // An unterminated last line is not counted: upstream counts newlines.
    ['a\nb\nc', 1, 2],
    ['a\nb\nc', 2, 0],
    ['', 5, 0],
  ])('%j, last %i lines start at %i', async (text, lines, start) => {
    expect(await findTailLineStart(memoryFile(Buffer.from(text)), lines)).toBe(start);
  });
});

describe('tailCriLogContent', () => {
  test('the last 80 lines, cut to their last 2048 bytes, reading only the end of a large log', async () => {
    const count = 400_000; // ~20 MB
    const chunks: string[] = [];
    for (let i = 0; i < count; i++)
      chunks.push(cri(`line ${String(i).padStart(7, '0')} of the chatty container`));
    const data = Buffer.from(chunks.join(''));
    expect(data.length).toBeGreaterThan(20_000_000);
    const file = memoryFile(data);
    const got = await tailCriLogContent(
      file,
      MAX_TERMINATION_MESSAGE_LOG_LINES,
      MAX_TERMINATION_MESSAGE_LOG_BYTES,
    );
    let expected = '';
    for (let i = count - 80; i < count; i++)
      expected += `line ${String(i).padStart(7, '0')} of the chatty container\n`;
    expected = expected.slice(-2048);
    expect(got).toBe(expected);
    // 80 lines of ~72 bytes: the backwards scan reads one block, the forward pass those lines.
    expect(file.bytesRead).toBeLessThan(32 * 1024);
  });

  test('fewer than 80 lines and under 2048 bytes: all of it', async () => {
    const file = memoryFile(Buffer.from(cri('one') + cri('two', 'F', 'stderr')));
    expect(await tailCriLogContent(file, 80, 2048)).toBe('one\ntwo\n');
  });

  test('partial entries are written without a newline; malformed lines are skipped', async () => {
    const file = memoryFile(
      Buffer.from(cri('hel', 'P') + 'garbage\n' + cri('lo') + cri('panic: boom', 'F', 'stderr')),
    );
    expect(await tailCriLogContent(file, 80, 2048)).toBe('hello\npanic: boom\n');
  });

  test('only the last 80 lines count, even when they are short', async () => {
    let text = '';
    for (let i = 0; i < 100; i++) text += cri(`${i}`);
    const got = await tailCriLogContent(memoryFile(Buffer.from(text)), 80, 2048);
    expect(got.split('\n')[0]).toBe('20');
    expect(got.split('\n')).toHaveLength(81);
  });

  test('an overlong last line keeps its last 2048 bytes (a few chunks in memory, not the line)', async () => {
    const big = `${'a'.repeat(3_000_000)}THE END`;
    const file = memoryFile(Buffer.from(cri('before') + cri(big, 'F', 'stderr')));
    const got = await tailCriLogContent(file, 80, 2048);
    expect(got).toBe(`${big}\n`.slice(-2048));
  });

  test('a UTF-8 message is cut at a byte boundary like the kubelet buffer', async () => {
    const file = memoryFile(Buffer.from(cri('é'.repeat(2000))));
    const got = await tailCriLogContent(file, 80, 2048);
    expect(Buffer.byteLength(`${'é'.repeat(2000)}\n`)).toBeGreaterThan(2048);
    expect(got.endsWith('é\n')).toBe(true);
  });
});

describe('readLastStringFromContainerLog', () => {
  test('reads a real file through a FileHandle', async () => {
    const path = join(dir, '0.log');
    await writeFile(path, cri('x') + cri('exit 3'));
    expect(await readLastStringFromContainerLog(path, 80, 2048)).toBe('x\nexit 3\n');
    const fh = await open(path);
    try {
      expect(await findTailLineStart(randomAccessFile(fh), 1)).toBe(cri('x').length);
    } finally {
      await fh.close();
    }
  });

  test('a missing log gives the kubelet message prefix instead of throwing', async () => {
    const got = await readLastStringFromContainerLog(join(dir, 'missing.log'), 80, 2048);
    expect(got).toMatch(
      /^Error on reading termination message from logs: failed to open log file ".*missing\.log": /,
    );
  });
});

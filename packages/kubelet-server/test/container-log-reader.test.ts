// Upstream pkg/kubelet/kuberuntime/logs ReadLogs: tail from FindTailLineStartIndex, since
// filter, timestamps with 9 fractional digits, partial lines joined, limitBytes cut, follow
// across a rotation until the container stops; and a writer that stops reading holds the reader.
import { appendFile, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatLogTimestamp, readContainerLog } from '../src/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubelet-log-reader-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const line = (sec: number, stream: string, tag: string, text: string) =>
  `2024-05-01T10:00:${String(sec).padStart(2, '0')}.5Z ${stream} ${tag} ${text}\n`;

async function read(path: string, options: Parameters<typeof readContainerLog>[1]): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await readContainerLog(path, options, out, { isRunning: async () => false, pollMs: 5, statePeriodMs: 5 });
  return Buffer.concat(chunks).toString('utf8');
}

describe('readContainerLog', () => {
  it('writes both streams in order, joining partial entries, skipping malformed lines', async () => {
    const p = join(dir, '0.log');
    await writeFile(
      p,
      `${line(1, 'stdout', 'F', 'a')}${line(2, 'stderr', 'P', 'b1')}${line(2, 'stderr', 'F', 'b2')}garbage\n${line(3, 'stdout', 'F', 'c')}`,
    );
    expect(await read(p, {})).toBe('a\nb1b2\nc\n');
  });

  it('tails, filters by time, prefixes timestamps and cuts at limitBytes', async () => {
    const p = join(dir, '0.log');
    await writeFile(p, [1, 2, 3, 4].map((s) => line(s, 'stdout', 'F', `l${s}`)).join(''));
    expect(await read(p, { tailLines: 2 })).toBe('l3\nl4\n');
    expect(await read(p, { tailLines: 0 })).toBe('');
    expect(await read(p, { sinceNs: BigInt(Date.parse('2024-05-01T10:00:03Z')) * 1_000_000n })).toBe(
      'l3\nl4\n',
    );
    expect(await read(p, { timestamps: true, tailLines: 1 })).toBe('2024-05-01T10:00:04.500000000Z l4\n');
    expect(await read(p, { limitBytes: 5 })).toBe('l1\nl2');
  });

  it('renders timestamps with exactly nine fractional digits, keeping the zone', () => {
    expect(formatLogTimestamp('2024-05-01T10:00:00Z')).toBe('2024-05-01T10:00:00.000000000Z');
    expect(formatLogTimestamp('2024-05-01T10:00:00.123+02:00')).toBe('2024-05-01T10:00:00.123000000+02:00');
  });

  it('follows new lines and a rotation, and ends once the container stopped', async () => {
    const p = join(dir, '0.log');
    await writeFile(p, line(1, 'stdout', 'F', 'first'));
    let running = true;
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => {
      text += c.toString();
    });
    const done = readContainerLog(p, { follow: true }, out, {
      isRunning: async () => running,
      pollMs: 5,
      statePeriodMs: 5,
    });
    const until = async (s: string) => {
      for (let i = 0; i < 400 && !text.includes(s); i++) await new Promise((r) => setTimeout(r, 5));
      expect(text).toContain(s);
    };
    await until('first');
    await appendFile(p, line(2, 'stdout', 'F', 'second'));
    await until('second');
    await rename(p, `${p}.20240501-100003`);
    await writeFile(p, line(3, 'stdout', 'F', 'after-rotation'));
    await until('after-rotation');
    await appendFile(p, line(4, 'stdout', 'F', 'last'));
    running = false;
    await done;
    expect(text).toBe('first\nsecond\nafter-rotation\nlast\n');
  });

  it('stops reading the file while the writer is not drained (a client that stops reading)', async () => {
    const p = join(dir, '0.log');
    const big = line(1, 'stdout', 'F', 'x'.repeat(1000)).repeat(20_000); // ~20 MB
    await writeFile(p, big);
    // A writer that accepts 64 KiB and never drains: like a socket whose peer stopped reading.
    const stuck = new Writable({ highWaterMark: 64 * 1024, write: () => undefined });
    let bytesRead = 0;
    const ac = new AbortController();
    const done = readContainerLog(p, { follow: true }, stuck, {
      isRunning: async () => true,
      pollMs: 5,
      signal: ac.signal,
      onRead: (n) => {
        bytesRead += n;
      },
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(bytesRead).toBeLessThanOrEqual(2 * 64 * 1024);
    expect(stuck.writableLength).toBeLessThan(200 * 1024);
    ac.abort();
    await done;
  });
});

// The kubelet's atomic writer: `..<timestamp>` directory, `..data` swapped by one rename,
// user-visible symlinks into `..data`, no write for an unchanged payload, stale files removed,
// upstream's path validation, and a concurrent reader never sees a partial update.
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AtomicWriter,
  type FileProjection,
  timestampDirPrefix,
  VolumeError,
  validatePayloadPath,
} from '../src/index.js';
import { tempRoot } from './helpers.js';

const file = (text: string, mode = 0o644): FileProjection => ({ data: Buffer.from(text), mode });

let root: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(async () => {
  await root.cleanup();
});

describe('AtomicWriter', () => {
  it('publishes a timestamped directory through ..data and top-level symlinks', async () => {
    const clock = new FakeClock({ startMs: Date.UTC(2024, 0, 2, 3, 4, 5) });
    const w = new AtomicWriter(root.dir, { clock });
    const r = await w.write(
      new Map([
        ['a', file('A')],
        ['sub/b', file('B', 0o600)],
      ]),
    );
    expect(r.written).toBe(true);
    const entries = (await readdir(root.dir)).sort();
    const ts = entries.find((e) => e.startsWith('..2024'));
    expect(ts).toMatch(/^\.\.2024_01_02_03_04_05\.\d+$/);
    expect(entries).toEqual(['..data', ts, 'a', 'sub'].sort());
    expect(await readlink(join(root.dir, '..data'))).toBe(ts);
    expect(await readlink(join(root.dir, 'a'))).toBe('..data/a');
    expect(await readlink(join(root.dir, 'sub'))).toBe('..data/sub');
    expect(await readFile(join(root.dir, 'sub/b'), 'utf8')).toBe('B');
    expect((await stat(join(root.dir, 'sub/b'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(root.dir, 'a'))).mode & 0o777).toBe(0o644);
    expect((await stat(join(root.dir, ts ?? ''))).mode & 0o777).toBe(0o755);
  });

  it('names the directory as upstream formats time ("..2006_01_02_15_04_05.")', () => {
    expect(timestampDirPrefix(Date.UTC(2006, 0, 2, 15, 4, 5))).toBe('..2006_01_02_15_04_05.');
  });

  it('writes nothing for an unchanged payload', async () => {
    const w = new AtomicWriter(root.dir);
    await w.write(new Map([['a', file('A')]]));
    const before = await readlink(join(root.dir, '..data'));
    const r = await w.write(new Map([['a', file('A')]]));
    expect(r).toEqual({ written: false, removed: [] });
    expect(await readlink(join(root.dir, '..data'))).toBe(before);
  });

  it('swaps in a new directory on change, removes files that left and the old directory', async () => {
    const w = new AtomicWriter(root.dir);
    await w.write(
      new Map([
        ['a', file('A')],
        ['gone', file('G')],
        ['d/x', file('X')],
      ]),
    );
    const old = await readlink(join(root.dir, '..data'));
    const r = await w.write(
      new Map([
        ['a', file('A2')],
        ['d/y', file('Y')],
      ]),
    );
    expect(r.written).toBe(true);
    expect(r.removed).toEqual(['gone']);
    const now = await readlink(join(root.dir, '..data'));
    expect(now).not.toBe(old);
    expect((await readdir(root.dir)).sort()).toEqual(['..data', now, 'a', 'd'].sort());
    expect(await readFile(join(root.dir, 'a'), 'utf8')).toBe('A2');
    expect(await readdir(join(root.dir, 'd'))).toEqual(['y']);
  });

  it('writes when only a file was removed', async () => {
    const w = new AtomicWriter(root.dir);
    await w.write(
      new Map([
        ['a', file('A')],
        ['b', file('B')],
      ]),
    );
    const r = await w.write(new Map([['a', file('A')]]));
    expect(r).toEqual({ written: true, removed: ['b'] });
    await expect(lstat(join(root.dir, 'b'))).rejects.toThrow(/ENOENT/);
  });

  it('runs setPerms on the new directory before it is published', async () => {
    const w = new AtomicWriter(root.dir);
    let seen = '';
    await w.write(new Map([['a', file('A')]]), async (ts) => {
      seen = ts;
      await expect(lstat(join(root.dir, '..data'))).rejects.toThrow(/ENOENT/);
      expect(await readFile(join(root.dir, ts, 'a'), 'utf8')).toBe('A');
    });
    expect(await readlink(join(root.dir, '..data'))).toBe(seen);
  });

  it.each([
    ['', 'invalid path: must not be empty: ""'],
    ['/abs', 'invalid path: must be relative path: /abs'],
    ['a/../b', "invalid path: must not contain '..': a/../b"],
    ['..data', "invalid path: must not start with '..': ..data"],
    [`${'x'.repeat(256)}`, 'invalid path: filenames must be less than or equal to 255 characters'],
    ['x/'.repeat(2049), 'invalid path: must be less than or equal to 4096 characters'],
  ])('rejects the payload path %j as upstream', async (p, message) => {
    expect(validatePayloadPath(p)).toBe(message);
    const err = await new AtomicWriter(root.dir).write(new Map([[p, file('x')]])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VolumeError);
    expect((err as VolumeError).message).toBe(message);
  });

  it('accepts "..": only as a whole element it is refused; "..a" inside a path is fine', () => {
    expect(validatePayloadPath('a/..b')).toBeUndefined();
    expect(validatePayloadPath('..')).toBe("invalid path: must not contain '..': ..");
  });

  it('fails naming the target when it does not exist', async () => {
    const err = await new AtomicWriter(join(root.dir, 'missing'))
      .write(new Map([['a', file('A')]]))
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^Error creating atomic writer: .*ENOENT/);
  });

  // A reader's path walk (`nested` → `..data/nested` → `..<old ts>/nested/also`) can resolve
  // `..data` to the old directory just before the writer removes it; upstream's writer has the
  // same instant (it removes the old directory right after the rename). Such a read retries at
  // once and must then succeed: a file is never missing between versions, and never partial.
  it('a concurrent reader never sees a half-written file, nor a missing one on re-read', async () => {
    const w = new AtomicWriter(root.dir);
    const size = 256 * 1024;
    const payload = (v: number) =>
      new Map([
        ['big', file(String(v % 10).repeat(size))],
        ['nested/also', file(String(v % 10).repeat(size))],
      ]);
    await w.write(payload(0));
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      const fs = require('node:fs');
      const bad = []; let reads = 0;
      const until = Date.now() + workerData.ms;
      while (Date.now() < until) {
        for (const f of ['big', 'nested/also']) {
          let s;
          for (let attempt = 1; s === undefined; attempt++) {
            try { s = fs.readFileSync(workerData.dir + '/' + f, 'utf8'); }
            catch (e) { if (e.code !== 'ENOENT' || attempt === 3) { bad.push(f + ': ' + e.code); break; } }
          }
          if (s === undefined) continue;
          reads++;
          if (s.length !== workerData.size || s !== s[0].repeat(s.length)) bad.push(f + ': partial ' + s.length);
        }
      }
      parentPort.postMessage({ bad: bad.slice(0, 5), reads });`;
    const worker = new Worker(code, { eval: true, workerData: { dir: root.dir, ms: 1500, size } });
    const done = new Promise<{ bad: string[]; reads: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    let writes = 0;
    let finished = false;
    void done.then(() => {
      finished = true;
    });
    while (!finished) {
      writes++;
      await w.write(payload(writes));
    }
    const { bad, reads } = await done;
    await worker.terminate();
    expect(bad).toEqual([]);
    expect(writes).toBeGreaterThan(5);
    expect(reads).toBeGreaterThan(5);
  }, 20_000);
});

/**
 * The watch decoder against `JSON.parse` of the same text: one event of 1 KiB … 3 MiB fed in
 * 16 KiB chunks (the TLS record size, how a real watch body arrives). The decoder's cost
 * should stay linear in the event's size, within 2× of `JSON.parse` alone.
 */
import { describe, it } from 'vitest';
import { WatchDecoder } from '../src/index.js';

const CHUNK = 16 * 1024;
const SIZES = [1024, 16 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024, 3 * 1024 * 1024];

function eventOf(bytes: number): Buffer {
  // A pod-like object whose size is dominated by many small annotations (realistic JSON).
  const annotations: Record<string, string> = {};
  let size = 200;
  for (let i = 0; size < bytes; i++) {
    const key = `example.com/annotation-${i}`;
    const value = `value-${i}-${'x'.repeat(40)}`;
    annotations[key] = value;
    size += key.length + value.length + 6;
  }
  const event = {
    type: 'MODIFIED',
    object: { metadata: { name: 'big', namespace: 'default', annotations } },
  };
  return Buffer.from(`${JSON.stringify(event)}\n`);
}

function best(runs: number, fn: () => void): number {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    min = Math.min(min, Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return min;
}

describe('watch decoder', () => {
  it('decodes 1 KiB … 3 MiB events in 16 KiB chunks, next to JSON.parse', () => {
    const rows: string[] = [];
    for (const size of SIZES) {
      const bytes = eventOf(size);
      const text = bytes.toString('utf8');
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += CHUNK) chunks.push(bytes.subarray(i, i + CHUNK));
      const runs = size >= 1024 * 1024 ? 15 : 200;
      const decode = (): void => {
        const d = new WatchDecoder();
        let n = 0;
        for (const c of chunks) n += d.push(c).events.length;
        if (n !== 1) throw new Error(`decoded ${n} events`);
      };
      const parse = (): void => {
        const v = JSON.parse(text) as { type?: string };
        if (v.type !== 'MODIFIED') throw new Error('bad parse');
      };
      best(3, decode);
      best(3, parse);
      const ours = best(runs, decode);
      const ref = best(runs, parse);
      rows.push(
        `| ${(bytes.length / 1024).toFixed(0).padStart(5)} KiB | ${chunks.length.toString().padStart(4)} | ${ours.toFixed(3)} ms | ${ref.toFixed(3)} ms | ${(ours / ref).toFixed(2)}× |`,
      );
    }
    console.log(
      ['| event | chunks | WatchDecoder | JSON.parse | ratio |', '|---|---|---|---|---|', ...rows].join('\n'),
    );
  });
});

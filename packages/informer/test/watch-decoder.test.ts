import { describe, expect, it } from 'vitest';
import { WatchDecodeError, WatchDecoder } from '../src/index.js';

const line = (name: string) => `${JSON.stringify({ type: 'ADDED', object: { metadata: { name } } })}\n`;

describe('WatchDecoder', () => {
  it('decodes several events in one chunk and events split across chunks', () => {
    const d = new WatchDecoder();
    const text = line('a') + line('b') + line('c');
    const r1 = d.push(text.slice(0, text.length - 7));
    expect(r1.events.map((e) => e.object.metadata?.name)).toEqual(['a', 'b']);
    const r2 = d.push(text.slice(text.length - 7));
    expect(r2.events.map((e) => e.object.metadata?.name)).toEqual(['c']);
    expect(d.end().events).toEqual([]);
  });

  it('reassembles a multi-byte character cut between chunks', () => {
    const d = new WatchDecoder();
    const bytes = Buffer.from(line('żółw'));
    const names: string[] = [];
    for (let i = 0; i < bytes.length; i += 3) {
      for (const e of d.push(bytes.subarray(i, i + 3)).events) names.push(e.object.metadata?.name ?? '');
    }
    expect(names).toEqual(['żółw']);
  });

  it('skips blank lines and decodes a last line without a newline at end()', () => {
    const d = new WatchDecoder();
    expect(d.push(`\n\r\n${line('a').trim()}`).events).toEqual([]);
    expect(d.end().events.map((e) => e.object.metadata?.name)).toEqual(['a']);
  });

  it('returns the events before a malformed line, then the error, and stays failed', () => {
    const d = new WatchDecoder();
    const r = d.push(`${line('a')}{not json\n${line('b')}`);
    expect(r.events.map((e) => e.object.metadata?.name)).toEqual(['a']);
    expect(r.error).toBeInstanceOf(WatchDecodeError);
    expect(d.push(line('c')).error).toBeInstanceOf(WatchDecodeError);
  });

  it.each([
    ['a JSON array', '[1,2]'],
    ['an unknown type', '{"type":"WHAT","object":{}}'],
    ['a missing object', '{"type":"ADDED"}'],
    ['a scalar', '42'],
  ])('rejects %s', (_what, text) => {
    expect(new WatchDecoder().push(`${text}\n`).error).toBeInstanceOf(WatchDecodeError);
  });

  it('decodes a 1 MiB event split into 16 KiB chunks, with events around it, for every split point', () => {
    const big = {
      type: 'MODIFIED',
      object: { metadata: { name: 'big' }, data: { x: 'ż'.repeat(512 * 1024) } },
    };
    const text = `${line('before')}${JSON.stringify(big)}\n${line('after')}`;
    const bytes = Buffer.from(text);
    for (const size of [16 * 1024, 16 * 1024 + 1, 7]) {
      const d = new WatchDecoder();
      const out: string[] = [];
      for (let i = 0; i < bytes.length; i += size) {
        const r = d.push(bytes.subarray(i, i + size));
        expect(r.error).toBeUndefined();
        for (const e of r.events) out.push(e.object.metadata?.name ?? '');
        if (out.includes('big')) {
          const got = r.events.find((e) => e.object.metadata?.name === 'big');
          if (got) expect(got).toEqual(big);
        }
      }
      expect(out).toEqual(['before', 'big', 'after']);
      expect(d.end().events).toEqual([]);
    }
  });

  it('keeps a partial line across chunks without newlines and decodes it at end()', () => {
    const d = new WatchDecoder();
    const text = line('tail').trimEnd();
    for (const ch of text) expect(d.push(ch).events).toEqual([]);
    expect(d.end().events.map((e) => e.object.metadata?.name)).toEqual(['tail']);
  });

  it('a malformed line split across chunks is reported once its newline arrives', () => {
    const d = new WatchDecoder();
    expect(d.push('{"type":"ADDED",').error).toBeUndefined();
    expect(d.push('"object":').error).toBeUndefined();
    const r = d.push(`nope}\n${line('x')}`);
    expect(r.events).toEqual([]);
    expect(r.error).toBeInstanceOf(WatchDecodeError);
  });
});

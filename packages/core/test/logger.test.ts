import { consoleLogger, noopLogger } from '@nodeagent/core';
import { RecordingLogger } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';

function capture() {
  const lines: string[] = [];
  return { lines, stream: { write: (line: string) => lines.push(line) } };
}

describe('consoleLogger', () => {
  it('writes pino-shaped JSON lines with level numbers, time, bindings and fields', () => {
    const { lines, stream } = capture();
    const log = consoleLogger({ stream, now: () => 42, bindings: { app: 'x' } });
    log.info({ pods: 3 }, 'relisted');
    log.warn('plain');
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { level: 30, time: 42, app: 'x', pods: 3, msg: 'relisted' },
      { level: 40, time: 42, app: 'x', msg: 'plain' },
    ]);
    expect(lines.every((l) => l.endsWith('\n'))).toBe(true);
  });

  it('drops levels below the minimum', () => {
    const { lines, stream } = capture();
    const log = consoleLogger({ stream, level: 'warn' });
    log.trace('t');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['w', 'e']);
    expect(() => consoleLogger({ level: 'loud' as 'info' })).toThrow(RangeError);
  });

  it('child loggers add bindings, later ones winning, without changing the parent', () => {
    const { lines, stream } = capture();
    const root = consoleLogger({ stream, now: () => 0 });
    const child = root.child({ component: 'pleg', a: 1 }).child({ a: 2 });
    child.info({ b: 3 }, 'm');
    root.info('r');
    const [c, r] = lines.map((l) => JSON.parse(l));
    expect(c).toMatchObject({ component: 'pleg', a: 2, b: 3, msg: 'm' });
    expect(r).not.toHaveProperty('component');
  });

  it('writes a readable pretty format', () => {
    const { lines, stream } = capture();
    consoleLogger({ stream, format: 'pretty', now: () => 0 }).error({ pod: 'web', n: 2 }, 'failed');
    expect(lines[0]).toBe('1970-01-01T00:00:00.000Z ERROR failed pod="web" n=2\n');
  });

  it('never throws: cycles, bigints, errors and throwing getters', () => {
    const { lines, stream } = capture();
    const log = consoleLogger({ stream, now: () => 0 });
    const cyclic: Record<string, unknown> = { name: 'c' };
    cyclic.self = cyclic;
    const shared = { v: 1 };
    log.info({ cyclic, big: 10n ** 20n, err: new TypeError('boom'), a: shared, b: shared }, 'odd');
    const rec = JSON.parse(lines[0] as string);
    expect(rec.cyclic).toEqual({ name: 'c', self: '[Circular]' });
    expect(rec.big).toBe('100000000000000000000');
    expect(rec.err).toMatchObject({ type: 'TypeError', message: 'boom' });
    // An object seen twice but not in a cycle is written twice.
    expect(rec.b).toEqual({ v: 1 });

    const hostile = {
      get bad(): never {
        throw new Error('getter');
      },
    };
    expect(() => log.info(hostile, 'x')).not.toThrow();
    expect(() => log.info({ nested: hostile }, 'y')).not.toThrow();
    expect(() => consoleLogger({ stream, format: 'pretty' }).info(hostile, 'z')).not.toThrow();
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[1] as string)).toMatchObject({ level: 30, msg: 'x' });
  });

  it('noopLogger accepts calls and children', () => {
    expect(() => noopLogger.child({ a: 1 }).error({ x: 1 }, 'm')).not.toThrow();
  });
});

describe('RecordingLogger', () => {
  it('records level, message and fields with bindings, shared with children', () => {
    const log = new RecordingLogger({ app: 'x' });
    log.child({ component: 'q' }).warn({ key: 'a' }, 'slow key');
    log.info('hello');
    expect(log.records).toEqual([
      { level: 'warn', msg: 'slow key', fields: { app: 'x', component: 'q', key: 'a' } },
      { level: 'info', msg: 'hello', fields: { app: 'x' } },
    ]);
    expect(log.find('slow')).toHaveLength(1);
    expect(log.find('slow', 'info')).toHaveLength(0);
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidCriLogLineError, parseCriLog, parseCriLogEntry } from '../src/cri-log.js';

describe('CRI log format', () => {
  it('parses full and partial entries', () => {
    expect(parseCriLogEntry('2024-05-31T10:00:00.123456789Z stdout F hello world')).toEqual({
      timestamp: '2024-05-31T10:00:00.123456789Z',
      stream: 'stdout',
      partial: false,
      content: 'hello world',
    });
    expect(parseCriLogEntry('2024-05-31T10:00:00+02:00 stderr P  two  spaces')).toMatchObject({
      stream: 'stderr',
      partial: true,
      content: ' two  spaces',
    });
    expect(parseCriLogEntry('2024-05-31T10:00:00Z stdout F')).toMatchObject({ content: '' });
    expect(parseCriLogEntry('2024-05-31T10:00:00Z stdout F ')).toMatchObject({ content: '' });
  });

  it.each([
    ['garbage', 'expected'],
    ['yesterday stdout F x', 'bad timestamp'],
    ['2024-05-31T10:00:00Z stdin F x', 'bad stream'],
    ['2024-05-31T10:00:00Z stdout X x', 'bad tag'],
  ])('rejects %j', (line, reason) => {
    expect(() => parseCriLogEntry(line)).toThrow(InvalidCriLogLineError);
    expect(() => parseCriLogEntry(line)).toThrow(reason);
  });

  it('joins partial lines per stream, even when interleaved with the other stream', () => {
    const text = [
      '2024-05-31T10:00:00.000000001Z stdout P first ',
      '2024-05-31T10:00:00.000000002Z stderr F an error',
      '2024-05-31T10:00:00.000000003Z stdout P half ',
      '2024-05-31T10:00:00.000000004Z stdout F done',
      '2024-05-31T10:00:00.000000005Z stdout F next',
      '2024-05-31T10:00:00.000000006Z stderr P unterminated',
      '',
    ].join('\n');
    expect(parseCriLog(text)).toEqual([
      { timestamp: '2024-05-31T10:00:00.000000002Z', stream: 'stderr', content: 'an error' },
      { timestamp: '2024-05-31T10:00:00.000000001Z', stream: 'stdout', content: 'first half done' },
      { timestamp: '2024-05-31T10:00:00.000000005Z', stream: 'stdout', content: 'next' },
      { timestamp: '2024-05-31T10:00:00.000000006Z', stream: 'stderr', content: 'unterminated' },
    ]);
  });

  it('reports malformed lines through onInvalidLine and keeps the rest', () => {
    const bad: string[] = [];
    const lines = parseCriLog('oops\n2024-05-31T10:00:00Z stdout F ok\n', {
      onInvalidLine: (e) => bad.push(e.line),
    });
    expect(bad).toEqual(['oops']);
    expect(lines.map((l) => l.content)).toEqual(['ok']);
    expect(() => parseCriLog('oops\n')).toThrow(InvalidCriLogLineError);
  });
});

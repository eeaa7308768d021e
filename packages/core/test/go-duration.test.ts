import { formatGoDuration, InvalidDurationError, parseGoDuration } from '@nodeagent/core';
import { describe, expect, it } from 'vitest';

describe('formatGoDuration (Go time.Duration.String)', () => {
  it.each([
    [0, '0s'],
    [0.000001, '1ns'],
    [0.00075, '750ns'],
    [0.0015, '1.5µs'],
    [1, '1ms'],
    [250.5, '250.5ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [59_999, '59.999s'],
    [180_000, '3m0s'],
    [180_100, '3m0.1s'],
    [600_000, '10m0s'],
    [3_600_000, '1h0m0s'],
    [3_723_004, '1h2m3.004s'],
    [-1500, '-1.5s'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatGoDuration(ms)).toBe(text);
  });
});

describe('parseGoDuration (time.ParseDuration)', () => {
  it.each([
    ['0', 0],
    ['1m30s', 90_000],
    ['300ms', 300],
    ['-1.5h', -5_400_000],
    ['+2h45m', 9_900_000],
    ['1.5s', 1_500],
    ['.5s', 500],
    ['1.s', 1_000],
    ['10us', 0.01],
    ['10µs', 0.01],
    ['1500ns', 0.0015],
    ['1h1m1s1ms', 3_661_001],
  ])('reads %s as %s ms', (text, ms) => expect(parseGoDuration(text)).toBeCloseTo(ms, 9));

  it.each(['', '10', '1d', '1.s5', 'ms', '-', '1 s', 's1', '--1s', '.s'])('refuses %j', (text) => {
    expect(() => parseGoDuration(text)).toThrow(InvalidDurationError);
  });

  it('round-trips what formatGoDuration prints', () => {
    for (const ms of [0.000_75, 1.5, 250, 1_500, 180_100, 3_600_000, 93_784_005]) {
      expect(parseGoDuration(formatGoDuration(ms))).toBeCloseTo(ms, 6);
    }
  });
});

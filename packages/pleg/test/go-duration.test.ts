import { describe, expect, it } from 'vitest';
import { formatGoDuration } from '../src/index.js';

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

import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
} from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles per failure of a key, capped, independently per key', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    const seq = Array.from({ length: 12 }, () => limiter.when('a'));
    expect(seq).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]);
    expect(limiter.when('b')).toBe(1);
    expect(limiter.numRequeues('a')).toBe(12);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(1);
  });

  it('stays at the cap after thousands of failures (no overflow to Infinity or NaN)', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000);
    let last = 0;
    for (let i = 0; i < 5000; i++) last = limiter.when('a');
    expect(last).toBe(1_000_000);
    const zero = new ItemExponentialFailureRateLimiter<string>(0, 10);
    for (let i = 0; i < 2000; i++) expect(zero.when('a')).toBe(0);
  });

  it('rejects negative or NaN durations', () => {
    expect(() => new ItemExponentialFailureRateLimiter(-1, 10)).toThrow(RangeError);
    expect(() => new ItemExponentialFailureRateLimiter(1, Number.NaN)).toThrow(/maxMs/);
  });
});

describe('BucketRateLimiter', () => {
  it('allows a burst, then spaces retries at qps, refilling with time', () => {
    const clock = new FakeClock({ startMs: 0 });
    const limiter = new BucketRateLimiter<string>(10, 3, clock);
    expect([limiter.when('a'), limiter.when('b'), limiter.when('c')]).toEqual([0, 0, 0]);
    // Committed reservations queue up at 100 ms each.
    expect(limiter.when('d')).toBeCloseTo(100);
    expect(limiter.when('e')).toBeCloseTo(200);
    clock.advanceSync(1000); // 10 tokens refilled, minus the 2 owed, capped at burst 3
    expect([limiter.when('f'), limiter.when('g'), limiter.when('h')]).toEqual([0, 0, 0]);
    expect(limiter.when('i')).toBeCloseTo(100);
    expect(limiter.numRequeues('a')).toBe(0);
  });

  it('never limits with qps Infinity, and rejects bad parameters', () => {
    const limiter = new BucketRateLimiter<string>(Number.POSITIVE_INFINITY, 1);
    for (let i = 0; i < 10; i++) expect(limiter.when('a')).toBe(0);
    expect(() => new BucketRateLimiter(0, 1)).toThrow(RangeError);
    expect(() => new BucketRateLimiter(1, 0)).toThrow(/burst/);
    expect(() => new BucketRateLimiter(1, 1.5)).toThrow(/burst/);
  });
});

describe('ItemFastSlowRateLimiter', () => {
  it('is fast for maxFastAttempts retries, then slow, per key', () => {
    const limiter = new ItemFastSlowRateLimiter<string>(5, 10_000, 3);
    expect(Array.from({ length: 5 }, () => limiter.when('a'))).toEqual([5, 5, 5, 10_000, 10_000]);
    expect(limiter.when('b')).toBe(5);
    expect(limiter.numRequeues('a')).toBe(5);
    limiter.forget('a');
    expect(limiter.when('a')).toBe(5);
  });
});

describe('MaxOfRateLimiter and WithMaxWaitRateLimiter', () => {
  it('returns the longest delay and the largest retry count; forgets in all', () => {
    const limiter = new MaxOfRateLimiter<string>(
      new ItemFastSlowRateLimiter<string>(50, 10_000, 2),
      new ItemExponentialFailureRateLimiter<string>(10, 1000),
    );
    expect(Array.from({ length: 5 }, () => limiter.when('a'))).toEqual([50, 50, 10_000, 10_000, 10_000]);
    expect(limiter.numRequeues('a')).toBe(5);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(() => new MaxOfRateLimiter()).toThrow(RangeError);
  });

  it('caps another limiter', () => {
    const limiter = new WithMaxWaitRateLimiter(
      new ItemExponentialFailureRateLimiter<string>(100, 100_000),
      250,
    );
    expect(Array.from({ length: 4 }, () => limiter.when('a'))).toEqual([100, 200, 250, 250]);
    expect(limiter.numRequeues('a')).toBe(4);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('is MaxOf(ItemExponential 5 ms to 1000 s, Bucket 10 qps burst 100)', () => {
    const clock = new FakeClock({ startMs: 0 });
    const limiter = defaultControllerRateLimiter<string>(clock);
    expect(Array.from({ length: 4 }, () => limiter.when('a'))).toEqual([5, 10, 20, 40]);
    for (let i = 0; i < 30; i++) limiter.when('a');
    expect(limiter.when('a')).toBe(1_000_000); // the 1000 s cap
    // 35 tokens used; 65 distinct keys take the rest of the burst at their own 5 ms.
    for (let i = 0; i < 65; i++) expect(limiter.when(`k${i}`)).toBe(5);
    // The bucket is empty: the next new key waits for a token at 10 qps.
    expect(limiter.when('late')).toBeCloseTo(100);
  });
});

import { InvalidOptionsError, RateLimiterWaitError, TokenBucketRateLimiter } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';

/** Starts `n` waits and records the fake time at which each resolves. */
function startWaits(limiter: TokenBucketRateLimiter, clock: FakeClock, n: number, signal?: AbortSignal) {
  const doneAt: (number | undefined)[] = Array.from({ length: n }, () => undefined);
  const errors: unknown[] = [];
  const all = Array.from({ length: n }, (_, i) =>
    limiter.wait(signal).then(
      () => {
        doneAt[i] = clock.now();
      },
      (err: unknown) => {
        errors[i] = err;
      },
    ),
  );
  return { doneAt, errors, all: Promise.all(all) };
}

describe('TokenBucketRateLimiter (client-go flowcontrol / x/time/rate)', () => {
  it('starts full: a burst passes at once, then requests are paced 1/qps apart', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const limiter = new TokenBucketRateLimiter(10, 5, clock);
    const { doneAt, all } = startWaits(limiter, clock, 8);
    await clock.advance(0);
    expect(doneAt.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(doneAt.slice(5)).toEqual([undefined, undefined, undefined]);
    await clock.advance(1000);
    await all;
    expect(doneAt.slice(5)).toEqual([100, 200, 300]);
  });

  it('a wait with a token available sets no timer', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const limiter = new TokenBucketRateLimiter(1, 3, clock);
    await limiter.wait();
    await limiter.wait();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('refills at qps and caps the bucket at burst', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const limiter = new TokenBucketRateLimiter(2, 3, clock);
    for (let i = 0; i < 3; i++) expect(limiter.tryAccept()).toBe(true);
    expect(limiter.tryAccept()).toBe(false);
    await clock.advance(500); // one token at 2 qps
    expect(limiter.tryAccept()).toBe(true);
    expect(limiter.tryAccept()).toBe(false);
    await clock.advance(60_000); // far more than 3 tokens' worth: capped at burst
    expect(limiter.tokensAt()).toBe(3);
    for (let i = 0; i < 3; i++) expect(limiter.tryAccept()).toBe(true);
    expect(limiter.tryAccept()).toBe(false);
  });

  it('tryAccept takes nothing when it refuses, and refuses while tokens are reserved ahead', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const limiter = new TokenBucketRateLimiter(10, 1, clock);
    expect(limiter.tryAccept()).toBe(true);
    expect(limiter.tryAccept()).toBe(false);
    expect(limiter.tryAccept()).toBe(false);
    await clock.advance(100);
    expect(limiter.tryAccept()).toBe(true);
    // A waiter reserves the next token (due at 200): tryAccept at 150 must not take it.
    const waiting = limiter.wait();
    await clock.advance(50);
    expect(limiter.tryAccept()).toBe(false);
    await clock.advance(50);
    await waiting;
    expect(clock.now()).toBe(200);
  });

  it('an aborted waiter gives its token back: the next waiter does not wait for it', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const limiter = new TokenBucketRateLimiter(10, 1, clock);
    await limiter.wait();
    const controller = new AbortController();
    const aborted = limiter.wait(controller.signal); // due at 100
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    const next = limiter.wait();
    let doneAt: number | undefined;
    void next.then(() => {
      doneAt = clock.now();
    });
    await clock.advance(200);
    expect(doneAt).toBe(100);
  });

  it('an aborted waiter followed by later reservations restores nothing they count on', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const limiter = new TokenBucketRateLimiter(10, 1, clock);
    await limiter.wait();
    const controller = new AbortController();
    const first = limiter.wait(controller.signal); // due at 100
    const second = startWaits(limiter, clock, 2); // due at 200 and 300
    controller.abort();
    await expect(first).rejects.toMatchObject({ name: 'AbortError' });
    await clock.advance(300);
    await second.all;
    // The later reservations keep their times, and the bucket is empty at 300: the
    // cancelled token was already promised to them, so giving it back would hand it out twice.
    expect(second.doneAt).toEqual([200, 300]);
    expect(limiter.tryAccept()).toBe(false);
    await clock.advance(100);
    expect(limiter.tryAccept()).toBe(true);
  });

  it('a signal that already aborted rejects without taking a token', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const limiter = new TokenBucketRateLimiter(1, 1, clock);
    await expect(limiter.wait(AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    expect(limiter.tryAccept()).toBe(true);
  });

  it('qps Infinity never limits; qps 0 hands out burst tokens then refuses; burst 0 refuses', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const unlimited = new TokenBucketRateLimiter(Number.POSITIVE_INFINITY, 0, clock);
    for (let i = 0; i < 1000; i++) expect(unlimited.tryAccept()).toBe(true);
    await unlimited.wait();

    const once = new TokenBucketRateLimiter(0, 2, clock);
    await once.wait();
    expect(once.tryAccept()).toBe(true);
    await clock.advance(3_600_000);
    expect(once.tryAccept()).toBe(false);
    await expect(once.wait()).rejects.toBeInstanceOf(RateLimiterWaitError);

    const never = new TokenBucketRateLimiter(10, 0, clock);
    expect(never.tryAccept()).toBe(false);
    await expect(never.wait()).rejects.toThrow("rate: Wait(n=1) exceeds limiter's burst 0");
  });

  it('a clock that steps back refills nothing (refused attempts leave the last update in place, as x/time/rate)', async () => {
    let now = 10_000;
    const clock = { ...new FakeClock({ startMs: 0 }), now: () => now } as unknown as FakeClock;
    const limiter = new TokenBucketRateLimiter(1, 1, clock);
    expect(limiter.tryAccept()).toBe(true);
    now = 5_000;
    expect(limiter.tryAccept()).toBe(false);
    now = 6_000;
    expect(limiter.tryAccept()).toBe(false);
    now = 10_999;
    expect(limiter.tryAccept()).toBe(false);
    now = 11_000;
    expect(limiter.tryAccept()).toBe(true);
  });

  it('refuses a negative or NaN qps and a negative or fractional burst, naming the option', () => {
    expect(() => new TokenBucketRateLimiter(-1, 1)).toThrow(InvalidOptionsError);
    expect(() => new TokenBucketRateLimiter(Number.NaN, 1)).toThrow(/qps must be a number >= 0, got NaN/);
    expect(() => new TokenBucketRateLimiter(1, -1)).toThrow(/burst must be an integer >= 0, got -1/);
    expect(() => new TokenBucketRateLimiter(1, 1.5)).toThrow(/burst/);
  });
});

// The cost of a request rate limiter that is not exhausted (the agent's fast path: every API
// request awaits `wait()`): a TokenBucketRateLimiter with tokens to spare next to a bare
// `await` of a resolved promise (the floor) and a limiter with qps Infinity. Prints ns per
// call; asserts nothing about speed.

import { TokenBucketRateLimiter } from '@nodeagent/core';
import { it } from 'vitest';

const N = 1_000_000;

async function timeIt(label: string, step: () => Promise<void> | boolean): Promise<void> {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await step();
    best = Math.min(best, performance.now() - t0);
  }
  console.log(
    `${label.padEnd(58)} ${((best * 1e6) / N).toFixed(0).padStart(5)} ns/call (best of 3, ${N} calls)`,
  );
}

it('token bucket wait() with tokens available vs the floor', async () => {
  const resolved = Promise.resolve();
  await timeIt('floor: await Promise.resolve()', () => resolved);
  const unlimited = new TokenBucketRateLimiter(Number.POSITIVE_INFINITY, 0);
  await timeIt('TokenBucketRateLimiter(Infinity).wait()', () => unlimited.wait());
  // Enough refill that the bucket never empties: 1e12 qps, burst 1e6.
  const roomy = new TokenBucketRateLimiter(1e12, 1_000_000);
  await timeIt('TokenBucketRateLimiter(1e12 qps, burst 1e6).wait()', () => roomy.wait());
  const tries = new TokenBucketRateLimiter(1e12, 1_000_000);
  await timeIt('TokenBucketRateLimiter(1e12 qps, burst 1e6).tryAccept()', () => tries.tryAccept());
});

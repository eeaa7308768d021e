import { ItemExponentialFailureRateLimiter, type RateLimiter, WorkQueue } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';

function setup(rateLimiter?: RateLimiter<string>) {
  const clock = new FakeClock({ startMs: 0 });
  const queue = new WorkQueue<string>({ clock, ...(rateLimiter ? { rateLimiter } : {}) });
  return { clock, queue };
}

/** Drains the queue synchronously-ish: the keys currently queued, in order. */
async function drain(queue: WorkQueue<string>): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) {
    const item = await queue.get();
    if (item.shutdown) break;
    keys.push(item.key);
    queue.done(item.key);
  }
  return keys;
}

describe('work queue: addAfter', () => {
  it('adds the key only once its delay has passed on the clock', async () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 100);
    await clock.advance(99);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
  });

  it('adds at once for a delay <= 0', () => {
    const { queue } = setup();
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    expect(queue.len()).toBe(2);
  });

  it('keeps the earliest time when a waiting key is added again', async () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 100);
    queue.addAfter('a', 50); // earlier wins
    queue.addAfter('a', 200); // later is ignored
    await clock.advance(50);
    expect(await drain(queue)).toEqual(['a']);
    await clock.advance(500);
    expect(queue.len()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('releases waiting keys in ready-time order, ties in call order', async () => {
    const { clock, queue } = setup();
    queue.addAfter('c', 30);
    queue.addAfter('a', 10);
    queue.addAfter('b', 10);
    queue.addAfter('d', 20);
    await clock.advance(30);
    expect(await drain(queue)).toEqual(['a', 'b', 'd', 'c']);
  });

  it('a waiting key that is also pending is deduplicated when it becomes ready', async () => {
    const { clock, queue } = setup();
    queue.add('a');
    queue.addAfter('a', 10);
    await clock.advance(10);
    expect(queue.len()).toBe(1);
  });

  it('uses one clock timer however many keys wait', async () => {
    const { clock, queue } = setup();
    for (let i = 0; i < 100; i++) queue.addAfter(`k${i}`, 1000 - i);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(1000);
    expect(queue.len()).toBe(100);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('is ignored after shutdown, and shutdown drops waiting keys and their timer', async () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 10);
    queue.shutDown();
    queue.addAfter('b', 10);
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(100);
    expect(queue.len()).toBe(0);
  });
});

describe('work queue: addRateLimited, forget, numRequeues', () => {
  it('delays retries by the rate limiter and counts them until forgotten', async () => {
    const { clock, queue } = setup(new ItemExponentialFailureRateLimiter<string>(10, 1000));
    queue.addRateLimited('a'); // 10 ms
    expect(queue.numRequeues('a')).toBe(1);
    await clock.advance(9);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(await drain(queue)).toEqual(['a']);

    queue.addRateLimited('a'); // 20 ms
    await clock.advance(19);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
    expect(queue.numRequeues('a')).toBe(2);

    queue.forget('a');
    expect(queue.numRequeues('a')).toBe(0);
    expect(queue.len()).toBe(1); // forget does not remove the key
  });

  it('uses client-go default limits when none is given (5 ms first retry)', async () => {
    const { clock, queue } = setup();
    queue.addRateLimited('a');
    await clock.advance(4);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
  });

  it('does not consult the rate limiter after shutdown', () => {
    const { queue } = setup(new ItemExponentialFailureRateLimiter<string>(10, 1000));
    queue.shutDown();
    queue.addRateLimited('a');
    expect(queue.numRequeues('a')).toBe(0);
  });
});

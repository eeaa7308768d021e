import { realClock } from '@nodeagent/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// vitest's fake timers stand in for Node's here, so the 24.8-day limit is checked without waiting.
describe('realClock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits the full delay past Node timer limit (2^31-1 ms) instead of firing after 1 ms', () => {
    let fired = false;
    const days30 = 30 * 24 * 3600 * 1000;
    realClock.setTimeout(() => {
      fired = true;
    }, days30);
    vi.advanceTimersByTime(days30 - 1);
    expect(fired).toBe(false);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(true);
  });

  it('cancels long timers between chunks and repeats intervals until cancelled', () => {
    let n = 0;
    const long = realClock.setTimeout(() => n--, 2 ** 31 + 10);
    vi.advanceTimersByTime(2 ** 31);
    long.cancel();
    vi.advanceTimersByTime(100);
    expect(n).toBe(0);
    const interval = realClock.setInterval(() => n++, 100).unref();
    vi.advanceTimersByTime(350);
    interval.cancel();
    vi.advanceTimersByTime(1000);
    expect(n).toBe(3);
  });

  it('sleep resolves after the delay and rejects on abort', async () => {
    const done = realClock.sleep(50);
    vi.advanceTimersByTime(50);
    await done;
    const ac = new AbortController();
    const sleeping = realClock.sleep(50, ac.signal);
    ac.abort();
    await expect(sleeping).rejects.toMatchObject({ name: 'AbortError' });
  });
});

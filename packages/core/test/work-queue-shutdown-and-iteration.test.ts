import { InvalidOptionsError, noopWorkQueueMetricsProvider, WorkQueue } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('work queue: shutdown', () => {
  it('wakes waiting workers with shutdown', async () => {
    const queue = new WorkQueue<string>({ clock: new FakeClock() });
    const pending = [queue.get(), queue.get()];
    queue.shutDown();
    expect(await Promise.all(pending)).toEqual([
      { key: undefined, shutdown: true },
      { key: undefined, shutdown: true },
    ]);
    expect(queue.shuttingDown()).toBe(true);
  });

  it('ignores adds after shutdown but still hands out keys queued before it', async () => {
    const queue = new WorkQueue<string>({ clock: new FakeClock() });
    queue.add('a');
    queue.shutDown();
    queue.add('b');
    expect(await queue.get()).toEqual({ key: 'a', shutdown: false });
    expect(await queue.get()).toEqual({ key: undefined, shutdown: true });
  });

  it('still requeues a key re-added before shutdown when its worker finishes', async () => {
    const queue = new WorkQueue<string>({ clock: new FakeClock() });
    queue.add('a');
    await queue.get();
    queue.add('a');
    queue.shutDown();
    queue.done('a');
    expect(await queue.get()).toEqual({ key: 'a', shutdown: false });
  });

  it('shutDownWithDrain resolves only after every key handed out is done', async () => {
    const queue = new WorkQueue<string>({ clock: new FakeClock() });
    queue.add('a');
    queue.add('b');
    await queue.get();
    await queue.get();
    let drained = false;
    const drain = queue.shutDownWithDrain().then(() => {
      drained = true;
    });
    queue.done('a');
    await tick();
    expect(drained).toBe(false);
    queue.done('b');
    await drain;
    expect(drained).toBe(true);
  });

  it('shutDownWithDrain resolves at once when nothing is being processed', async () => {
    const queue = new WorkQueue<string>({ clock: new FakeClock() });
    await queue.shutDownWithDrain();
    expect(queue.shuttingDown()).toBe(true);
  });

  it('shutDown ends a pending shutDownWithDrain', async () => {
    const queue = new WorkQueue<string>({ clock: new FakeClock() });
    queue.add('a');
    await queue.get();
    const drain = queue.shutDownWithDrain();
    queue.shutDown();
    await drain;
  });
});

describe('work queue: async iteration', () => {
  it('workers share keys, never run one key twice at once, and stop on shutdown', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue<string>({ clock });
    const seen: string[] = [];
    const active = new Set<string>();
    const worker = async (): Promise<void> => {
      for await (const key of queue) {
        try {
          expect(active.has(key)).toBe(false);
          active.add(key);
          seen.push(key);
          await clock.sleep(10);
        } finally {
          active.delete(key);
          queue.done(key);
        }
      }
    };
    const workers = Promise.all([worker(), worker()]);
    // The first 'a' goes straight to a waiting worker, so the second add marks it dirty:
    // it runs again after the first run is done, not in parallel.
    for (const k of ['a', 'b', 'c', 'a']) queue.add(k);
    await clock.advance(50);
    queue.shutDown();
    await workers;
    expect(seen).toEqual(['a', 'b', 'c', 'a']);
  });

  it('keys(signal) rejects with the abort reason', async () => {
    const queue = new WorkQueue<string>({ clock: new FakeClock() });
    const ac = new AbortController();
    const run = (async () => {
      for await (const key of queue.keys(ac.signal)) queue.done(key);
    })();
    queue.add('a');
    await tick();
    ac.abort(new Error('stopping'));
    await expect(run).rejects.toThrow('stopping');
  });
});

describe('work queue: options', () => {
  it('rejects metrics without a name', () => {
    expect(() => new WorkQueue<string>({ metrics: noopWorkQueueMetricsProvider })).toThrow(
      InvalidOptionsError,
    );
  });

  it('accepts only value-comparable keys (checked by tsc)', () => {
    // @ts-expect-error objects compare by identity, so they are not work queue keys
    const objects = new WorkQueue<{ id: string }>();
    const numbers = new WorkQueue<number>();
    expect(objects.len() + numbers.len()).toBe(0);
  });

  it('starts no timer when constructed', () => {
    const clock = new FakeClock();
    new WorkQueue<string>({ clock, name: 'x', metrics: noopWorkQueueMetricsProvider });
    expect(clock.pendingTimers()).toBe(0);
  });
});

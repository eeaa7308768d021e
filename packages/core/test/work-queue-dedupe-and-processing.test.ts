import { WorkQueue } from '@nodeagent/core';
import { FakeClock, RecordingLogger } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';

function newQueue(): WorkQueue<string> {
  return new WorkQueue<string>({ clock: new FakeClock() });
}

async function getKey(queue: WorkQueue<string>): Promise<string> {
  const item = await queue.get();
  if (item.shutdown) throw new Error('unexpected shutdown');
  return item.key;
}

describe('work queue: dirty and processing sets', () => {
  it('hands keys out in FIFO order', async () => {
    const queue = newQueue();
    queue.add('a');
    queue.add('b');
    queue.add('c');
    expect([await getKey(queue), await getKey(queue), await getKey(queue)]).toEqual(['a', 'b', 'c']);
  });

  it('collapses adds of a pending key into one entry', async () => {
    const queue = newQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.len()).toBe(2);
    expect(await getKey(queue)).toBe('a');
    expect(await getKey(queue)).toBe('b');
    expect(queue.len()).toBe(0);
  });

  it('compares number keys by value', async () => {
    const queue = new WorkQueue<number>({ clock: new FakeClock() });
    queue.add(1);
    queue.add(1);
    queue.add(2);
    expect(queue.len()).toBe(2);
  });

  it('does not hand a key being processed to a second worker; requeues it after done', async () => {
    const queue = newQueue();
    queue.add('a');
    expect(await getKey(queue)).toBe('a');
    queue.add('a'); // re-added while processing
    expect(queue.len()).toBe(0);
    let second: string | undefined;
    const waiting = getKey(queue).then((k) => {
      second = k;
    });
    await new Promise((r) => setImmediate(r));
    expect(second).toBeUndefined();
    queue.done('a');
    await waiting;
    expect(second).toBe('a');
  });

  it('re-added while processing collapses repeated adds into one requeue', async () => {
    const queue = newQueue();
    queue.add('a');
    await getKey(queue);
    queue.add('a');
    queue.add('a');
    queue.done('a');
    expect(queue.len()).toBe(1);
    await getKey(queue);
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  it('does not requeue a key that was not re-added', async () => {
    const queue = newQueue();
    queue.add('a');
    await getKey(queue);
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  it('hands a key added later to the longest waiting worker first', async () => {
    const queue = newQueue();
    const order: string[] = [];
    const w1 = getKey(queue).then((k) => order.push(`w1:${k}`));
    const w2 = getKey(queue).then((k) => order.push(`w2:${k}`));
    queue.add('x');
    queue.add('y');
    await Promise.all([w1, w2]);
    expect(order).toEqual(['w1:x', 'w2:y']);
  });

  it('logs and ignores done() for a key that is not being processed', async () => {
    const logger = new RecordingLogger();
    const queue = new WorkQueue<string>({ clock: new FakeClock(), logger, name: 'q' });
    queue.add('a');
    queue.done('a'); // pending, not processing
    expect(queue.len()).toBe(1);
    expect(logger.find('not being processed', 'warn')).toHaveLength(1);
    expect(logger.records[0]?.fields).toMatchObject({ key: 'a', component: 'workqueue', queue: 'q' });
    // A double done must not duplicate the pending entry.
    await getKey(queue);
    queue.add('a');
    queue.done('a');
    queue.done('a');
    expect(queue.len()).toBe(1);
  });

  it('get(signal) rejects on abort without taking a key, and the key goes to the next worker', async () => {
    const queue = newQueue();
    const ac = new AbortController();
    const aborted = queue.get(ac.signal);
    ac.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    queue.add('a');
    expect(queue.len()).toBe(1);
    expect(await getKey(queue)).toBe('a');
  });

  it('get with an already aborted signal rejects at once', async () => {
    const queue = newQueue();
    queue.add('a');
    await expect(queue.get(AbortSignal.abort(new Error('stop')))).rejects.toThrow('stop');
    expect(queue.len()).toBe(1);
  });
});

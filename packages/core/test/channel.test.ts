import { Channel, ChannelClosedError, InvalidOptionsError } from '@nodeagent/core';
import { describe, expect, it } from 'vitest';

describe('Channel', () => {
  it('delivers values in order to one consumer and ends after close', async () => {
    const ch = new Channel<number>();
    ch.send(1);
    ch.send(2);
    ch.close();
    expect(ch.send(3)).toBe(false);
    const seen: number[] = [];
    for await (const v of ch) seen.push(v);
    expect(seen).toEqual([1, 2]);
  });

  it('hands a value straight to a waiting receiver, so the buffer stays empty', async () => {
    const ch = new Channel<string>({ capacity: 1 });
    const next = ch.receive();
    expect(ch.send('a')).toBe(true);
    expect(ch.length).toBe(0);
    await expect(next).resolves.toBe('a');
  });

  it('drops and counts sends to a full bounded channel', () => {
    const ch = new Channel<number>({ capacity: 2 });
    expect([ch.send(1), ch.send(2), ch.send(3)]).toEqual([true, true, false]);
    expect(ch.full).toBe(true);
    expect(ch.dropped).toBe(1);
    expect(ch.tryReceive()).toBe(1);
    expect(ch.send(4)).toBe(true);
    expect([ch.tryReceive(), ch.tryReceive(), ch.tryReceive()]).toEqual([2, 4, undefined]);
  });

  it('gives each value to exactly one of several receivers', async () => {
    const ch = new Channel<number>();
    const a = ch.receive();
    const b = ch.receive();
    ch.send(1);
    ch.send(2);
    expect(await Promise.all([a, b])).toEqual([1, 2]);
  });

  it('rejects a waiting receive with the abort reason and forgets the waiter', async () => {
    const ch = new Channel<number>();
    const controller = new AbortController();
    const waiting = ch.receive(controller.signal);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    ch.send(7);
    expect(ch.tryReceive()).toBe(7);
  });

  it('fails receivers with the error given to fail after the buffered values', async () => {
    const ch = new Channel<number>();
    ch.send(1);
    ch.fail(new Error('watch broke'));
    const it = ch[Symbol.asyncIterator]();
    expect(await it.next()).toEqual({ value: 1, done: false });
    await expect(it.next()).rejects.toThrow('watch broke');
  });

  it('wakes every waiting receiver on close', async () => {
    const ch = new Channel<number>();
    const a = ch.receive();
    const b = ch.receive();
    ch.close();
    await expect(a).rejects.toBeInstanceOf(ChannelClosedError);
    await expect(b).rejects.toBeInstanceOf(ChannelClosedError);
  });

  it('receiveAll ends quietly when its signal aborts', async () => {
    const ch = new Channel<number>();
    const controller = new AbortController();
    const seen: number[] = [];
    const done = (async () => {
      for await (const v of ch.receiveAll(controller.signal)) seen.push(v);
    })();
    ch.send(1);
    await new Promise((r) => setImmediate(r));
    controller.abort();
    await done;
    expect(seen).toEqual([1]);
  });

  it('keeps order across buffer compaction', () => {
    const ch = new Channel<number>();
    for (let i = 0; i < 5000; i++) ch.send(i);
    const out: number[] = [];
    for (let i = 0; i < 3000; i++) out.push(ch.tryReceive() as number);
    for (let i = 5000; i < 6000; i++) ch.send(i);
    for (let v = ch.tryReceive(); v !== undefined; v = ch.tryReceive()) out.push(v);
    expect(out).toEqual(Array.from({ length: 6000 }, (_, i) => i));
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses capacity %s', (capacity) => {
    expect(() => new Channel({ capacity })).toThrow(InvalidOptionsError);
  });
});

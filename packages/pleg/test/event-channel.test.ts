import { describe, expect, it } from 'vitest';
import { PlegEventChannel, type PodLifecycleEvent } from '../src/index.js';

const ev = (n: number): PodLifecycleEvent => ({ id: `pod-${n}`, type: 'ContainerStarted', data: `c${n}` });

describe('PlegEventChannel', () => {
  it('buffers up to capacity, then drops and counts', () => {
    const channel = new PlegEventChannel(3);
    expect([1, 2, 3, 4, 5].map((n) => channel.send(ev(n)))).toEqual([true, true, true, false, false]);
    expect(channel.length).toBe(3);
    expect(channel.full).toBe(true);
    expect(channel.dropped).toBe(2);
    expect([channel.tryReceive(), channel.tryReceive()].map((e) => e?.id)).toEqual(['pod-1', 'pod-2']);
    expect(channel.send(ev(6))).toBe(true);
    expect(channel.length).toBe(2);
  });

  it('defaults to the kubelet capacity of 1000 and rejects nonsense', () => {
    expect(new PlegEventChannel().capacity).toBe(1000);
    expect(() => new PlegEventChannel(0)).toThrow(RangeError);
  });

  it('hands events to waiting receivers directly, each event to one receiver', async () => {
    const channel = new PlegEventChannel(1);
    const a = channel.receive();
    const b = channel.receive();
    channel.send(ev(1));
    channel.send(ev(2));
    channel.send(ev(3));
    expect([(await a).id, (await b).id]).toEqual(['pod-1', 'pod-2']);
    expect(channel.length).toBe(1);
    expect(channel.dropped).toBe(0);
  });

  it('receiveAll yields in order and ends when the signal aborts', async () => {
    const channel = new PlegEventChannel(10);
    const controller = new AbortController();
    const seen: string[] = [];
    const done = (async () => {
      for await (const e of channel.receiveAll(controller.signal)) {
        seen.push(e.id);
        if (seen.length === 3) controller.abort();
      }
    })();
    for (const n of [1, 2, 3, 4]) channel.send(ev(n));
    await done;
    expect(seen).toEqual(['pod-1', 'pod-2', 'pod-3']);
    expect(channel.length).toBe(1);
  });

  it('a receiver aborted while waiting does not swallow the next event', async () => {
    const channel = new PlegEventChannel(10);
    const controller = new AbortController();
    const r = channel.receive(controller.signal);
    controller.abort();
    await expect(r).rejects.toThrow();
    channel.send(ev(1));
    expect(channel.tryReceive()?.id).toBe('pod-1');
  });
});

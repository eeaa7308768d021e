// The bounded queue (recording never waits; the newest event is dropped when full) and
// upstream's retries (12 tries, the first sleep a random part of 10 s), in fake time.

import { InvalidOptionsError } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { CoreEvent } from '../src/event.js';
import { EventRecorder, EventSinkError, nodeReference, podReference } from '../src/index.js';
import type { EventSink } from '../src/sink.js';
import { FakeEventSink } from '../src/testing.js';

const pod = { metadata: { name: 'web', namespace: 'shop', uid: 'u1' } };
const transport = (): Error => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

function setup(extra: Partial<ConstructorParameters<typeof EventRecorder>[0]> = {}) {
  const clock = new FakeClock();
  const sink = new FakeEventSink();
  const recorder = new EventRecorder({ sink, clock, host: 'node-1', random: () => 0.25, ...extra });
  return { clock, sink, recorder };
}

/** Resolves in the event loop's check phase, after the recorder's writer has started. */
const checkPhase = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A sink whose calls hang until released. */
class HangingSink implements EventSink {
  readonly started: CoreEvent[] = [];
  #release: (() => void)[] = [];
  create(event: CoreEvent, signal?: AbortSignal): Promise<CoreEvent> {
    this.started.push(event);
    return new Promise((resolve, reject) => {
      this.#release.push(() => resolve(event));
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  }
  patch(event: CoreEvent): Promise<CoreEvent> {
    return this.create(event);
  }
  releaseAll(): void {
    for (const r of this.#release.splice(0)) r();
  }
}

describe('bounded queue', () => {
  it('never blocks the caller: with the API server hanging, 2000 events return at once, 1000 wait, the rest are dropped and counted', async () => {
    const sink = new HangingSink();
    const registry = new promClient.Registry();
    const recorder = new EventRecorder({ sink, clock: new FakeClock(), metrics: { registry, promClient } });
    await recorder.start();
    for (let i = 0; i < 2000; i++) {
      recorder.event(podReference({ metadata: { name: `p${i}`, namespace: 'ns' } }), 'Normal', 'R', 'm');
    }
    // The writer starts after the caller's turn: 1000 were queued, the rest dropped; now one is
    // in flight and 999 wait behind it.
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(sink.started).toHaveLength(0);
    await checkPhase();
    expect(sink.started).toHaveLength(1);
    expect(recorder.pending).toBe(1000);
    expect(recorder.dropped().get('queue_full')).toBe(1000);
    const text = await registry.metrics();
    expect(text).toContain('event_recorder_dropped_total{reason="queue_full"} 1000');
    expect(text).toContain('event_recorder_pending_events 1000');
    await recorder.stop();
    expect(recorder.pending).toBe(0);
    expect(recorder.dropped().get('shutdown')).toBe(1000);
  });

  it('holds events recorded before start (up to the bound) and writes them in order once started', async () => {
    const { recorder, sink } = setup({ maxQueuedEvents: 3 });
    for (let i = 0; i < 5; i++) recorder.event(podReference(pod), 'Normal', `R${i}`, `m${i}`);
    expect(recorder.pending).toBe(3);
    expect(recorder.dropped().get('queue_full')).toBe(2);
    await recorder.start();
    await recorder.flush();
    expect(sink.list().map((e) => e.reason)).toEqual(['R0', 'R1', 'R2']);
    expect(recorder.pending).toBe(0);
  });

  it('logs and counts bad input instead of throwing', async () => {
    const { recorder, sink } = setup();
    await recorder.start();
    recorder.event({ metadata: { name: 'x' } }, 'Normal', 'R', 'no kind');
    recorder.event({ kind: 'Pod' }, 'Normal', 'R', 'no name');
    recorder.event(podReference(pod), 'Info' as 'Normal', 'R', 'bad type');
    await recorder.flush();
    expect(sink.list()).toHaveLength(0);
    expect(recorder.dropped().get('invalid')).toBe(3);
  });

  it('refuses impossible options with InvalidOptionsError', () => {
    const sink = new FakeEventSink();
    expect(() => new EventRecorder({ sink, maxQueuedEvents: 0 })).toThrow(InvalidOptionsError);
    expect(() => new EventRecorder({ sink, maxTries: 1.5 })).toThrow(/maxTries/);
    expect(() => new EventRecorder({ sink, correlator: { qps: 0 } })).toThrow(/correlator.qps/);
  });
});

describe("write rate (the kubelet's event QPS 50, burst 100)", () => {
  it('writes 100 at once, then one every 20 ms; events wait in the queue, none is dropped', async () => {
    const { recorder, sink, clock } = setup();
    await recorder.start();
    for (let i = 0; i < 110; i++) {
      recorder.event(podReference({ metadata: { name: `p${i}`, namespace: 'ns' } }), 'Normal', 'R', 'm');
    }
    await clock.advance(0);
    expect(sink.list()).toHaveLength(100);
    await clock.advance(19);
    expect(sink.list()).toHaveLength(100);
    await clock.advance(1);
    expect(sink.list()).toHaveLength(101);
    await clock.advance(180);
    expect(sink.list()).toHaveLength(110);
    expect(recorder.dropped().size).toBe(0);
  });

  it('writeQps Infinity turns the limit off', async () => {
    const { recorder, sink, clock } = setup({ writeQps: Number.POSITIVE_INFINITY, writeBurst: 1 });
    await recorder.start();
    for (let i = 0; i < 200; i++) {
      recorder.event(podReference({ metadata: { name: `p${i}`, namespace: 'ns' } }), 'Normal', 'R', 'm');
    }
    await clock.advance(0);
    expect(sink.list()).toHaveLength(200);
  });
});

describe('retries', () => {
  it('retries a transport error after a random part of 10 s, then every 10 s, and gives up after 12 tries', async () => {
    const { recorder, sink, clock } = setup();
    sink.failNext(12, transport);
    await recorder.start();
    recorder.event(podReference(pod), 'Normal', 'Pulled', 'm');
    await clock.advance(0);
    expect(sink.calls).toHaveLength(1);
    await clock.advance(2_499);
    expect(sink.calls).toHaveLength(1);
    await clock.advance(1); // 0.25 × 10 s
    expect(sink.calls).toHaveLength(2);
    await clock.advance(9_999);
    expect(sink.calls).toHaveLength(2);
    await clock.advance(1);
    expect(sink.calls).toHaveLength(3);
    await clock.advance(9 * 10_000);
    expect(sink.calls).toHaveLength(12);
    await clock.advance(60_000);
    expect(sink.calls).toHaveLength(12);
    expect(recorder.dropped().get('retries_exhausted')).toBe(1);
    expect(sink.list()).toHaveLength(0);
  });

  it('writes the event when the server comes back within the tries (500, 503, 429, 409 Conflict, dropped connection)', async () => {
    const { recorder, sink, clock } = setup();
    sink.failNext(1, () => new EventSinkError(500, 'InternalError', 'boom'));
    sink.failNext(1, () => new EventSinkError(503, 'ServiceUnavailable', 'later'));
    sink.failNext(1, () => new EventSinkError(429, 'TooManyRequests', 'slow down'));
    sink.failNext(1, () => new EventSinkError(409, 'Conflict', 'try again'));
    sink.failNext(1, transport);
    await recorder.start();
    recorder.event(podReference(pod), 'Normal', 'Pulled', 'm');
    await clock.advance(60_000);
    expect(sink.list()).toHaveLength(1);
    expect(sink.calls).toHaveLength(6);
    expect(recorder.dropped().size).toBe(0);
  });

  it('takes 409 AlreadyExists as written (an earlier try landed) and does not retry a 4xx refusal', async () => {
    const { recorder, sink, clock } = setup();
    sink.failNext(1, () => new EventSinkError(409, 'AlreadyExists', 'exists'));
    sink.failNext(1, () => new EventSinkError(422, 'Invalid', 'bad'));
    await recorder.start();
    recorder.event(podReference(pod), 'Normal', 'A', 'first');
    recorder.event(podReference(pod), 'Normal', 'B', 'second');
    await clock.advance(60_000);
    expect(sink.calls).toHaveLength(2);
    expect(recorder.dropped()).toEqual(new Map([['rejected', 1]]));
  });

  it('writes the next events after one exhausted its tries, in order', async () => {
    const { recorder, sink, clock } = setup({ maxTries: 2, retrySleepMs: 1_000 });
    sink.failNext(2, transport);
    await recorder.start();
    recorder.event(nodeReference('node-1'), 'Normal', 'Starting', 'Starting kubelet.');
    recorder.event(nodeReference('node-1'), 'Normal', 'NodeReady', 'Node node-1 status is now: NodeReady');
    await clock.advance(5_000);
    expect(sink.list().map((e) => e.reason)).toEqual(['NodeReady']);
    expect(recorder.dropped().get('retries_exhausted')).toBe(1);
  });

  it('stop() ends a retry sleep at once and drops what is left', async () => {
    const { recorder, sink, clock } = setup();
    sink.failNext(100, transport);
    await recorder.start();
    recorder.event(podReference(pod), 'Normal', 'A', 'a');
    recorder.event(podReference(pod), 'Normal', 'B', 'b');
    await clock.advance(0);
    await recorder.stop();
    expect(recorder.pending).toBe(0);
    expect(recorder.dropped().get('shutdown')).toBe(2);
    recorder.event(podReference(pod), 'Normal', 'C', 'c');
    expect(recorder.dropped().get('shutdown')).toBe(3);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('flush(signal) gives up when the signal aborts', async () => {
    const sink = new HangingSink();
    const recorder = new EventRecorder({ sink, clock: new FakeClock() });
    await recorder.start();
    recorder.event(podReference(pod), 'Normal', 'A', 'a');
    const ac = new AbortController();
    const flushed = recorder.flush(ac.signal);
    ac.abort(new Error('enough'));
    await expect(flushed).rejects.toThrow('enough');
    await checkPhase();
    expect(sink.started).toHaveLength(1);
    sink.releaseAll();
    await recorder.flush();
    await recorder.stop();
  });
});

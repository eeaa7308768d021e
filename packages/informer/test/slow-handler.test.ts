/**
 * Slow handlers: a synchronous handler that takes milliseconds per event must not hold the
 * event loop (delivery yields to I/O, so the store keeps up), an async one's backlog is
 * visible (`pending`, `informer_handler_pending`), and `maxPending` bounds it by holding
 * the watch, losing nothing.
 */
import { FakeClock } from '@nodeagent/core/testing';
import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { type KubeObject, SharedInformer } from '../src/index.js';
import { FakeListerWatcher } from '../src/testing.js';

const pod = (name: string, v = 0): KubeObject => ({
  metadata: { name, namespace: 'default', labels: { v: String(v) } },
});
const tick = () => new Promise<void>((r) => setImmediate(r));
async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await tick();
  }
}
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // burn CPU like a slow synchronous handler
  }
}
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function make() {
  const lw = new FakeListerWatcher();
  const registry = new promClient.Registry();
  const informer = new SharedInformer(lw, {
    clock: new FakeClock(),
    random: () => 0,
    name: 'pods',
    metrics: { registry, promClient },
  });
  const pendingMetric = async (handler: string) =>
    (await registry.getSingleMetric('informer_handler_pending')?.get())?.values.find(
      (v) => v.labels.handler === handler,
    )?.value;
  return { lw, informer, pendingMetric };
}

describe('slow handlers', () => {
  it('a synchronous 2 ms-per-event handler does not hold the event loop: the store is ahead of it', async () => {
    const { lw, informer } = make();
    let handled = 0;
    informer.addEventHandler({
      onAdd: () => {
        busy(2);
        handled++;
      },
    });
    await informer.start();
    for (let i = 0; i < 100; i++) lw.upsert(pod(`p${i}`));
    // A macrotask scheduled now runs as soon as delivery yields, long before 100 × 2 ms.
    const atProbe = await new Promise<{ stored: number; handled: number }>((resolve) =>
      setImmediate(() => resolve({ stored: informer.lister.list().length, handled })),
    );
    expect(atProbe.stored).toBe(100);
    expect(atProbe.handled).toBeLessThan(20);
    await until(() => handled === 100);
    await informer.stop();
  });

  it("an async handler's backlog is exposed as `pending` and as informer_handler_pending", async () => {
    const { lw, informer, pendingMetric } = make();
    const gate = deferred();
    const seen: string[] = [];
    const reg = informer.addEventHandler(
      {
        onAdd: async (o) => {
          await gate.promise;
          seen.push(o.metadata?.name ?? '');
        },
      },
      { name: 'slow' },
    );
    const fast = informer.addEventHandler({ onAdd: () => {} }, { name: 'fast' });
    await informer.start();
    for (let i = 0; i < 10; i++) lw.upsert(pod(`p${i}`));
    await until(() => informer.lister.list().length === 10 && fast.pending === 0);
    expect(reg.pending).toBe(10);
    expect(await pendingMetric('slow')).toBe(10);
    expect(await pendingMetric('fast')).toBe(0);
    gate.resolve();
    await until(() => reg.pending === 0);
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => `p${i}`));
    expect(await pendingMetric('slow')).toBe(0);
    await informer.stop();
  });

  it('maxPending holds the watch at the bound (the store waits too), then delivers everything in order', async () => {
    const { lw, informer } = make();
    const gates: (() => void)[] = [];
    const seen: string[] = [];
    let maxSeenPending = 0;
    const reg = informer.addEventHandler(
      {
        onUpdate: (_old, obj) =>
          new Promise<void>((resolve) => {
            seen.push(String(obj.metadata?.labels?.v));
            gates.push(resolve);
          }),
      },
      { name: 'bounded', maxPending: 3 },
    );
    lw.upsert(pod('a', 0));
    await informer.start();
    for (let v = 1; v <= 20; v++) lw.upsert(pod('a', v));
    await until(() => reg.pending === 3);
    for (let i = 0; i < 20; i++) await tick();
    // Held: the store did not move past the third update, the handler has 3 pending.
    expect(reg.pending).toBe(3);
    expect(informer.lister.get('a', 'default')?.metadata?.labels?.v).toBe('3');
    // Release one at a time: the watch advances one event per slot freed.
    while (seen.length < 20) {
      maxSeenPending = Math.max(maxSeenPending, reg.pending);
      await until(() => gates.length > 0);
      (gates.shift() as () => void)();
      await tick();
    }
    await until(() => reg.pending === 0 || gates.length > 0);
    for (const g of gates) g();
    expect(maxSeenPending).toBeLessThanOrEqual(3);
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
    expect(informer.lister.get('a', 'default')?.metadata?.labels?.v).toBe('20');
    await informer.stop();
  });

  it('an unbounded handler next to a bounded one is not limited by it, and stop() releases a held watch', async () => {
    const { lw, informer } = make();
    const never = new Promise<void>(() => {});
    informer.addEventHandler({ onAdd: () => never }, { maxPending: 1 });
    let other = 0;
    informer.addEventHandler({ onAdd: () => void other++ });
    await informer.start();
    lw.upsert(pod('a'));
    lw.upsert(pod('b'));
    await until(() => other === 1);
    for (let i = 0; i < 10; i++) await tick();
    expect(other).toBe(1); // the watch is held for everyone
    await informer.stop(); // and stopping does not hang on it
  });

  it('rejects a maxPending that is not a non-negative integer', () => {
    const { informer } = make();
    expect(() => informer.addEventHandler({}, { name: 'h', maxPending: -1 })).toThrow(
      /handler h: maxPending/,
    );
    expect(() => informer.addEventHandler({}, { maxPending: 1.5 })).toThrow(RangeError);
  });
});

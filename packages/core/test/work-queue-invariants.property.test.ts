import { WorkQueue, type WorkQueueItem } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

type Op =
  | { readonly t: 'add'; readonly k: string }
  | { readonly t: 'addAfter'; readonly k: string; readonly d: number }
  | { readonly t: 'get' }
  | { readonly t: 'done'; readonly i: number }
  | { readonly t: 'advance'; readonly ms: number };

const keyArb = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: keyArb.map((k) => ({ t: 'add', k }) as const) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('addAfter'), k: keyArb, d: fc.integer({ min: 0, max: 40 }) }),
  },
  { weight: 3, arbitrary: fc.constant({ t: 'get' } as const) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('done'), i: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('advance'), ms: fc.integer({ min: 0, max: 30 }) }) },
);

/** A reference model of client-go's queue rules, written as plainly as possible. */
class Model {
  pending: string[] = [];
  dirty = new Set<string>();
  processing = new Set<string>();
  waitersWaiting = 0;
  handoffs: string[] = [];
  waiting = new Map<string, { at: number; seq: number }>();
  seq = 0;

  add(k: string): void {
    if (this.dirty.has(k)) return;
    this.dirty.add(k);
    if (this.processing.has(k)) return;
    this.enqueue(k);
  }
  enqueue(k: string): void {
    if (this.waitersWaiting > 0) {
      this.waitersWaiting--;
      this.take(k);
      this.handoffs.push(k);
    } else this.pending.push(k);
  }
  take(k: string): void {
    this.processing.add(k);
    this.dirty.delete(k);
  }
  get(): string | undefined {
    const k = this.pending.shift();
    if (k === undefined) {
      this.waitersWaiting++;
      return undefined;
    }
    this.take(k);
    return k;
  }
  done(k: string): void {
    this.processing.delete(k);
    if (this.dirty.has(k)) this.enqueue(k);
  }
  addAfter(k: string, d: number, now: number): void {
    if (d <= 0) {
      this.add(k);
      return;
    }
    const cur = this.waiting.get(k);
    if (cur && cur.at <= now + d) return;
    this.waiting.set(k, { at: now + d, seq: cur ? cur.seq : this.seq++ });
  }
  release(now: number): void {
    const ready = [...this.waiting.entries()]
      .filter(([, w]) => w.at <= now)
      .sort(([, x], [, y]) => x.at - y.at || x.seq - y.seq);
    for (const [k] of ready) {
      this.waiting.delete(k);
      this.add(k);
    }
  }
}

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('work queue invariants (fast-check model)', () => {
  it('matches the model: FIFO hand-out, one pending entry per key, no key held twice, every add processed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 60 }), async (ops) => {
        const clock = new FakeClock({ startMs: 0 });
        const queue = new WorkQueue<string>({ clock });
        const model = new Model();
        const held: string[] = []; // keys our fake workers hold, in hand-out order
        const handedOut: string[] = [];
        const lastAdd = new Map<string, number>(); // key -> op index of its last add
        const lastStart = new Map<string, number>(); // key -> op index it was last handed out
        let step = 0;

        const onItem = (item: WorkQueueItem<string>): void => {
          if (item.shutdown) return;
          // A key is never handed to a second worker while the first holds it.
          expect(held).not.toContain(item.key);
          held.push(item.key);
          handedOut.push(item.key);
          lastStart.set(item.key, step);
        };

        for (const op of ops) {
          step++;
          switch (op.t) {
            case 'add':
              lastAdd.set(op.k, step);
              queue.add(op.k);
              model.add(op.k);
              break;
            case 'addAfter':
              queue.addAfter(op.k, op.d);
              model.addAfter(op.k, op.d, clock.now());
              if (op.d <= 0) lastAdd.set(op.k, step);
              break;
            case 'get': {
              const expected = model.get();
              void queue.get().then(onItem);
              await flush();
              if (expected !== undefined) expect(handedOut.at(-1)).toBe(expected);
              break;
            }
            case 'done': {
              if (held.length === 0) break;
              const [k] = held.splice(op.i % held.length, 1) as [string];
              queue.done(k);
              model.done(k);
              break;
            }
            case 'advance': {
              const target = clock.now() + op.ms;
              // Delayed keys count as added when they become ready.
              for (const [k, w] of model.waiting)
                if (w.at <= target) lastAdd.set(k, Math.max(step, lastAdd.get(k) ?? 0));
              await clock.advance(op.ms);
              model.release(clock.now());
              break;
            }
          }
          await flush();
          // Hand-offs to waiting workers happen in the model's order.
          expect(handedOut.slice(handedOut.length - model.handoffs.length)).toEqual(model.handoffs);
          model.handoffs = [];
          expect(queue.len()).toBe(model.pending.length);
          expect(new Set(model.pending).size).toBe(model.pending.length);
          expect([...model.processing].sort()).toEqual([...held].sort());
        }

        // Finish: release every delay, then let workers run until nothing is left.
        step++;
        for (const [k] of model.waiting) lastAdd.set(k, step);
        await clock.advance(1000);
        for (let guard = 0; guard < 1000 && (held.length > 0 || queue.len() > 0); guard++) {
          step++;
          while (held.length > 0) queue.done(held.shift() as string);
          await flush();
          while (queue.len() > 0) onItem(await queue.get());
          await flush();
        }
        expect(held).toEqual([]);
        for (const [k, addedAt] of lastAdd) expect(lastStart.get(k) ?? -1).toBeGreaterThanOrEqual(addedAt);
        queue.shutDown();
      }),
      { numRuns: 200 },
    );
  });

  it('shutDownWithDrain resolves only after the last in-flight key is done', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(keyArb, { minLength: 1 }), fc.nat(), async (keys, seed) => {
        const queue = new WorkQueue<string>({ clock: new FakeClock() });
        for (const k of keys) queue.add(k);
        for (const _ of keys) await queue.get();
        let drained = false;
        const drain = queue.shutDownWithDrain().then(() => {
          drained = true;
        });
        const order = [...keys].sort(
          (x, y) => ((x.charCodeAt(0) * (seed + 1)) % 7) - ((y.charCodeAt(0) * (seed + 1)) % 7),
        );
        for (const k of order) {
          await flush();
          expect(drained).toBe(false);
          queue.done(k);
        }
        await drain;
        expect(drained).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});

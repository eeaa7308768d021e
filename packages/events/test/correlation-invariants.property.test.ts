// Invariants of the correlation over random event sequences (few objects, reasons and
// messages, random time steps): without the spam filter every recorded occurrence is counted
// exactly once in the stored Events, repeats never create a second Event, and aggregate
// Events carry upstream's prefix; with it, no object gets more writes than its token bucket
// (25 + one per 5 minutes) allows.
import { FakeClock } from '@nodeagent/core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventRecorder, podReference } from '../src/index.js';
import { FakeEventSink } from '../src/testing.js';

type Op =
  | { readonly t: 'record'; readonly obj: string; readonly reason: string; readonly msg: number }
  | { readonly t: 'advance'; readonly ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      t: fc.constant('record' as const),
      obj: fc.constantFrom('a', 'b'),
      reason: fc.constantFrom('BackOff', 'Unhealthy'),
      msg: fc.integer({ min: 0, max: 13 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 400_000 }) }),
  },
);

const PREFIX = '(combined from similar events): ';

async function play(ops: readonly Op[], burst: number | undefined) {
  const clock = new FakeClock();
  const sink = new FakeEventSink();
  const recorder = new EventRecorder({
    sink,
    clock,
    writeQps: Number.POSITIVE_INFINITY,
    ...(burst === undefined ? {} : { correlator: { burst } }),
  });
  await recorder.start();
  const t0 = clock.now();
  const recorded = new Map<string, number>();
  for (const op of ops) {
    if (op.t === 'advance') {
      await clock.advance(op.ms);
      continue;
    }
    recorder.event(
      podReference({ metadata: { name: op.obj, namespace: 'ns', uid: op.obj } }),
      'Warning',
      op.reason,
      `message ${op.msg}`,
    );
    recorded.set(op.obj, (recorded.get(op.obj) ?? 0) + 1);
    await recorder.flush();
  }
  await recorder.stop();
  return { sink, recorder, recorded, elapsedMs: clock.now() - t0 };
}

describe('correlation invariants', () => {
  it('without the spam filter: Σ count = occurrences, one Event per distinct event, aggregates prefixed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 80 }), async (ops) => {
        const { sink, recorder, recorded } = await play(ops, 1_000_000);
        const total = [...recorded.values()].reduce((a, b) => a + b, 0);
        const stored = sink.list();
        expect(stored.reduce((a, e) => a + (e.count ?? 0), 0)).toBe(total);
        expect(recorder.dropped().size).toBe(0);
        const plain = stored.filter((e) => !e.message?.startsWith(PREFIX));
        const keys = plain.map((e) => `${e.involvedObject.name}/${e.reason}/${e.message}`);
        expect(new Set(keys).size).toBe(keys.length);
        for (const e of stored)
          expect(e.message).toMatch(/^(\(combined from similar events\): )?message \d+$/);
      }),
      { numRuns: 60 },
    );
  });

  it('with the spam filter: writes per object ≤ 25 + elapsed / 5 min, and every occurrence is counted or filtered', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 120 }), async (ops) => {
        const { sink, recorder, recorded, elapsedMs } = await play(ops, undefined);
        for (const obj of ['a', 'b']) {
          const writes = sink.calls.filter((c) => c.key.startsWith(`ns/${obj}.`) && !c.failed).length;
          expect(writes).toBeLessThanOrEqual(25 + Math.floor(elapsedMs / 300_000));
          if ((recorded.get(obj) ?? 0) <= 25) expect(writes).toBe(recorded.get(obj) ?? 0);
        }
        const total = [...recorded.values()].reduce((a, b) => a + b, 0);
        const written = sink.calls.filter((c) => !c.failed).length;
        expect(written + (recorder.dropped().get('spam_filter') ?? 0)).toBe(total);
      }),
      { numRuns: 60 },
    );
  });
});

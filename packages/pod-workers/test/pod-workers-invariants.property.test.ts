// Random sequences of updates, callback outcomes, clock steps and housekeeping passes,
// checked against the invariants of the pod worker contract.
import type { V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { createHarness, deferred, makePod, type SyncCall, untilAborted } from './harness.js';

const UIDS = ['a', 'b', 'c'] as const;
type Uid = (typeof UIDS)[number];
type Outcome = 'ok' | 'fail' | 'terminal';

type Op =
  | {
      kind: 'update';
      uid: Uid;
      type: 'create' | 'update' | 'sync' | 'kill';
      variant: 'plain' | 'deleted' | 'succeeded';
      grace: number | undefined;
    }
  | { kind: 'resolve'; index: number; outcome: Outcome }
  | { kind: 'advance'; ms: number }
  | { kind: 'syncKnown'; keep: Uid[] };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('update' as const),
      uid: fc.constantFrom(...UIDS),
      type: fc.constantFrom('create' as const, 'update' as const, 'sync' as const, 'kill' as const),
      variant: fc.constantFrom(
        'plain' as const,
        'plain' as const,
        'plain' as const,
        'deleted' as const,
        'succeeded' as const,
      ),
      grace: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('resolve' as const),
      index: fc.nat(5),
      outcome: fc.constantFrom('ok' as const, 'ok' as const, 'fail' as const, 'terminal' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 20_000 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('syncKnown' as const), keep: fc.subarray([...UIDS]) }),
  },
);

// b and c are static pods with the same full name: they must never run at once.
const STATIC: readonly Uid[] = ['b', 'c'];
const podOf = (uid: Uid, extra: Parameters<typeof makePod>[1] = {}) =>
  makePod(
    uid,
    STATIC.includes(uid) ? { ...extra, name: 'shared', namespace: 'kube-system', source: 'file' } : extra,
  );

const RANK = { sync: 0, terminating: 1, terminated: 2 } as const;

it('keeps per-UID serialization, one-way states, no syncPod after termination, and processes the last update', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(opArb, { minLength: 1, maxLength: 40 }),
      fc.boolean(),
      async (ops, honourAbort) => {
        const h = createHarness({ concurrency: 2 });
        const pending: { call: SyncCall; settle: (o: Outcome) => void }[] = [];
        const generation = new Map<string, number>();
        const callGen = new Map<SyncCall, number>();
        const lastPod = new Map<string, V1Pod>();
        const lastCallFailed = new Map<string, boolean>();
        const lastCall = new Map<string, SyncCall>();
        let autoSucceed = false;
        h.syncer.behavior = (call) => {
          callGen.set(call, generation.get(call.uid) ?? 0);
          lastCall.set(call.uid, call);
          if (autoSucceed) {
            lastCallFailed.set(call.uid, false);
            return undefined;
          }
          const d = deferred<boolean | undefined>();
          pending.push({
            call,
            settle: (o) => {
              // Only the newest call of a pod tells whether its last sync failed.
              if (lastCall.get(call.uid) === call) lastCallFailed.set(call.uid, o === 'fail');
              if (o === 'fail') d.reject(new Error('injected failure'));
              else d.resolve(o === 'terminal');
            },
          });
          return honourAbort ? Promise.race([d.promise, untilAborted(call.ctx.signal)]) : d.promise;
        };
        const lastRank = new Map<string, number>();
        const checkMonotonic = () => {
          for (const uid of UIDS) {
            const s = h.workers.getPodSyncStatus(uid);
            if (s === undefined) {
              lastRank.delete(uid);
              continue;
            }
            const rank = RANK[s.state] + (s.finished ? 1 : 0);
            expect(rank).toBeGreaterThanOrEqual(lastRank.get(uid) ?? 0);
            lastRank.set(uid, rank);
          }
          const running = STATIC.filter((uid) => {
            const s = h.workers.getPodSyncStatus(uid);
            return s?.startedAt !== undefined && !s.finished;
          });
          expect(running.length).toBeLessThanOrEqual(1);
        };

        let version = 0;
        for (const op of ops) {
          if (op.kind === 'update') {
            const pod = podOf(op.uid, {
              ...(op.variant === 'deleted' ? { deleted: true } : {}),
              ...(op.variant === 'succeeded' ? { phase: 'Succeeded' } : {}),
              terminationGracePeriodSeconds: 30,
            });
            pod.metadata = { ...pod.metadata, labels: { version: String(version++) } };
            lastPod.set(op.uid, pod);
            h.workers.updatePod({
              updateType: op.type,
              pod,
              ...(op.grace !== undefined
                ? { killOptions: { podTerminationGracePeriodSecondsOverride: op.grace } }
                : {}),
            });
          } else if (op.kind === 'resolve') {
            const item = pending.splice(op.index % Math.max(1, pending.length), 1)[0];
            item?.settle(op.outcome);
          } else if (op.kind === 'advance') {
            await h.clock.advance(op.ms);
          } else {
            const before = new Set(h.workers.knownPodUids());
            h.workers.syncKnownPods(op.keep.map((uid) => lastPod.get(uid) ?? podOf(uid)));
            for (const uid of before) {
              if (h.workers.getPodSyncStatus(uid) === undefined)
                generation.set(uid, (generation.get(uid) ?? 0) + 1);
            }
          }
          await h.settle();
          checkMonotonic();
        }

        // Let everything finish; a pod whose last sync failed gets the kubelet's resync.
        autoSucceed = true;
        for (const item of pending.splice(0)) item.settle('ok');
        await h.settle();
        for (const uid of UIDS) {
          const pod = lastPod.get(uid);
          if (pod && lastCallFailed.get(uid) && h.workers.getPodSyncStatus(uid)) {
            h.workers.updatePod({ updateType: 'sync', pod });
          }
        }
        await h.settle();
        checkMonotonic();

        expect(h.syncer.violations).toEqual([]);
        for (const uid of UIDS) {
          const calls = h.syncer.callsFor(uid);
          // No syncPod after a termination callback in the same lifetime of the UID.
          let terminationSeenInGen = -1;
          for (const call of calls) {
            const gen = callGen.get(call) ?? 0;
            if (call.method !== 'syncPod') terminationSeenInGen = gen;
            else expect(terminationSeenInGen).not.toBe(gen);
          }
          const status = h.workers.getPodSyncStatus(uid);
          if (status === undefined) continue;
          if (status.state === 'sync' && status.startedAt !== undefined) {
            // The last update given was the last one synced (latest wins, nothing lost).
            expect(h.syncer.callsFor(uid, 'syncPod').at(-1)?.pod).toBe(lastPod.get(uid));
          } else if (status.state === 'sync') {
            // A static pod that never started waits only for the other one holding the name.
            const other = STATIC.find((o) => o !== uid);
            const holder = other === undefined ? undefined : h.workers.getPodSyncStatus(other);
            expect(STATIC.includes(uid) && holder?.startedAt !== undefined && !holder.finished).toBe(true);
          } else {
            // With every callback succeeding, a terminating pod runs to the end.
            expect(status.finished).toBe(true);
          }
          expect(status.working).toBe(false);
        }
      },
    ),
    { numRuns: 200 },
  );
});

// Property: whatever sequence of snapshots and changes the sources send, a consumer that
// applies the emitted ops (ADD/UPDATE/DELETE/RECONCILE store the pod, REMOVE drops it) ends
// with exactly the merge's pods, each at its latest version, and every source that sent a
// snapshot got a notification (so a consumer can mark it seen).
import type { V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PodConfig, type PodUpdate, type SourceUpdate } from '../src/index.js';

const podArb = fc.record({
  n: fc.integer({ min: 0, max: 4 }),
  image: fc.constantFrom('a', 'b'),
  label: fc.constantFrom('x', 'y'),
  phase: fc.constantFrom('Pending', 'Running'),
  deleting: fc.boolean(),
});

function toPod(p: { n: number; image: string; label: string; phase: string; deleting: boolean }): V1Pod {
  return {
    metadata: {
      name: `p${p.n}`,
      namespace: 'default',
      uid: `uid-${p.n}`,
      labels: { l: p.label },
      ...(p.deleting ? { deletionTimestamp: new Date(0) } : {}),
    },
    spec: { containers: [{ name: 'c', image: p.image }] },
    status: { phase: p.phase },
  };
}

const updateArb = fc.record({
  source: fc.constantFrom('api', 'file'),
  op: fc.constantFrom<SourceUpdate['op']>('SET', 'SET', 'ADD', 'UPDATE', 'REMOVE'),
  pods: fc.array(podArb, { maxLength: 5 }),
});

describe('PodConfig against a consumer model', () => {
  it('applying the emitted ops reproduces the merged pods', () => {
    fc.assert(
      fc.property(fc.array(updateArb, { maxLength: 25 }), (updates) => {
        const config = new PodConfig();
        const consumer = new Map<string, V1Pod>();
        const notified = new Set<string>();
        const snapshotted = new Set<string>();
        for (const u of updates) {
          config.channel(u.source).send({ op: u.op, pods: u.pods.map(toPod) });
          if (u.op === 'SET') snapshotted.add(u.source);
          while (config.updates.length > 0) {
            const n = config.updates.tryReceive() as PodUpdate;
            notified.add(n.source);
            for (const pod of n.pods) {
              const key = `${n.source}/${pod.metadata?.uid}`;
              if (n.op === 'REMOVE') consumer.delete(key);
              else consumer.set(key, pod);
            }
          }
        }
        const merged = new Map(
          config.sources().flatMap((s) => config.pods(s).map((p) => [`${s}/${p.metadata?.uid}`, p] as const)),
        );
        expect([...consumer.keys()].sort()).toEqual([...merged.keys()].sort());
        for (const [key, pod] of merged) expect(consumer.get(key)).toEqual(pod);
        for (const s of snapshotted) expect(notified.has(s)).toBe(true);
        expect(config.seenAllSources([...snapshotted])).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

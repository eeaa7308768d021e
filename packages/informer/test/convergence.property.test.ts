/**
 * Property: whatever faults the server throws at the informer (abrupt drops, 410s by HTTP
 * and in-stream, 500s on list and watch, stalled watches, compaction) while objects are
 * created, updated and deleted, once the faults stop the informer's cache equals the
 * server's truth — no missing, extra or stale objects — within a bounded time.
 */
import { KubeConfig } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type MiniApiServer, startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { type KubeObject, RestListerWatcher, SharedInformer } from '../src/index.js';

const NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
const IDLE_TIMEOUT_MS = 600;
const CONVERGE_WITHIN_MS = 3000 + IDLE_TIMEOUT_MS;

type Step =
  | { readonly op: 'upsert'; readonly name: string; readonly v: number }
  | { readonly op: 'delete'; readonly name: string }
  | { readonly op: 'drop' }
  | { readonly op: 'expire' }
  | { readonly op: 'compact' }
  | { readonly op: 'stall' }
  | { readonly op: 'fail'; readonly code: 500 | 503 | 410; readonly watch: boolean; readonly count: number }
  | { readonly op: 'pause'; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('upsert' as const),
      name: fc.constantFrom(...NAMES),
      v: fc.nat(1000),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('delete' as const), name: fc.constantFrom(...NAMES) }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'drop' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'expire' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'compact' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'stall' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('fail' as const),
      code: fc.constantFrom(500 as const, 503 as const, 410 as const),
      watch: fc.boolean(),
      count: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('pause' as const), ms: fc.integer({ min: 1, max: 40 }) }),
  },
);

function apply(server: MiniApiServer, s: Step): void {
  const store = server.store;
  switch (s.op) {
    case 'upsert': {
      const existing = store.tryGet('pods', 'default', s.name);
      const body: KubeObject = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: s.name, namespace: 'default', labels: { v: String(s.v) } },
        spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox' }] },
      };
      if (existing)
        store.update('pods', { ...existing, metadata: { ...existing.metadata, labels: { v: String(s.v) } } });
      else store.create('pods', body as never);
      return;
    }
    case 'delete':
      if (store.tryGet('pods', 'default', s.name))
        store.delete('pods', 'default', s.name, { gracePeriodSeconds: 0 });
      return;
    case 'drop':
      server.faults.dropWatches();
      return;
    case 'expire':
      server.faults.expireWatches();
      return;
    case 'compact':
      server.faults.compact();
      return;
    case 'stall':
      server.faults.stallWatches();
      return;
    case 'fail':
      server.faults.failNext(s.count, { code: s.code, watch: s.watch, path: '/api/v1/pods' });
      return;
    case 'pause':
      return;
  }
}

const truth = (server: MiniApiServer) =>
  server.store
    .list('pods')
    .map((p) => `${p.metadata?.name}@${p.metadata?.resourceVersion}`)
    .sort();
const cached = (informer: SharedInformer) =>
  informer.lister
    .list()
    .map((p) => `${p.metadata?.name}@${p.metadata?.resourceVersion}`)
    .sort();

describe('convergence under random fault schedules (mini-apiserver)', () => {
  it('ends every schedule with the cache equal to the server truth', async () => {
    let faultsSeen = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 5, maxLength: 30 }),
        fc.boolean(),
        async (schedule, watchList) => {
          const server = await startMiniApiServer({
            bookmarkIntervalMs: 200,
            historySize: 50,
            autoCreateNamespaces: true,
          });
          const kc = new KubeConfig();
          kc.loadFromString(server.kubeconfig);
          const lw = new RestListerWatcher({ kubeConfig: kc, path: '/api/v1/pods' });
          const informer = new SharedInformer(lw, {
            pageSize: 3,
            idleTimeoutMs: IDLE_TIMEOUT_MS,
            useWatchList: watchList,
            backoff: { initialMs: 10, capMs: 200, resetAfterMs: 2000 },
          });
          const errors: Error[] = [];
          informer.on('watchError', (e) => errors.push(e));
          try {
            apply(server, { op: 'upsert', name: 'a', v: 0 });
            await informer.start(AbortSignal.timeout(10_000));
            for (const s of schedule) {
              apply(server, s);
              await new Promise((r) => setTimeout(r, s.op === 'pause' ? s.ms : 2));
            }
            server.faults.clear();
            // A marker write after the faults: the cache must reflect everything up to it.
            apply(server, { op: 'upsert', name: 'marker', v: 1 });
            const deadline = Date.now() + CONVERGE_WITHIN_MS;
            while (
              JSON.stringify(cached(informer)) !== JSON.stringify(truth(server)) &&
              Date.now() < deadline
            ) {
              await new Promise((r) => setTimeout(r, 10));
            }
            expect(cached(informer)).toEqual(truth(server));
            expect(informer.isStopped).toBe(false);
          } finally {
            faultsSeen += errors.length;
            await informer.stop();
            lw.close();
            await server.stop();
          }
        },
      ),
      { numRuns: 12 },
    );
    // The schedules must actually have hurt: the informer reported list/watch failures.
    expect(faultsSeen).toBeGreaterThan(0);
  }, 120_000);
});

/**
 * The fault suite against the fault-injecting mini-apiserver, with the informer on a
 * FakeClock (driven from timer to timer, see `drive.ts`): a burst of faults (a stall, drops,
 * an in-stream 410 followed by failing relists, a failing rewatch) must leave the cache equal
 * to the server within 3 s of informer time after the last failure; a permanently failing
 * server sees at most two lists a minute once the backoff has grown, and a server that
 * accepts each watch and cuts it at once is not hammered. All durations are informer (fake)
 * time, deterministic with the fixed random source (0.5); the wall-clock figures are in
 * `bench/recovery.bench.ts`.
 */

import { KubeConfig } from '@kubernetes/client-node';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { RestListerWatcher, SharedInformer, type SharedInformerOptions } from '../src/index.js';
import { type Driven, driveUntil, inWindow, T0 } from './drive.js';
import { podsView, writePod } from './server-pods.js';

const MINUTE = 60_000;
const PODS = '/api/v1/pods';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function start(options: SharedInformerOptions = {}) {
  const server = await startMiniApiServer({
    bookmarkIntervalMs: 3_600_000,
    historySize: 50,
    autoCreateNamespaces: true,
  });
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig);
  const clock = new FakeClock({ startMs: T0 });
  const lw = new RestListerWatcher({ kubeConfig: kc, path: PODS });
  const informer = new SharedInformer(lw, { clock, random: () => 0.5, ...options });
  const failures: number[] = [];
  informer.on('watchError', () => failures.push(clock.now() - T0));
  cleanup = async () => {
    await informer.stop();
    lw.close();
    await server.stop();
  };
  const driven: Driven = { clock, requestCount: () => server.requests.filter((r) => r.path === PODS).length };
  return { server, clock, informer, failures, driven };
}

describe('fault suite (mini-apiserver, informer time)', () => {
  it('after each fault of a burst the cache equals the server within 3 s of the last failure', async () => {
    const { server, clock, informer, failures, driven } = await start();
    writePod(server, 'a', 0);
    await informer.start();
    const converged = () => podsView(informer.lister.list()) === podsView(server.store.list('pods'));
    const at: number[] = [];
    const now = () => clock.now() - T0;
    /**
     * After 2 s of calm, applies a fault, writes, drives until converged; returns ms from
     * the last failure (or from the fault when nothing failed).
     */
    const phase = async (fault: () => void, n: number): Promise<number> => {
      // Faults 2 s apart: the watch of the previous recovery has been up for 2 s.
      await driveUntil(driven, now() + 2000, at);
      const from = now();
      const before = failures.length;
      fault();
      writePod(server, `p${n}`, n);
      writePod(server, 'a', n);
      await driveUntil(driven, from + 5 * MINUTE, at, converged);
      expect(converged()).toBe(true);
      const last = failures.length > before ? (failures.at(-1) as number) : from;
      return now() - last;
    };
    await driveUntil(driven, now() + 1000, at, () => server.openWatches === 1);

    // A stall is only noticed by the idle timeout (90 s): measured from the stall itself.
    const stallFrom = now();
    const afterStall = await phase(() => server.faults.stallWatches(), 1);
    expect(failures.length).toBeGreaterThan(0);
    expect(now() - stallFrom).toBeLessThanOrEqual(90_000 + 3000);
    expect(afterStall).toBeLessThanOrEqual(3000);

    // Abrupt drop of a healthy watch: one short probe.
    expect(await phase(() => server.faults.dropWatches(), 2)).toBeLessThanOrEqual(3000);

    // 410 in-stream, then two failing relists: the 410 relists at once, the 500s back off.
    expect(
      await phase(() => {
        server.faults.failNext(2, { code: 500, watch: false, path: PODS });
        server.faults.expireWatches();
      }, 3),
    ).toBeLessThanOrEqual(3000);

    // Compaction + drop: the rewatch gets 410 and relists now; then a failing watch.
    expect(
      await phase(() => {
        server.faults.compact();
        server.faults.failNext(1, { code: 503, watch: true, path: PODS });
        server.faults.dropWatches();
      }, 4),
    ).toBeLessThanOrEqual(3000);

    // A drop, then two failing rewatches: three failures in a row, the longest streak that
    // recovers within 3 s (the waits are 0.5, 1 and 2 s at this random source).
    expect(
      await phase(() => {
        server.faults.failNext(2, { code: 500, watch: true, path: PODS });
        server.faults.dropWatches();
      }, 5),
    ).toBeLessThanOrEqual(3000);
    expect(informer.isStopped).toBe(false);
  });

  it('a permanently failing list: at most two lists a minute once the backoff has grown', async () => {
    const { server, informer, driven } = await start();
    server.faults.failNext(1_000_000, { code: 500, watch: false, path: PODS });
    void informer.start().catch(() => {});
    const at: number[] = [];
    await driveUntil(driven, 10 * MINUTE, at);
    expect(inWindow(at, 0, MINUTE)).toBeLessThanOrEqual(8);
    // One list per 30-45 s: at most 10 in 5 minutes (+1 for where the window starts).
    expect(inWindow(at, 5 * MINUTE, 10 * MINUTE)).toBeLessThanOrEqual(11);
    expect(inWindow(at, 5 * MINUTE, 10 * MINUTE)).toBeGreaterThanOrEqual(6);
  });

  it('a server that accepts every watch and cuts it at once is not hammered', async () => {
    // No idle timer: the clock stands still while a watch is open (it lives 0 ms).
    const { server, informer, driven } = await start({ idleTimeoutMs: 0 });
    writePod(server, 'a', 0);
    await informer.start();
    const cutter = setInterval(() => server.faults.dropWatches(), 2);
    try {
      const at: number[] = [];
      await driveUntil({ ...driven, busy: () => server.openWatches > 0 }, 10 * MINUTE, at);
      const lists = server.requests.filter((r) => r.path === PODS && !r.watch);
      expect(lists).toHaveLength(1);
      expect(inWindow(at, 5 * MINUTE, 10 * MINUTE)).toBeLessThanOrEqual(11);
      expect(podsView(informer.lister.list())).toBe(podsView(server.store.list('pods')));
    } finally {
      clearInterval(cutter);
    }
  });
});

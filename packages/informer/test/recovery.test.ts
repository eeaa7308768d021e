/**
 * Recovery and back-off, on a FakeClock against the scripted server: how many requests a
 * permanently failing server and a watch-accept-then-drop server see per minute, that a 410
 * relists at once whatever failed before it, and that a healthy watch starts the backoff
 * over (the next retry is a short probe). Durations here are fake-clock time, deterministic
 * with the fixed random source of `setup()` (0.5: every delay is 1.25 × its base).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_REFLECTOR_BACKOFF } from '../src/index.js';
import { driveUntil, inWindow, T0 } from './drive.js';
import { setup } from './helpers.js';
import { fail, pod, status, watchHttpError } from './scripted-server.js';

let env: Awaited<ReturnType<typeof setup>> | undefined;
afterEach(async () => {
  await env?.cleanup();
  env = undefined;
});

const MINUTE = 60_000;
type Env = Awaited<ReturnType<typeof setup>>;
const driven = (e: Env) => ({
  clock: e.clock,
  requestCount: () => e.server.requests.length,
  requestTimes: () => e.server.requests.map((r) => (r.at ?? Number.NaN) - T0),
});

describe('back-off against a server that keeps failing', () => {
  it('a list that always fails: at most one list per 30 s in steady state', async () => {
    env = await setup();
    env.server.listDefault = fail(500, 'InternalError');
    void env.informer.start().catch(() => {});
    const at: number[] = [];
    await driveUntil(driven(env), 10 * MINUTE, at);
    const lists = env.server.requestsOf('list').length;
    expect(lists).toBe(at.length);
    // 400 ms doubling to 30 s (× 1.25): 0.5, 1, 2, 4, 8, 16, 32, then 37.5 s each.
    const perMinuteAtSteadyState = inWindow(at, 5 * MINUTE, 10 * MINUTE) / 5;
    expect(perMinuteAtSteadyState).toBeLessThanOrEqual(2);
    for (let i = 1; i < at.length; i++) {
      if ((at[i] as number) >= 2 * MINUTE)
        expect((at[i] as number) - (at[i - 1] as number)).toBeGreaterThanOrEqual(30_000);
    }
    // The first minute retries quickly (at 0, 0.5, 1.5, 3.5, 7.5, 15.5 and 31.5 s), then it settles.
    expect(inWindow(at, 0, MINUTE)).toBe(7);
  });

  it.each([
    ['ends the stream at once (clean end, no event)', 'end'],
    ['cuts the connection at once', 'drop'],
  ] as const)('a server that accepts every watch and %s is not hammered', async (_what, how) => {
    // No idle timer: while a watch is open, no timer is due and the clock stands still, so
    // each watch lives 0 ms of informer time, deterministically.
    env = await setup({ idleTimeoutMs: 0 });
    env.server.items = [pod('a', 2)];
    env.server.listRV = '2';
    env.server.watchDefault = (conn) => {
      conn.open();
      setTimeout(() => (how === 'end' ? conn.end() : conn.drop()), 1);
    };
    await env.informer.start();
    const at: number[] = [];
    const e = env;
    // The clock stands still until the server has cut the watch: it lived 0 ms of informer time.
    const busy = () => e.server.openWatchCount > 0;
    await driveUntil({ ...driven(env), busy }, 10 * MINUTE, at);
    expect(env.server.requestsOf('list')).toHaveLength(1);
    const watches = env.server.requestsOf('watch');
    expect(watches.every((w) => w.query.get('resourceVersion') === '2')).toBe(true);
    expect(inWindow(at, 5 * MINUTE, 10 * MINUTE) / 5).toBeLessThanOrEqual(2);
    expect(env.names()).toEqual(['a@2']);
  });

  it('a server that expires every watch at once: the first 410 relists now, the next ones back off', async () => {
    env = await setup();
    env.server.items = [pod('a', 2)];
    env.server.listRV = '2';
    env.server.watchDefault = watchHttpError(410, 'Expired');
    await env.informer.start();
    const at: number[] = [];
    await driveUntil(driven(env), 10 * MINUTE, at);
    const lists = env.server.requestsOf('list');
    // list, watch(410), list at once, watch(410), then backed off like any failure.
    expect(at[2]).toBe(at[1]);
    expect(lists.slice(1).every((l) => l.query.get('resourceVersion') === '')).toBe(true);
    expect(inWindow(at, 5 * MINUTE, 10 * MINUTE) / 5).toBeLessThanOrEqual(4); // list + watch per ≥ 30 s
  });
});

describe('recovery after a burst of faults', () => {
  it('a 410 after failed attempts relists at once, without waiting out the backoff', async () => {
    env = await setup();
    env.server.items = [pod('a', 2)];
    env.server.listRV = '2';
    env.server.onWatch(
      watchHttpError(500, 'InternalError'),
      watchHttpError(500, 'InternalError'),
      watchHttpError(503, 'ServiceUnavailable'),
      watchHttpError(410, 'Expired'),
    );
    await env.informer.start();
    const at: number[] = [];
    env.server.items = [pod('a', 3), pod('b', 4)];
    env.server.listRV = '4';
    await driveUntil(driven(env), 10_000, at);
    const kinds = env.server.requests.map((r) => r.kind);
    expect(kinds.slice(0, 7)).toEqual(['list', 'watch', 'watch', 'watch', 'watch', 'list', 'watch']);
    // The relist follows the 410 at the same fake instant.
    expect(at[5]).toBe(at[4]);
    expect(env.names()).toEqual(['a@3', 'b@4']);
  });

  it('a healthy watch starts the backoff over: after a burst of 500s, the next drop is retried after a short probe', async () => {
    env = await setup();
    env.server.items = [pod('a', 2)];
    env.server.listRV = '2';
    env.server.onWatch(
      watchHttpError(500, 'InternalError'),
      watchHttpError(500, 'InternalError'),
      watchHttpError(500, 'InternalError'),
      watchHttpError(500, 'InternalError'),
      // Healthy: one event (the connection is cut below: a fault at the end of the burst).
      (conn) => conn.send('MODIFIED', pod('a', 3)),
    );
    await env.informer.start();
    const at: number[] = [];
    await driveUntil(driven(env), 20_000, at);
    expect(env.names()).toEqual(['a@3']);
    (await env.server.watchConn(4)).drop();
    await driveUntil(driven(env), 40_000, at);
    const watches = env.server.requests
      .map((r, i) => ({ r, t: at[i] as number }))
      .filter((x) => x.r.kind === 'watch');
    // Four failures: 0.5, 1, 2, 4 s (× 1.25 of 400 ms doubling) between attempts.
    const gaps = watches.slice(1, 5).map((w, i) => w.t - (watches[i] as { t: number }).t);
    expect(gaps).toEqual([500, 1000, 2000, 4000]);
    // After the healthy watch was dropped, the rewatch waits the initial probe only.
    const afterDrop = (watches[5] as { t: number }).t - 20_000;
    expect(afterDrop).toBe(DEFAULT_REFLECTOR_BACKOFF.initialMs * 1.25);
    expect((watches[5] as { r: { query: URLSearchParams } }).r.query.get('resourceVersion')).toBe('3');
  });

  it('a stalled watch is detected after 1.5 × the one-minute bookmark interval by default', async () => {
    env = await setup();
    env.server.items = [pod('a', 2)];
    env.server.listRV = '2';
    env.server.onWatch((conn) => conn.open()); // opens, then silence
    await env.informer.start();
    const at: number[] = [];
    await driveUntil(driven(env), 3 * MINUTE, at);
    const watches = env.server.requests
      .map((r, i) => ({ r, t: at[i] as number }))
      .filter((x) => x.r.kind === 'watch');
    expect(watches[0]?.r.query.get('allowWatchBookmarks')).toBe('true');
    // Stalled for 90 s, then a healthy-watch probe (0.5 s) before the rewatch.
    expect((watches[1] as { t: number }).t - (watches[0] as { t: number }).t).toBe(90_000 + 500);
    expect(await env.metric('informer_watch_restarts_total')).toContainEqual(
      expect.objectContaining({ labels: { name: 'pods', reason: 'idle' }, value: 1 }),
    );
  });

  it('an in-stream ERROR 410 relists at once even right after a failed watch', async () => {
    env = await setup();
    env.server.items = [pod('a', 2)];
    env.server.listRV = '2';
    env.server.onWatch(watchHttpError(500, 'InternalError'), (conn) => {
      conn.send('ERROR', status(410, 'Expired'));
      conn.end();
    });
    await env.informer.start();
    const at: number[] = [];
    await driveUntil(driven(env), 5_000, at);
    const kinds = env.server.requests.map((r) => r.kind);
    expect(kinds.slice(0, 4)).toEqual(['list', 'watch', 'watch', 'list']);
    expect(at[3]).toBe(at[2]);
  });
});

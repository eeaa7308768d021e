// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { call, openWatch, pod, start } from './helpers.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

describe('faults', () => {
  test('dropWatches destroys open watch connections abruptly', async () => {
    server = await start();
    const w = await openWatch(server, '/api/v1/pods?watch=1');
    await new Promise((r) => setTimeout(r, 20));
    expect(server.openWatches).toBe(1);
    expect(server.faults.dropWatches()).toBe(1);
    expect(await w.ended).toBe(false); // a network error, not a clean end
    expect(server.openWatches).toBe(0);
  });

  test('compact forces 410 for watches from older RVs; expireWatches ends open watches with ERROR 410', async () => {
    server = await start();
    server.store.create('pods', pod('a'));
    const rv = server.store.resourceVersion;
    const open = await openWatch(server, `/api/v1/pods?watch=1&resourceVersion=${rv}`);
    await new Promise((r) => setTimeout(r, 20));
    expect(server.faults.expireWatches()).toBe(1);
    const [ev] = await open.waitFor(1);
    expect(ev).toMatchObject({ type: 'ERROR', object: { reason: 'Expired', code: 410 } });
    expect(await open.ended).toBe(true);
    const again = await openWatch(server, `/api/v1/pods?watch=1&resourceVersion=${rv}`);
    expect((await again.waitFor(1))[0]?.object.code).toBe(410);
    // A fresh list gives an RV that can be watched from.
    const list = await call(server, 'GET', '/api/v1/pods');
    const fresh = await openWatch(
      server,
      `/api/v1/pods?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`,
    );
    server.store.create('pods', pod('b'));
    expect((await fresh.waitFor(1))[0]?.type).toBe('ADDED');
    fresh.close();
  });

  test('dropNext cuts the connection before handling a request, or after (the write is stored, the answer lost)', async () => {
    server = await start();
    server.faults.dropNext(1, { method: 'POST', path: '/api/v1/namespaces/default/pods' });
    server.faults.dropNext(1, { method: 'POST', when: 'after' });
    await expect(call(server, 'POST', '/api/v1/namespaces/default/pods', pod('a'))).rejects.toThrow();
    expect(server.store.tryGet('pods', 'default', 'a')).toBeUndefined();
    await expect(call(server, 'POST', '/api/v1/namespaces/default/pods', pod('a'))).rejects.toThrow();
    expect(server.store.tryGet('pods', 'default', 'a')).toBeDefined();
    const again = await call(server, 'POST', '/api/v1/namespaces/default/pods', pod('a'));
    expect(again.body).toMatchObject({ reason: 'AlreadyExists', code: 409 });
  });

  test('failNext fails matching requests with a Status, then stops', async () => {
    server = await start();
    server.faults.failNext(2, { code: 500, method: 'GET', path: '/api/v1/pods' });
    server.faults.failNext(1, { code: 429, watch: true, message: 'slow down' });
    const a = await call(server, 'GET', '/api/v1/pods');
    expect(a.code).toBe(500);
    expect(a.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'injected fault',
      reason: 'InternalError',
      code: 500,
    });
    expect((await call(server, 'GET', '/api/v1/namespaces')).code).toBe(200);
    expect((await call(server, 'GET', '/api/v1/pods')).code).toBe(500);
    expect((await call(server, 'GET', '/api/v1/pods')).code).toBe(200);
    const w = await fetch(`${server.url}/api/v1/pods?watch=1`);
    expect(w.status).toBe(429);
    expect(((await w.json()) as any).message).toBe('slow down');
  });

  test('latency delays requests on the injected clock', async () => {
    const clock = new FakeClock();
    server = await start({ clock });
    server.faults.latencyMs = 2000;
    let done = false;
    const p = call(server, 'GET', '/api/v1/pods').then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    await clock.advance(2000);
    expect((await p).code).toBe(200);
  });

  test('stalled watches stay open and send nothing more', async () => {
    server = await start();
    const w = await openWatch(server, '/api/v1/pods?watch=1&resourceVersion=1');
    server.store.create('pods', pod('a'));
    await w.waitFor(1);
    expect(server.faults.stallWatches()).toBe(1);
    server.store.create('pods', pod('b'));
    server.faults.stallNextWatches(1);
    const w2 = await openWatch(server, '/api/v1/pods?watch=1&resourceVersion=1');
    await new Promise((r) => setTimeout(r, 100));
    expect(w.events).toHaveLength(1);
    expect(w2.events).toHaveLength(0);
    expect(w2.status).toBe(200);
    expect(server.openWatches).toBe(2);
    w.close();
    w2.close();
  });
});

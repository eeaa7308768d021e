// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { openWatch, pod, start } from './helpers.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

describe('watch', () => {
  test('from a resourceVersion: history then live events, JSON lines', async () => {
    server = await start();
    server.store.create('pods', pod('a'));
    const rv = server.store.resourceVersion;
    server.store.create('pods', pod('b'));
    const w = await openWatch(server, `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    server.store.patch('pods', 'default', 'b', 'merge', { metadata: { labels: { x: 'y' } } });
    server.store.delete('pods', 'default', 'a');
    const evs = await w.waitFor(3);
    expect(evs.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'ADDED b',
      'MODIFIED b',
      'DELETED a',
    ]);
    expect(Number(evs[2]?.object.metadata.resourceVersion)).toBe(Number(server.store.resourceVersion));
    w.close();
  });

  test('an RV older than the history window gets an in-stream 410 ERROR', async () => {
    server = await start({ historySize: 3 });
    for (let i = 0; i < 6; i++) server.store.create('pods', pod(`p${i}`));
    const w = await openWatch(server, '/api/v1/pods?watch=true&resourceVersion=2');
    expect(w.status).toBe(200);
    const [ev] = await w.waitFor(1);
    expect(ev?.type).toBe('ERROR');
    expect(ev?.object).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason: 'Expired',
      code: 410,
    });
    expect(ev?.object.message).toMatch(/^too old resource version: 2 \(\d+\)$/);
    expect(await w.ended).toBe(true);
  });

  test('RV 0 / unset sends the current state as ADDED', async () => {
    server = await start();
    server.store.create('pods', pod('a'));
    const w = await openWatch(server, '/api/v1/pods?watch=1&resourceVersion=0');
    expect((await w.waitFor(1)).map((e) => e.type)).toEqual(['ADDED']);
    w.close();
  });

  test('bookmarks on the injected clock, and timeoutSeconds ends the stream cleanly', async () => {
    const clock = new FakeClock();
    server = await start({ clock, bookmarkIntervalMs: 1000 });
    const rv = server.store.resourceVersion;
    const w = await openWatch(
      server,
      `/api/v1/pods?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=5`,
    );
    server.store.create('pods', pod('a'));
    await w.waitFor(1);
    await clock.advance(1000);
    const evs = await w.waitFor(2);
    expect(evs[1]).toEqual({
      type: 'BOOKMARK',
      object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: server.store.resourceVersion } },
    });
    await clock.advance(4000);
    expect(await w.ended).toBe(true);
    expect(server.openWatches).toBe(0);
  });

  test('sendInitialEvents=true streams the state then the initial-events-end bookmark', async () => {
    server = await start();
    server.store.create('pods', pod('a'));
    server.store.create('pods', pod('b'));
    const w = await openWatch(
      server,
      '/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=',
    );
    const evs = await w.waitFor(3);
    expect(evs.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'BOOKMARK']);
    expect(evs[2]?.object.metadata).toEqual({
      resourceVersion: server.store.resourceVersion,
      annotations: { 'k8s.io/initial-events-end': 'true' },
    });
    server.store.create('pods', pod('c'));
    expect((await w.waitFor(4))[3]?.type).toBe('ADDED');
    w.close();
    const invalid = await fetch(`${server.url}/api/v1/pods?watch=1&sendInitialEvents=true`);
    expect(invalid.status).toBe(422);
    const body = (await invalid.json()) as any;
    expect(body.details.causes.map((c: any) => c.field)).toEqual([
      'resourceVersionMatch',
      'allowWatchBookmarks',
    ]);
  });

  test('selectors: an object leaving the selection is DELETED for that watcher, entering is ADDED', async () => {
    server = await start();
    server.store.create('pods', pod('a', { labels: { app: 'web' } }));
    const rv = server.store.resourceVersion;
    const w = await openWatch(server, `/api/v1/pods?watch=1&resourceVersion=${rv}&labelSelector=app%3Dweb`);
    const nodeW = await openWatch(
      server,
      `/api/v1/pods?watch=1&resourceVersion=${rv}&fieldSelector=spec.nodeName%3Dn1`,
    );
    server.store.patch('pods', 'default', 'a', 'merge', { metadata: { labels: { app: 'db' } } });
    server.store.patch('pods', 'default', 'a', 'merge', { metadata: { labels: { app: 'web' } } });
    server.store.create('pods', pod('other', { labels: { app: 'db' }, nodeName: 'n1' }));
    const evs = await w.waitFor(2);
    expect(evs[0]?.type).toBe('DELETED');
    expect(evs[0]?.object.metadata.labels).toEqual({ app: 'web' }); // previous content...
    expect(Number(evs[0]?.object.metadata.resourceVersion)).toBe(Number(rv) + 1); // ...at the event's RV
    expect(evs[1]?.type).toBe('ADDED');
    expect((await nodeW.waitFor(1)).map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'ADDED other',
    ]);
    w.close();
    nodeW.close();
  });

  test('namespaced watch sees only its namespace; legacy /watch/ path works', async () => {
    server = await start();
    server.store.create('namespaces', { metadata: { name: 'x' } });
    const rv = server.store.resourceVersion;
    const w = await openWatch(server, `/api/v1/watch/namespaces/x/pods?resourceVersion=${rv}`);
    server.store.create('pods', pod('a'));
    server.store.create('pods', pod('b', { ns: 'x' }));
    expect((await w.waitFor(1)).map((e) => e.object.metadata.name)).toEqual(['b']);
    w.close();
  });
});

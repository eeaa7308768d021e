// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { call, pod, start } from './helpers.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

function names(body: any): string[] {
  return body.items.map((p: any) => `${p.metadata.namespace}/${p.metadata.name}`);
}

describe('list', () => {
  test('limit/continue pages are a consistent snapshot in key order', async () => {
    server = await start();
    server.store.create('namespaces', { metadata: { name: 'a' } });
    for (let i = 0; i < 7; i++) server.store.create('pods', pod(`p${i}`, { ns: i % 2 ? 'a' : 'default' }));
    const p1 = await call(server, 'GET', '/api/v1/pods?limit=3');
    expect(names(p1.body)).toEqual(['a/p1', 'a/p3', 'a/p5']);
    expect(p1.body.metadata.remainingItemCount).toBe(4);
    const token = p1.body.metadata.continue as string;
    expect(JSON.parse(Buffer.from(token, 'base64').toString())).toEqual({
      v: 'meta.k8s.io/v1',
      rv: Number(p1.body.metadata.resourceVersion),
      start: 'a/p5\u0000',
    });
    // Changes after the first page do not leak into the following pages.
    server.store.delete('pods', 'default', 'p0');
    server.store.create('pods', pod('p9'));
    const p2 = await call(server, 'GET', `/api/v1/pods?limit=3&continue=${encodeURIComponent(token)}`);
    expect(names(p2.body)).toEqual(['default/p0', 'default/p2', 'default/p4']);
    expect(p2.body.metadata.resourceVersion).toBe(p1.body.metadata.resourceVersion);
    const p3 = await call(
      server,
      'GET',
      `/api/v1/pods?limit=3&continue=${encodeURIComponent(p2.body.metadata.continue)}`,
    );
    expect(names(p3.body)).toEqual(['default/p6']);
    expect(p3.body.metadata.continue).toBeUndefined();
    const nsOnly = await call(server, 'GET', '/api/v1/namespaces/a/pods?limit=2');
    expect(names(nsOnly.body)).toEqual(['a/p1', 'a/p3']);
    expect(nsOnly.body.metadata.remainingItemCount).toBe(1);
  });

  test('an expired continue token answers 410 Expired', async () => {
    server = await start({ historySize: 5 });
    for (let i = 0; i < 4; i++) server.store.create('pods', pod(`p${i}`));
    const p1 = await call(server, 'GET', '/api/v1/pods?limit=2');
    server.faults.compact();
    const p2 = await call(
      server,
      'GET',
      `/api/v1/pods?limit=2&continue=${encodeURIComponent(p1.body.metadata.continue)}`,
    );
    expect(p2.code).toBe(410);
    expect(p2.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
    expect(p2.body.message).toMatch(/^The provided continue parameter is too old/);
    const bad = await call(server, 'GET', '/api/v1/pods?limit=2&continue=garbage');
    expect(bad.code).toBe(400);
    const withRv = await call(
      server,
      'GET',
      `/api/v1/pods?limit=2&resourceVersion=1&continue=${encodeURIComponent(p1.body.metadata.continue)}`,
    );
    expect(withRv.code).toBe(400);
  });

  test('continue works across many writes through history replay, and expires when history rolls past', async () => {
    server = await start({ historySize: 50 });
    for (let i = 0; i < 10; i++) server.store.create('pods', pod(`p${i}`));
    const p1 = await call(server, 'GET', '/api/v1/pods?limit=4');
    for (let i = 0; i < 20; i++)
      server.store.patch('pods', 'default', 'p5', 'merge', { metadata: { labels: { n: String(i) } } });
    // Evict the cached snapshot by listing at other RVs.
    for (let i = 0; i < 20; i++) {
      server.store.patch('pods', 'default', 'p1', 'merge', { metadata: { labels: { m: String(i) } } });
      await call(server, 'GET', '/api/v1/pods?limit=1');
    }
    const p2 = await call(
      server,
      'GET',
      `/api/v1/pods?limit=4&continue=${encodeURIComponent(p1.body.metadata.continue)}`,
    );
    expect(p2.code).toBe(200);
    expect(p2.body.items.find((p: any) => p.metadata.name === 'p5').metadata.labels).toBeUndefined();
    for (let i = 0; i < 60; i++)
      server.store.patch('pods', 'default', 'p9', 'merge', { metadata: { labels: { k: String(i) } } });
    for (let i = 0; i < 20; i++) await call(server, 'GET', `/api/v1/pods?limit=1&resourceVersion=`);
    const p3 = await call(
      server,
      'GET',
      `/api/v1/pods?limit=4&continue=${encodeURIComponent(p2.body.metadata.continue)}`,
    );
    expect(p3.code).toBe(410);
  });

  test('label selectors: =, ==, !=, in, notin, exists, !key', async () => {
    server = await start();
    server.store.create('pods', pod('a', { labels: { app: 'web', tier: 'fe' } }));
    server.store.create('pods', pod('b', { labels: { app: 'db', tier: 'be' } }));
    server.store.create('pods', pod('c', { labels: { app: 'web' } }));
    const sel = async (s: string) =>
      (await call(server, 'GET', `/api/v1/pods?labelSelector=${encodeURIComponent(s)}`)).body.items.map(
        (p: any) => p.metadata.name,
      );
    expect(await sel('app=web')).toEqual(['a', 'c']);
    expect(await sel('app==web,tier=fe')).toEqual(['a']);
    expect(await sel('app!=web')).toEqual(['b']);
    expect(await sel('tier in (fe,be)')).toEqual(['a', 'b']);
    expect(await sel('tier notin (fe)')).toEqual(['b', 'c']);
    expect(await sel('tier')).toEqual(['a', 'b']);
    expect(await sel('!tier')).toEqual(['c']);
    expect(
      (await call(server, 'GET', `/api/v1/pods?labelSelector=${encodeURIComponent('a b c')}`)).code,
    ).toBe(400);
  });

  test('field selectors on pods and events; unsupported field is 400', async () => {
    server = await start();
    server.store.create('pods', pod('a', { nodeName: 'n1', status: { phase: 'Running' } }));
    server.store.create('pods', pod('b', { nodeName: 'n2', status: { phase: 'Pending' } }));
    server.store.create('pods', pod('c'));
    const sel = async (s: string) =>
      (await call(server, 'GET', `/api/v1/pods?fieldSelector=${encodeURIComponent(s)}`)).body.items.map(
        (p: any) => p.metadata.name,
      );
    expect(await sel('spec.nodeName=n1')).toEqual(['a']);
    expect(await sel('spec.nodeName=')).toEqual(['c']);
    expect(await sel('status.phase!=Running')).toEqual(['b', 'c']);
    expect(await sel('metadata.name=b,metadata.namespace=default')).toEqual(['b']);
    const bad = await call(server, 'GET', '/api/v1/pods?fieldSelector=spec.foo%3Dx');
    expect(bad.code).toBe(400);
    expect(bad.body.message).toBe('field label not supported: spec.foo');
    server.store.create('events', {
      metadata: { name: 'e1', namespace: 'default' },
      involvedObject: { kind: 'Pod', name: 'a', namespace: 'default' },
      reason: 'Started',
    });
    const ev = await call(
      server,
      'GET',
      '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Da,reason%3DStarted',
    );
    expect(ev.body.items).toHaveLength(1);
  });

  test('resourceVersion semantics: 0 and empty read latest, too large is 504, Exact reads history', async () => {
    server = await start();
    server.store.create('pods', pod('a'));
    const rv = Number(server.store.resourceVersion);
    server.store.patch('pods', 'default', 'a', 'merge', { metadata: { labels: { x: 'y' } } });
    expect(
      (await call(server, 'GET', '/api/v1/pods?resourceVersion=0')).body.items[0].metadata.labels,
    ).toEqual({ x: 'y' });
    const exact = await call(server, 'GET', `/api/v1/pods?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(exact.body.metadata.resourceVersion).toBe(String(rv));
    expect(exact.body.items[0].metadata.labels).toBeUndefined();
    const tooLarge = await call(server, 'GET', `/api/v1/pods?resourceVersion=${rv + 100}`);
    expect(tooLarge.code).toBe(504);
    expect(tooLarge.body.details.causes[0].reason).toBe('ResourceVersionTooLarge');
  });
});

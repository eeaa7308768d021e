import { afterEach, describe, expect, it } from 'vitest';
import {
  InformerStoppedError,
  isTombstone,
  StatusError,
  WatchDecodeError,
  WatchIdleTimeoutError,
} from '../src/index.js';
import { setup } from './helpers.js';
import {
  fail,
  listItems,
  pod,
  type ScriptedServer,
  stall,
  status,
  watchHttpError,
} from './scripted-server.js';

type Env = Awaited<ReturnType<typeof setup>>;
let env: Env | undefined;
afterEach(async () => {
  await env?.cleanup();
  env = undefined;
});

async function started(options = {}, token?: string): Promise<Env> {
  env = await setup(options, token);
  env.server.items = [pod('a', 5), pod('b', 6)];
  env.server.listRV = '10';
  await env.informer.start();
  return env;
}

/** resourceVersion, continue and limit of every list request so far. */
const pagedListQueries = (server: ScriptedServer) =>
  server
    .requestsOf('list')
    .map((r) => [r.query.get('resourceVersion'), r.query.get('continue'), r.query.get('limit')]);

describe('list then watch', () => {
  it('lists with RV 0 and a page size, then watches from the list RV with bookmarks and a random timeout', async () => {
    const { server, informer, names } = await started(
      { labelSelector: 'app=web', fieldSelector: 'spec.nodeName=node-1' },
      'tok',
    );
    const [list] = server.requestsOf('list');
    expect(list?.query.get('resourceVersion')).toBe('0');
    expect(list?.query.get('limit')).toBe('500');
    expect(list?.query.get('labelSelector')).toBe('app=web');
    expect(list?.query.get('fieldSelector')).toBe('spec.nodeName=node-1');
    expect(list?.headers.authorization).toBe('Bearer tok');
    const conn = await server.watchConn(0);
    expect(conn.req.query.get('resourceVersion')).toBe('10');
    expect(conn.req.query.get('allowWatchBookmarks')).toBe('true');
    expect(conn.req.query.get('labelSelector')).toBe('app=web');
    expect(conn.req.query.get('fieldSelector')).toBe('spec.nodeName=node-1');
    const timeout = Number(conn.req.query.get('timeoutSeconds'));
    expect(timeout).toBeGreaterThanOrEqual(300);
    expect(timeout).toBeLessThanOrEqual(600);
    expect(names()).toEqual(['a@5', 'b@6']);
    conn.send('ADDED', pod('c', 11));
    conn.send('MODIFIED', pod('a', 12));
    conn.send('DELETED', pod('b', 13));
    conn.send('BOOKMARK', { kind: 'Pod', metadata: { resourceVersion: '20' } });
    await server.until(() => informer.lastSyncResourceVersion === '20');
    expect(names()).toEqual(['a@12', 'c@11']);
    expect(env?.seen.adds).toEqual([
      { name: 'a', initial: true },
      { name: 'b', initial: true },
      { name: 'c', initial: false },
    ]);
    expect(env?.seen.updates).toEqual([{ old: '5', new: '12' }]);
  });

  it('decodes partial chunks, several events per chunk and split UTF-8 characters', async () => {
    const { server, names, informer } = await started();
    const conn = await server.watchConn(0);
    const line1 = JSON.stringify({ type: 'ADDED', object: pod('ü-pod', 11) });
    const line2 = JSON.stringify({ type: 'ADDED', object: pod('d', 12) });
    const bytes = Buffer.from(`${line1}\n${line2}\n`);
    const cut = bytes.indexOf(Buffer.from('ü')) + 1; // inside the two-byte character
    conn.raw(bytes.subarray(0, cut));
    await new Promise((r) => setTimeout(r, 20));
    conn.raw(bytes.subarray(cut, cut + 10));
    await new Promise((r) => setTimeout(r, 20));
    conn.raw(bytes.subarray(cut + 10));
    await server.until(() => informer.lastSyncResourceVersion === '12');
    expect(names()).toEqual(['a@5', 'b@6', 'd@12', 'ü-pod@11']);
  });

  it('follows continue tokens without resourceVersion on later pages', async () => {
    env = await setup({ pageSize: 2 });
    const { server, informer, names } = env;
    server.onList(
      listItems(
        () => [pod('a', 1), pod('b', 2)],
        () => '7',
        'tok1',
      ),
    );
    server.onList(
      listItems(
        () => [pod('c', 3)],
        () => '7',
      ),
    );
    await informer.start();
    expect(pagedListQueries(server)).toEqual([
      ['0', null, '2'],
      [null, 'tok1', '2'],
    ]);
    expect(names()).toEqual(['a@1', 'b@2', 'c@3']);
    expect((await server.watchConn(0)).req.query.get('resourceVersion')).toBe('7');
  });

  it('relists in full, without pagination, when the continue token expired', async () => {
    env = await setup({ pageSize: 1 });
    const { server, informer, names, metric } = env;
    server.onList(
      listItems(
        () => [pod('a', 1)],
        () => '7',
        'tok1',
      ),
      fail(410, 'Expired'),
    );
    server.onList(
      listItems(
        () => [pod('a', 1), pod('b', 2)],
        () => '8',
      ),
    );
    await informer.start();
    expect(pagedListQueries(server)).toEqual([
      ['0', null, '1'],
      [null, 'tok1', '1'],
      ['0', null, null],
    ]);
    expect(names()).toEqual(['a@1', 'b@2']);
    expect(await metric('informer_relists_total')).toContainEqual(
      expect.objectContaining({ labels: { name: 'pods', reason: 'continue-expired' }, value: 1 }),
    );
  });
});

describe('faults', () => {
  it('rewatches from the last RV after an abrupt drop mid-stream, without relisting', async () => {
    const { server, informer, advance, errors, names } = await started();
    const conn = await server.watchConn(0);
    conn.send('ADDED', pod('c', 11));
    conn.raw('{"type":"ADDED","obj'); // half an event, then the connection dies
    await server.until(() => informer.lastSyncResourceVersion === '11');
    conn.drop();
    const next = await server.watchConn(1, advance);
    expect(next.req.query.get('resourceVersion')).toBe('11');
    expect(server.requestsOf('list')).toHaveLength(1);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    next.send('ADDED', pod('d', 12));
    await server.until(() => informer.lastSyncResourceVersion === '12');
    expect(names()).toEqual(['a@5', 'b@6', 'c@11', 'd@12']);
  });

  it('relists with a consistent read after HTTP 410 on the watch', async () => {
    env = await setup();
    const { server, informer, advance, errors } = env;
    server.items = [pod('a', 5)];
    server.listRV = '10';
    server.onWatch(watchHttpError(410, 'Expired'));
    await informer.start();
    await server.until(() => server.requestsOf('list').length === 2, advance);
    expect(server.requestsOf('list')[1]?.query.get('resourceVersion')).toBe('');
    expect(errors[0]).toBeInstanceOf(StatusError);
    expect((errors[0] as StatusError).isExpired).toBe(true);
    await server.watchConn(1, advance);
  });

  it('relists after an in-stream ERROR 410 and delivers tombstones for objects deleted meanwhile', async () => {
    const { server, informer, advance, seen, names, metric } = await started();
    const conn = await server.watchConn(0);
    server.items = [pod('a', 5), pod('c', 15)];
    server.listRV = '20';
    conn.send('ERROR', status(410, 'Expired', 'too old resource version'));
    await server.until(() => server.requestsOf('list').length === 2, advance);
    expect(server.requestsOf('list')[1]?.query.get('resourceVersion')).toBe('');
    await server.until(() => informer.lastSyncResourceVersion === '20', advance);
    expect(names()).toEqual(['a@5', 'c@15']);
    const [gone] = seen.deletes;
    expect(seen.deletes).toHaveLength(1);
    expect(gone && isTombstone(gone)).toBe(true);
    expect(gone && isTombstone(gone) ? gone.obj.metadata?.resourceVersion : '').toBe('6');
    // a@5 was unchanged by the relist: no spurious update.
    expect(seen.updates).toEqual([]);
    expect(await metric('informer_relists_total')).toContainEqual(
      expect.objectContaining({ labels: { name: 'pods', reason: 'expired' }, value: 1 }),
    );
  });

  it('backs off and rewatches (no relist) after a 500 on the watch', async () => {
    env = await setup();
    const { server, informer, advance, errors, clock } = env;
    server.listRV = '3';
    server.onWatch(watchHttpError(500, 'InternalError'), watchHttpError(500, 'InternalError'));
    await informer.start();
    await server.until(() => errors.length === 1);
    const t0 = clock.now();
    await server.watchConn(2, advance);
    // 400 ms then 800 ms, each × 1.25 (jitter 0.5 at random 0.5): 1.5 s of backoff on the
    // fake clock, which the test advances in 500 ms steps.
    expect(clock.now() - t0).toBeGreaterThanOrEqual(500 + 1000 - 500);
    expect(server.requestsOf('list')).toHaveLength(1);
    expect(server.requestsOf('watch').map((r) => r.query.get('resourceVersion'))).toEqual(['3', '3', '3']);
  });

  it('keeps retrying a failing initial list without resolving start(), reporting each error', async () => {
    env = await setup();
    const { server, informer, advance, errors, metric } = env;
    server.onList(fail(500, 'InternalError'), fail(500, 'InternalError'), fail(503, 'ServiceUnavailable'));
    let resolved = false;
    const start = informer.start().then(() => {
      resolved = true;
    });
    await server.until(() => errors.length === 3, advance);
    expect(resolved).toBe(false);
    expect(informer.hasSynced()).toBe(false);
    await server.until(() => resolved, advance);
    await start;
    expect(server.requestsOf('list')).toHaveLength(4);
    expect(await metric('informer_relists_total')).toContainEqual(
      expect.objectContaining({ labels: { name: 'pods', reason: 'error' }, value: 3 }),
    );
  });

  it('detects a stalled watch with the idle timeout and rewatches', async () => {
    env = await setup({ idleTimeoutMs: 30_000 });
    const { server, informer, advance, errors, clock, metric } = env;
    server.listRV = '4';
    server.onWatch(stall);
    await informer.start();
    await server.watchConn(0);
    const t0 = clock.now();
    await server.watchConn(1, () => clock.advance(5000));
    expect(clock.now() - t0).toBeGreaterThanOrEqual(30_000);
    expect(errors[0]).toBeInstanceOf(WatchIdleTimeoutError);
    expect(server.requestsOf('watch')[1]?.query.get('resourceVersion')).toBe('4');
    expect(await metric('informer_watch_restarts_total')).toContainEqual(
      expect.objectContaining({ labels: { name: 'pods', reason: 'idle' }, value: 1 }),
    );
    void advance;
  });

  it('bookmarks and partial bytes keep a watch alive past the idle timeout', async () => {
    env = await setup({ idleTimeoutMs: 30_000 });
    const { server, informer, clock } = env;
    await informer.start();
    const conn = await server.watchConn(0);
    for (let i = 0; i < 6; i++) {
      conn.send('BOOKMARK', { metadata: { resourceVersion: String(100 + i) } });
      await server.until(() => informer.lastSyncResourceVersion === String(100 + i));
      await clock.advance(20_000);
    }
    expect(server.watchCount).toBe(1);
  });

  it('reports a malformed line as an error and restarts the watch from the last good RV', async () => {
    const { server, informer, advance, errors, names } = await started();
    const conn = await server.watchConn(0);
    conn.raw(`${JSON.stringify({ type: 'ADDED', object: pod('c', 11) })}\nthis is not json\n`);
    const next = await server.watchConn(1, advance);
    expect(errors[0]).toBeInstanceOf(WatchDecodeError);
    expect(next.req.query.get('resourceVersion')).toBe('11');
    expect(names()).toEqual(['a@5', 'b@6', 'c@11']);
    expect(informer.isStopped).toBe(false);
  });

  it('treats a watch that closes at once without events as a failure (no hot loop)', async () => {
    const { server, clock } = await started();
    const advance = () => clock.advance(3000);
    server.onWatch(
      (c) => c.end(),
      (c) => c.end(),
    );
    (await server.watchConn(0)).end();
    const t0 = clock.now();
    await server.watchConn(3, advance);
    expect(clock.now() - t0).toBeGreaterThanOrEqual(1000);
  });
});

describe('start()', () => {
  it('rejects with InformerStoppedError when stopped before syncing', async () => {
    env = await setup();
    const { server, informer } = env;
    server.onList(fail(500, 'InternalError'));
    const controller = new AbortController();
    const start = informer.start(controller.signal);
    await server.until(() => server.requestsOf('list').length === 1);
    void informer.stop();
    await expect(start).rejects.toBeInstanceOf(InformerStoppedError);
    await expect(informer.waitForSync()).rejects.toBeInstanceOf(InformerStoppedError);
  });

  it('rejects with the abort reason and stops when its signal aborts before syncing', async () => {
    env = await setup();
    const { server, informer } = env;
    server.onList(fail(500, 'InternalError'));
    const controller = new AbortController();
    const start = informer.start(controller.signal);
    await server.until(() => server.requestsOf('list').length === 1);
    controller.abort(new Error('gave up waiting'));
    await expect(start).rejects.toThrow('gave up waiting');
    expect(informer.isStopped).toBe(true);
    await expect(informer.waitForSync()).rejects.toBeInstanceOf(InformerStoppedError);
  });

  it('keeps running when its signal aborts after the initial sync', async () => {
    env = await setup();
    const { server, informer, names } = env;
    server.items = [pod('a', 1)];
    const controller = new AbortController();
    await informer.start(controller.signal);
    controller.abort();
    expect(informer.isStopped).toBe(false);
    expect(names()).toEqual(['a@1']);
  });
});

describe('streaming list', () => {
  it('uses sendInitialEvents and replaces the store at the initial-events-end bookmark', async () => {
    env = await setup({ useWatchList: true });
    const { server, informer, names, seen } = env;
    server.onWatch((c) => {
      c.send('ADDED', pod('a', 3));
      c.send('ADDED', pod('b', 4));
      c.send('BOOKMARK', {
        metadata: { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } },
      });
    });
    await informer.start();
    expect(server.requestsOf('list')).toHaveLength(0);
    const q = server.requestsOf('watch')[0]?.query;
    expect(q?.get('sendInitialEvents')).toBe('true');
    expect(q?.get('resourceVersionMatch')).toBe('NotOlderThan');
    expect(q?.get('allowWatchBookmarks')).toBe('true');
    expect(names()).toEqual(['a@3', 'b@4']);
    expect(informer.lastSyncResourceVersion).toBe('9');
    const conn = await server.watchConn(0);
    conn.send('ADDED', pod('c', 10));
    await server.until(() => informer.lastSyncResourceVersion === '10');
    await server.until(() => seen.adds.length === 3);
    expect(seen.adds.map((a) => a.initial)).toEqual([true, true, false]);
  });

  it('falls back to list+watch when the server rejects the streaming list', async () => {
    env = await setup({ useWatchList: true });
    const { server, informer, advance, names } = env;
    server.items = [pod('a', 3)];
    server.listRV = '5';
    server.onWatch(watchHttpError(422, 'Invalid'));
    await informer.start();
    expect(names()).toEqual(['a@3']);
    const conn = await server.watchConn(1, advance);
    expect(conn.req.query.get('sendInitialEvents')).toBeNull();
    expect(conn.req.query.get('resourceVersion')).toBe('5');
  });

  it.each([
    [401, 'Unauthorized', 'true'],
    [403, 'Forbidden', 'true'],
    [422, 'Invalid', null],
  ])(
    'after a %i %s on the streaming list, the next relist sends sendInitialEvents=%s',
    async (code, reason, again) => {
      env = await setup({ useWatchList: true });
      const { server, informer, advance } = env;
      server.items = [pod('a', 3)];
      server.listRV = '5';
      // Streaming list refused → list+watch; that watch gets 410 → relist.
      server.onWatch(watchHttpError(code, reason), watchHttpError(410, 'Expired'));
      await informer.start();
      const conn = await server.watchConn(2, advance);
      expect(conn.req.query.get('sendInitialEvents')).toBe(again);
    },
  );
});

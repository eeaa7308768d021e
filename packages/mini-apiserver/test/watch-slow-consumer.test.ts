import http from 'node:http';
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { openWatch, pod, start } from './helpers.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

const BIG = 'x'.repeat(8 * 1024);
const tick = () => new Promise((r) => setImmediate(r));

/** Stores pod `big` with an 8 KiB annotation: every event about it is large. */
function createBigPod(): void {
  server.store.create('pods', {
    ...pod('big'),
    metadata: { name: 'big', namespace: 'default', annotations: { a: BIG } },
  });
}

/**
 * Patches pod `big` until the server closes a slow watch; returns how many patches that took.
 * Loopback socket buffers absorb a few MB before writes block; bounded (4000) so a regression
 * fails instead of hanging.
 */
async function patchUntilSlowWatchClosed(): Promise<number> {
  let updates = 0;
  while (server.slowWatchesClosed === 0 && updates < 4000) {
    for (let i = 0; i < 20; i++, updates++) {
      server.store.patch('pods', 'default', 'big', 'merge', {
        metadata: { labels: { n: String(updates) } },
      });
    }
    await tick();
  }
  return updates;
}

/** Opens a watch whose client reads nothing until `resume()` is called. */
function pausedWatch(path: string): Promise<{
  res: http.IncomingMessage;
  resume(): Promise<{
    lines: Array<{ type: string; object: { metadata: { resourceVersion: string } } }>;
    clean: boolean;
  }>;
}> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.url}${path}`, { agent: false }, (res) => {
      res.pause();
      resolve({
        res,
        resume: () =>
          new Promise((done) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => {
              text += c;
            });
            const finish = (clean: boolean) => () =>
              done({
                lines: text
                  .split('\n')
                  .filter((l) => l !== '')
                  .map((l) => JSON.parse(l)),
                clean,
              });
            res.on('end', finish(true));
            res.on('error', finish(false));
            res.resume();
          }),
      });
    });
    req.on('error', reject);
  });
}

describe('watch buffer: slow consumers', () => {
  test('a client that stops reading is cut off cleanly once its buffer overflows, and resumes from its last RV', async () => {
    server = await start({ watchBufferMaxEvents: 50, historySize: 5000 });
    createBigPod();
    const fromRv = server.store.resourceVersion;
    const watch = await pausedWatch(`/api/v1/namespaces/default/pods?watch=1&resourceVersion=${fromRv}`);
    const updates = await patchUntilSlowWatchClosed();
    expect(server.slowWatchesClosed).toBe(1);
    expect(server.openWatches).toBe(0);
    const { lines, clean } = await watch.resume();
    // The server ended the response normally (no error event, no reset) …
    expect(clean).toBe(true);
    expect(lines.every((l) => l.type === 'MODIFIED')).toBe(true);
    // … after a prefix of the events: what it could not deliver was dropped …
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(updates);
    const lastRv = lines.at(-1)?.object.metadata.resourceVersion ?? '';
    expect(Number(lastRv)).toBeLessThan(Number(server.store.resourceVersion));
    // … and a re-watch from the last delivered RV gets exactly the rest.
    const rewatch = await openWatch(
      server,
      `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${lastRv}`,
    );
    const rest = await rewatch.waitFor(updates - lines.length, 10_000);
    expect(rest.at(-1)?.object.metadata.resourceVersion).toBe(server.store.resourceVersion);
    expect(lines.length + rest.length).toBe(updates);
    rewatch.close();
  });

  test('a burst of synchronous writes to a client that keeps reading is not an overflow', async () => {
    server = await start({ watchBufferMaxEvents: 50 });
    const w = await openWatch(server, `/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`);
    for (let i = 0; i < 500; i++) server.store.create('pods', pod(`p${i}`));
    expect((await w.waitFor(500, 10_000)).length).toBe(500);
    expect(server.slowWatchesClosed).toBe(0);
    w.close();
  });

  test('the initial state of a watch does not count against the buffer', async () => {
    server = await start({ watchBufferMaxEvents: 10 });
    for (let i = 0; i < 300; i++) server.store.create('pods', pod(`p${i}`));
    const w = await openWatch(server, '/api/v1/pods?watch=1');
    server.store.create('pods', pod('live'));
    expect((await w.waitFor(301, 10_000)).at(-1)?.object.metadata.name).toBe('live');
    expect(server.slowWatchesClosed).toBe(0);
    w.close();
  });

  test('the byte bound works on its own (watchBufferMaxEvents: 0 turns the event bound off)', async () => {
    server = await start({ watchBufferMaxEvents: 0, watchBufferMaxBytes: 256 * 1024 });
    createBigPod();
    const watch = await pausedWatch(`/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`);
    await patchUntilSlowWatchClosed();
    expect(server.slowWatchesClosed).toBe(1);
    expect((await watch.resume()).clean).toBe(true);
  });
});

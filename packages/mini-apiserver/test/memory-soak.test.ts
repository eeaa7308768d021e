// A bounded soak on loopback: sustained writes of 100 KB objects (patches of one pod plus
// create/delete churn), first with no watcher, then with three watchers that read everything.
// After a warm-up that fills the byte-bounded watch history, the heap after a forced GC levels
// off: 45 MB more of events (3 per round) written adds far less than that. Before the bound (10,000 full copies per
// resource) the same run grew by about the volume written.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { call, pod, start } from './helpers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

const PODS = '/api/v1/namespaces/default/pods';
const HISTORY_MAX_BYTES = 4 * 1024 * 1024;
const BLOB_BYTES = 100 * 1024;
const MiB = 1024 * 1024;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** `n` rounds of: a 100 KB patch of pod `hot`, and a 100 KB pod created and deleted. */
async function write(n: number, round: { i: number }): Promise<void> {
  for (let k = 0; k < n; k++, round.i++) {
    const blob = String(round.i % 10).repeat(BLOB_BYTES);
    const patched = await call(
      server,
      'PATCH',
      `${PODS}/hot`,
      { metadata: { annotations: { blob } } },
      'application/merge-patch+json',
    );
    expect(patched.code).toBe(200);
    const churn = pod(`churn-${round.i}`);
    churn.metadata = { ...churn.metadata, annotations: { blob } };
    expect((await call(server, 'POST', PODS, churn)).code).toBe(201);
    expect((await call(server, 'DELETE', `${PODS}/churn-${round.i}`)).code).toBe(200);
    expect(server.store.historyBytes).toBeLessThanOrEqual(HISTORY_MAX_BYTES);
  }
}

/** A watcher that reads and counts every byte but keeps nothing (a well-behaved client). */
function drainingWatch(): { bytes: () => number; close: () => void } {
  const ac = new AbortController();
  let bytes = 0;
  void (async () => {
    const res = await fetch(`${server.url}${PODS}?watch=true`, { signal: ac.signal });
    for await (const chunk of res.body ?? []) bytes += (chunk as Uint8Array).length;
  })().catch(() => {});
  return { bytes: () => bytes, close: () => ac.abort() };
}

describe('memory under sustained writes levels off', () => {
  test.each([
    ['without watchers', 0],
    ['with three watchers', 3],
  ])(
    '%s',
    async (_, watcherCount) => {
      server = await start({ historyMaxBytes: HISTORY_MAX_BYTES });
      expect((await call(server, 'POST', PODS, pod('hot'))).code).toBe(201);
      const watchers = Array.from({ length: watcherCount }, drainingWatch);
      const round = { i: 0 };
      await write(60, round); // 18 MB of events: the 4 MiB history is full from here on
      const warm = heapAfterGc();
      await write(150, round); // 45 MB more of events (3 per round)
      const after = heapAfterGc();
      const grewMiB = (after - warm) / MiB;
      console.log(
        `soak ${watcherCount} watchers: heap ${(warm / MiB).toFixed(1)} → ${(after / MiB).toFixed(1)} MiB after 45 MB of events; history ${(server.store.historyBytes / MiB).toFixed(1)} MiB; rss ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB`,
      );
      // Unbounded, the history alone would have grown by ~45 MB; bounded, what is left is noise.
      expect(grewMiB).toBeLessThan(10);
      if (watcherCount > 0) {
        const deadline = Date.now() + 5_000;
        while (watchers.some((w) => w.bytes() < 30 * MiB) && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 50));
        for (const w of watchers) expect(w.bytes()).toBeGreaterThan(30 * MiB); // they did receive everything
      }
      for (const w of watchers) w.close();
    },
    60_000,
  );
});

/**
 * Recovery after a burst of faults, in wall-clock time, against the fault-injecting
 * mini-apiserver: a stall, an abrupt drop, an in-stream 410 followed by two failing relists,
 * compaction + a failing rewatch + drop, and a drop followed by two failing rewatches, 2 s
 * apart, with writes after each. For each fault: the time from the last failure the informer
 * saw to the moment its cache equals the server. Then the request rate against a permanently
 * failing server and a watch-accept-then-drop server, in informer time (FakeClock driven from
 * timer to timer, as in test/fault-suite.test.ts).
 *
 * "ours" runs with the default options (the stall is detected with a 3 s idle timeout against
 * a 2 s bookmark interval, the same 1.5 ratio as the 90 s default against kube-apiserver's
 * one-minute bookmarks). The reference runs the same informer with client-go's reflector
 * backoff parameters (800 ms doubling to 30 s, jitter 1.0, reset after 2 min without failure);
 * it keeps our reset-on-healthy-watch and 410 rules, so it is not client-go itself.
 */

import { KubeConfig } from '@kubernetes/client-node';
import { FakeClock } from '@nodeagent/core/testing';
import { describe, it } from 'vitest';
import { startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { RestListerWatcher, SharedInformer, type SharedInformerOptions } from '../src/index.js';
import { driveUntil, inWindow, T0 } from '../test/drive.js';
import { podsView, writePod } from '../test/server-pods.js';

const PODS = '/api/v1/pods';
const CLIENT_GO_BACKOFF = { initialMs: 800, factor: 2, capMs: 30_000, jitter: 1, resetAfterMs: 120_000 };
const CONFIGS: { readonly name: string; readonly options: SharedInformerOptions }[] = [
  { name: 'ours (defaults)', options: {} },
  { name: "client-go's backoff parameters", options: { backoff: CLIENT_GO_BACKOFF } },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function burst(options: SharedInformerOptions): Promise<number[]> {
  const server = await startMiniApiServer({
    bookmarkIntervalMs: 2000,
    historySize: 50,
    autoCreateNamespaces: true,
  });
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig);
  const lw = new RestListerWatcher({ kubeConfig: kc, path: PODS });
  const informer = new SharedInformer(lw, { idleTimeoutMs: 3000, ...options });
  let lastFailure = 0;
  informer.on('watchError', () => {
    lastFailure = performance.now();
  });
  const results: number[] = [];
  try {
    writePod(server, 'a', 0);
    await informer.start();
    const faults: (() => void)[] = [
      () => server.faults.stallWatches(),
      () => server.faults.dropWatches(),
      () => {
        server.faults.failNext(2, { code: 500, watch: false, path: PODS });
        server.faults.expireWatches();
      },
      () => {
        server.faults.compact();
        server.faults.failNext(1, { code: 503, watch: true, path: PODS });
        server.faults.dropWatches();
      },
      () => {
        server.faults.failNext(2, { code: 500, watch: true, path: PODS });
        server.faults.dropWatches();
      },
    ];
    let n = 0;
    for (const fault of faults) {
      await sleep(2000);
      const from = performance.now();
      lastFailure = 0;
      fault();
      n++;
      writePod(server, `p${n}`, n);
      writePod(server, 'a', n);
      while (podsView(informer.lister.list()) !== podsView(server.store.list('pods'))) await sleep(5);
      results.push(performance.now() - Math.max(from, lastFailure));
    }
  } finally {
    await informer.stop();
    lw.close();
    await server.stop();
  }
  return results;
}

async function rates(
  options: SharedInformerOptions,
  mode: 'failing' | 'accept-drop',
): Promise<[number, number]> {
  const server = await startMiniApiServer({ bookmarkIntervalMs: 3_600_000, autoCreateNamespaces: true });
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig);
  const clock = new FakeClock({ startMs: T0 });
  const lw = new RestListerWatcher({ kubeConfig: kc, path: PODS });
  const informer = new SharedInformer(lw, {
    clock,
    ...(mode === 'accept-drop' ? { idleTimeoutMs: 0 } : {}),
    ...options,
  });
  const at: number[] = [];
  let cutter: ReturnType<typeof setInterval> | undefined;
  try {
    if (mode === 'failing') {
      server.faults.failNext(1_000_000, { code: 500, watch: false, path: PODS });
      void informer.start().catch(() => {});
    } else {
      writePod(server, 'a', 0);
      await informer.start();
      cutter = setInterval(() => server.faults.dropWatches(), 2);
    }
    await driveUntil(
      {
        clock,
        requestCount: () => server.requests.filter((r) => r.path === PODS).length,
        busy: () => mode === 'accept-drop' && server.openWatches > 0,
      },
      10 * 60_000,
      at,
    );
  } finally {
    if (cutter) clearInterval(cutter);
    await informer.stop();
    lw.close();
    await server.stop();
  }
  return [inWindow(at, 0, 60_000), inWindow(at, 5 * 60_000, 10 * 60_000) / 5];
}

describe('informer recovery', () => {
  it('converges after each fault of a burst; request rates against failing servers', async () => {
    const rows: string[] = [];
    for (const { name, options } of CONFIGS) {
      const r = await burst(options);
      rows.push(
        `| ${name} | ${r.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(' | ')} | ${(Math.max(...r) / 1000).toFixed(2)} s |`,
      );
    }
    console.log(
      [
        '| config | stall (after the 3 s idle timeout fired) | drop | 410 + 2 failing lists | compact + 503 + drop | drop + 2 failing watches | worst |',
        '|---|---|---|---|---|---|---|',
        ...rows,
      ].join('\n'),
    );
    const rateRows: string[] = [];
    for (const { name, options } of CONFIGS) {
      const [failFirst, failSteady] = await rates(options, 'failing');
      const [dropFirst, dropSteady] = await rates(options, 'accept-drop');
      rateRows.push(
        `| ${name} | ${failFirst} | ${failSteady.toFixed(1)} | ${dropFirst} | ${dropSteady.toFixed(1)} |`,
      );
    }
    console.log(
      [
        '| config | failing list: requests in minute 1 | failing list: requests/min (minutes 5-10) | accept-then-drop watch: requests in minute 1 | accept-then-drop: requests/min (minutes 5-10) |',
        '|---|---|---|---|---|',
        ...rateRows,
      ].join('\n'),
    );
  });
});

/**
 * Reliability comparison: @kubernetes/client-node 1.4 `makeInformer` (used as documented,
 * no hand-written restart logic) vs @nodeagent/informer (defaults, except a 2 s idle
 * timeout so the stall scenario fits the run), each against a fresh mini-apiserver per
 * fault scenario. After the fault, 5 pods are created, 5 updated and 5 deleted; the table
 * shows how each cache compares with the server's truth and how long convergence took.
 */
import { CoreV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
import { describe, it } from 'vitest';
import { type MiniApiServer, startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { type KubeObject, RestListerWatcher, SharedInformer } from '../src/index.js';

type Scenario = 'first list 500' | 'abrupt drop' | 'in-stream 410' | 'watch 500' | 'stalled watch';
const SCENARIOS: Scenario[] = [
  'first list 500',
  'abrupt drop',
  'in-stream 410',
  'watch 500',
  'stalled watch',
];
const WAIT_MS = 8000;

interface Probe {
  keys(): Map<string, string>;
  errors: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const mkPod = (name: string, v = '0'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { v } },
  spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox' }] },
});

function clientNode(kc: KubeConfig): Probe {
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
  const probe: Probe = {
    errors: 0,
    keys: () =>
      new Map(
        informer
          .list()
          .map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, p.metadata?.resourceVersion ?? '']),
      ),
    start: () => informer.start(),
    stop: async () => informer.stop(),
  };
  informer.on('error', () => {
    probe.errors++;
  });
  return probe;
}

function ours(kc: KubeConfig): Probe {
  const lw = new RestListerWatcher({ kubeConfig: kc, path: '/api/v1/pods' });
  const informer = new SharedInformer(lw, { idleTimeoutMs: 2000 });
  const probe: Probe = {
    errors: 0,
    keys: () =>
      new Map(
        informer.lister
          .list()
          .map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, p.metadata?.resourceVersion ?? '']),
      ),
    start: () => informer.start(),
    stop: async () => {
      await informer.stop();
      lw.close();
    },
  };
  informer.on('watchError', () => {
    probe.errors++;
  });
  return probe;
}

function diff(server: MiniApiServer, probe: Probe) {
  const truth = new Map(
    server.store
      .list('pods')
      .map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, String(p.metadata?.resourceVersion)]),
  );
  const cache = probe.keys();
  let missing = 0;
  let stale = 0;
  let extra = 0;
  for (const [k, rv] of truth) {
    const c = cache.get(k);
    if (c === undefined) missing++;
    else if (c !== rv) stale++;
  }
  for (const k of cache.keys()) if (!truth.has(k)) extra++;
  return { missing, stale, extra };
}

async function runScenario(scenario: Scenario, make: (kc: KubeConfig) => Probe) {
  const server = await startMiniApiServer({ autoCreateNamespaces: true, bookmarkIntervalMs: 1000 });
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig);
  for (let i = 0; i < 10; i++) server.store.create('pods', mkPod(`p${i}`) as never);
  const probe = make(kc);
  let startOutcome = 'resolved';
  try {
    if (scenario === 'first list 500') server.faults.failNext(1, { code: 500, watch: false });
    const started = probe.start().then(
      () => 'resolved',
      (e: unknown) => `rejected: ${String(e)}`,
    );
    startOutcome = await Promise.race([
      started,
      new Promise<string>((r) => setTimeout(() => r('pending'), 5000)),
    ]);
    if (startOutcome === 'resolved') startOutcome = `resolved with ${probe.keys().size} pods`;
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    if (scenario === 'abrupt drop') server.faults.dropWatches();
    if (scenario === 'in-stream 410') server.faults.expireWatches();
    if (scenario === 'watch 500') {
      server.faults.failNext(1, { code: 500, watch: true });
      server.faults.dropWatches();
    }
    if (scenario === 'stalled watch') server.faults.stallWatches();
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 10; i < 15; i++) server.store.create('pods', mkPod(`p${i}`) as never);
    for (let i = 0; i < 5; i++) {
      const cur = server.store.get('pods', 'default', `p${i}`);
      server.store.update('pods', { ...cur, metadata: { ...cur.metadata, labels: { v: '1' } } } as never);
    }
    for (let i = 5; i < 10; i++) server.store.delete('pods', 'default', `p${i}`, { gracePeriodSeconds: 0 });
    let convergedMs: number | undefined;
    while (Date.now() - t0 < WAIT_MS) {
      const d = diff(server, probe);
      if (d.missing + d.stale + d.extra === 0) {
        convergedMs = Date.now() - t0;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const d = diff(server, probe);
    return { ...d, convergedMs, startOutcome, errors: probe.errors, watching: server.openWatches > 0 };
  } finally {
    await probe.stop();
    await server.stop();
  }
}

describe('reliability: client-node makeInformer vs @nodeagent/informer under faults', () => {
  it('prints missing/extra/stale objects and convergence per fault', async () => {
    const rows: string[][] = [];
    for (const scenario of SCENARIOS) {
      for (const [name, make] of [
        ['client-node', clientNode],
        ['ours', ours],
      ] as const) {
        const r = await runScenario(scenario, make);
        rows.push([
          scenario,
          name,
          r.startOutcome,
          String(r.missing),
          String(r.extra),
          String(r.stale),
          r.convergedMs === undefined ? `no (>${WAIT_MS} ms)` : `${r.convergedMs} ms`,
          String(r.errors),
          r.watching ? 'yes' : 'no',
        ]);
      }
    }
    const header = [
      'fault',
      'client',
      'start()',
      'missing',
      'extra',
      'stale',
      'converged',
      'errors seen',
      'watching',
    ];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ');
    console.log(
      `\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('-|-')}\n${rows.map(line).join('\n')}\n`,
    );
  });
});

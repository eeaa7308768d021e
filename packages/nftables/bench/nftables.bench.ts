/**
 * nftables benchmark: render time (full, one-service partial), full apply into a fresh
 * namespace (kube-proxy layout vs optimized layout), and one-service change transactions
 * (time and size) with the full ruleset loaded. Sizes via NFT_BENCH_SIZES (default
 * 1000,5000,10000), 10 endpoints per service. Prints a table; asserts nothing about speed.
 */
import { ProxyState } from '@nodeagent/proxy-state';
import { afterAll, it } from 'vitest';
import { createNetns, type Netns } from '../../../test/support/netns.js';
import { realNodeMissing } from '../../../test/support/real-node.js';
import { NftablesRenderer, NftablesSyncer, type NftLayout, SpawnNftExecutor } from '../src/index.js';
import { FakeNftExecutor } from '../src/testing.js';

const SIZES = (process.env.NFT_BENCH_SIZES ?? '1000,5000,10000').split(',').map(Number);
const EPS = 10;
/** kube-proxy's layout as ONE transaction is quadratic in the kernel: measured only up to this size. */
const KP_SINGLE_MAX = Number(process.env.NFT_BENCH_KP_MAX ?? 2000);
const FACTS_KP_SINGLE: Record<number, string> = {
  5000: '42.3 s (facts)',
  10000: '151.4 s (facts)',
  20000: '~542 s predicted (facts)',
};

function cluster(n: number): ProxyState {
  const state = new ProxyState({ nodeName: 'node', nodeIPs: ['192.168.0.2'] });
  for (let i = 0; i < n; i++) {
    const ip = `172.30.${i >> 8}.${i & 255}`;
    state.onServiceAdd({
      metadata: { namespace: 'bench', name: `svc${i}` },
      spec: { clusterIP: ip, ports: [{ name: 'http', port: 80 }] },
    });
    state.onEndpointSliceAdd({
      metadata: {
        namespace: 'bench',
        name: `svc${i}-1`,
        labels: { 'kubernetes.io/service-name': `svc${i}` },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: Array.from({ length: EPS }, (_, j) => ({
        addresses: [`10.${(i >> 8) & 255}.${i & 255}.${j + 1}`],
      })),
    });
  }
  return state;
}

function changeOne(state: ProxyState, i: number, gen: number): void {
  state.onEndpointSliceUpdate(undefined, {
    metadata: { namespace: 'bench', name: `svc${i}-1`, labels: { 'kubernetes.io/service-name': `svc${i}` } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: EPS }, (_, j) => ({ addresses: [`10.250.${gen & 255}.${j + 1}`] })),
  });
}

const ms = (t: number) => (t >= 1000 ? `${(t / 1000).toFixed(2)} s` : `${t.toFixed(1)} ms`);
const rows: Record<string, string>[] = [];
const spaces: Netns[] = [];

afterAll(async () => {
  await Promise.all(spaces.map((s) => s.stop()));
  console.log('\nnftables benchmark (10 endpoints per service)');
  console.table(rows);
});

const canApply = realNodeMissing(['root', 'netns', 'nft']).length === 0;
const opts = { localDetector: { mode: 'ClusterCIDR' as const, cidr: '10.0.0.0/8' } };

for (const n of SIZES) {
  for (const layout of ['kube-proxy', 'optimized'] as NftLayout[]) {
    it(`${n} services, ${layout}`, async () => {
      const state = cluster(n);
      const row: Record<string, string> = { services: String(n), layout };
      // Render: full, then one-service partial (plan against a fake mirror).
      let t0 = performance.now();
      const renderer = new NftablesRenderer({ ...opts, layout });
      const snap = state.checkout().v4;
      const { ruleset } = renderer.render(snap);
      row['render full'] = ms(performance.now() - t0);
      const fakeSyncer = new NftablesSyncer({ executor: new FakeNftExecutor(), render: { ...opts, layout } });
      (fakeSyncer as unknown as { renderer: NftablesRenderer }).renderer; // same renderer kind
      const planner = fakeSyncer.planner;
      const full = planner.planFull(ruleset, 0);
      full.commit();
      row['full tx'] = `${(full.text.length / 1e6).toFixed(1)} MB`;
      changeOne(state, 1, 1);
      t0 = performance.now();
      const snap2 = state.checkout().v4;
      const r2 = renderer.render(snap2);
      const partial = planner.planPartial(r2.ruleset, 1, snap2.changedServices);
      row['render+plan 1 change'] = ms(performance.now() - t0);
      row['1-change tx'] = `${partial.lines} lines, ${partial.text.length} B`;

      if (!canApply) {
        rows.push(row);
        return;
      }
      if (layout === 'kube-proxy' && n > KP_SINGLE_MAX) {
        row['apply full (1 nft -f)'] = `skipped: ${FACTS_KP_SINGLE[n] ?? 'minutes'}`;
        rows.push(row);
        return;
      }
      const ns = await createNetns('nftb');
      spaces.push(ns);
      const syncer = new NftablesSyncer({
        executor: new SpawnNftExecutor({ netns: ns.name }),
        render: { ...opts, layout },
      });
      const fresh = cluster(n);
      t0 = performance.now();
      await syncer.sync(fresh.checkout().v4);
      row['apply full (1 nft -f)'] = ms(performance.now() - t0);
      const times: number[] = [];
      for (let k = 0; k < 3; k++) {
        changeOne(fresh, 2 + k, 10 + k);
        t0 = performance.now();
        const r = await syncer.sync(fresh.checkout().v4);
        times.push(performance.now() - t0);
        if (r.full) throw new Error('expected a partial sync');
      }
      times.sort((a, b) => a - b);
      row['apply 1 change (median)'] = ms(times[1]!);
      await ns.stop();
      rows.push(row);
    }, 1_800_000);
  }
}

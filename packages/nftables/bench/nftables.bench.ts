/**
 * nftables benchmark, both layouts in one run: render time (full and one-service partial,
 * wall and CPU), full apply into a fresh namespace, the fixed cost of any nft call that
 * touches the loaded table, and one-service change transactions at the same loaded size.
 *
 * kube-proxy's layout as ONE transaction is quadratic in the kernel (151 s at 10,000 in the
 * facts), so above NFT_BENCH_KP_MAX services it is loaded the way services appear: 1,000
 * services per transaction (partial syncs that each add 1,000 services).
 *
 * Sizes via NFT_BENCH_SIZES (default 1000,5000,10000), 10 endpoints per service.
 * NFT_BENCH_REPEAT (default 5) one-change transactions per layout. Prints a table; asserts
 * nothing about speed.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { ProxyState } from '@nodeagent/proxy-state';
import { createNetns } from '@nodeagent/test-support/netns';
import { realNodeMissing } from '@nodeagent/test-support/real-node';
import { afterAll, it } from 'vitest';
import {
  type NftExecutor,
  type NftLayout,
  NftRenderer,
  NftSyncer,
  NftSyncPlanner,
  SpawnNftExecutor,
} from '../src/index.js';

const SIZES = (process.env.NFT_BENCH_SIZES ?? '1000,5000,10000').split(',').map(Number);
const EPS = 10;
const REPEAT = Number(process.env.NFT_BENCH_REPEAT ?? 5);
/** Above this, kube-proxy's layout is loaded in 1,000-service transactions. */
const KP_SINGLE_MAX = Number(process.env.NFT_BENCH_KP_MAX ?? 1000);
const CHUNK = 1000;

function addService(state: ProxyState, i: number): void {
  state.onServiceAdd({
    metadata: { namespace: 'bench', name: `svc${i}` },
    spec: { clusterIP: `172.30.${i >> 8}.${i & 255}`, ports: [{ name: 'http', port: 80 }] },
  });
  state.onEndpointSliceAdd({
    metadata: { namespace: 'bench', name: `svc${i}-1`, labels: { 'kubernetes.io/service-name': `svc${i}` } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: EPS }, (_, j) => ({
      addresses: [`10.${(i >> 8) & 255}.${i & 255}.${j + 1}`],
    })),
  });
}

function cluster(n: number): ProxyState {
  const state = new ProxyState({ nodeName: 'node', nodeIPs: ['192.168.0.2'] });
  for (let i = 0; i < n; i++) addService(state, i);
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

const fmt = (t: number) => (t >= 1000 ? `${(t / 1000).toFixed(2)} s` : `${t.toFixed(t < 10 ? 1 : 0)} ms`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpuNow = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
/** CPU of reaped child processes (nft), ms, from /proc/self/stat (10 ms resolution). */
function childCpuMs(): number {
  const f = readFileSync('/proc/self/stat', 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[13]) + Number(rest[14])) * 10;
}

/** Wall time spent inside the executor's apply (the nft process), summed. */
class TimingExecutor implements NftExecutor {
  applyMs = 0;
  constructor(readonly inner: NftExecutor) {}
  async apply(text: string): Promise<void> {
    const t = performance.now();
    try {
      await this.inner.apply(text);
    } finally {
      this.applyMs += performance.now() - t;
    }
  }
  check(text: string): Promise<void> {
    return this.inner.check(text);
  }
  listObjects(...a: Parameters<NftExecutor['listObjects']>): ReturnType<NftExecutor['listObjects']> {
    return this.inner.listObjects(...a);
  }
}

const rows: Record<string, string>[] = [];
afterAll(() => {
  console.log(
    `\nnftables benchmark (10 endpoints per service; 1-min load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores; medians, cpu = this process / nft process)`,
  );
  console.table(rows);
});

const canApply = realNodeMissing(['root', 'netns', 'nft']).length === 0;
const opts = { localDetector: { mode: 'ClusterCIDR' as const, cidr: '10.0.0.0/8' } };

for (const n of SIZES) {
  for (const layout of ['kube-proxy', 'optimized'] as NftLayout[]) {
    it(`${n} services, ${layout}`, async () => {
      const state = cluster(n);
      const row: Record<string, string> = { services: String(n), layout };
      let t0 = performance.now();
      const snap = state.checkout().v4;
      for (const key of snap.services.keys()) snap.categorize(key);
      row['checkout+categorize (proxy-state)'] = fmt(performance.now() - t0);

      // Full render (fresh renderer: cold caches) and the full transaction text.
      const walls: number[] = [];
      const cpus: number[] = [];
      let bytes = 0;
      for (let k = 0; k < 3; k++) {
        t0 = performance.now();
        const c0 = cpuNow();
        const { ruleset } = new NftRenderer({ ...opts, layout }).render(snap);
        const text = new NftSyncPlanner().planFull(ruleset, 0).text;
        bytes = Buffer.byteLength(text);
        cpus.push(cpuNow() - c0);
        walls.push(performance.now() - t0);
      }
      row['render+plan full'] = `${fmt(median(walls))} (cpu ${fmt(median(cpus))})`;
      row['full tx'] = `${(bytes / 1e6).toFixed(1)} MB`;

      // One-service partial: checkout + render + plan against the mirror of a full sync.
      const renderer = new NftRenderer({ ...opts, layout });
      const planner = new NftSyncPlanner();
      planner.planFull(renderer.render(snap).ruleset, 0).commit();
      const pw: number[] = [];
      const pc: number[] = [];
      let txSize = '';
      for (let k = 0; k < 9; k++) {
        changeOne(state, 1 + k, 1 + k);
        t0 = performance.now();
        const c0 = cpuNow();
        const s2 = state.checkout().v4;
        const plan = planner.planPartial(renderer.render(s2).ruleset, 1, s2.changedServices);
        pc.push(cpuNow() - c0);
        pw.push(performance.now() - t0);
        plan.commit();
        txSize = `${plan.lines} lines, ${Buffer.byteLength(plan.text)} B`;
      }
      row['checkout+render+plan 1 change'] = `${fmt(median(pw))} (cpu ${fmt(median(pc))})`;
      row['1-change tx'] = txSize;
      if (!canApply) {
        rows.push(row);
        return;
      }

      const ns = await createNetns('nftb');
      try {
        const exec = new TimingExecutor(new SpawnNftExecutor({ netns: ns.name }));
        const syncer = new NftSyncer({ executor: exec, render: { ...opts, layout } });
        const live = new ProxyState({ nodeName: 'node', nodeIPs: ['192.168.0.2'] });
        const chunk = layout === 'kube-proxy' && n > KP_SINGLE_MAX ? CHUNK : n;
        t0 = performance.now();
        let c0 = childCpuMs();
        let txs = 0;
        for (let done = 0; done < n; done += chunk) {
          for (let i = done; i < Math.min(n, done + chunk); i++) addService(live, i);
          await syncer.sync(live.checkout().v4);
          txs++;
        }
        row['apply full'] =
          `${fmt(performance.now() - t0)} (nft cpu ${fmt(childCpuMs() - c0)}; ${txs === 1 ? '1 tx' : `${txs} tx of ${chunk}`})`;

        // Fixed cost of any nft call that touches the loaded table: a no-op transaction.
        const noop =
          'add element ip kube-proxy cluster-ips { 172.31.255.254 }\ndelete element ip kube-proxy cluster-ips { 172.31.255.254 }\n';
        const nw: number[] = [];
        const nc: number[] = [];
        for (let k = 0; k < 3; k++) {
          c0 = childCpuMs();
          t0 = performance.now();
          await exec.inner.apply(noop);
          nw.push(performance.now() - t0);
          nc.push(childCpuMs() - c0);
        }
        row['no-op nft call'] = `${fmt(median(nw))} (nft cpu ${fmt(median(nc))})`;

        const sw: number[] = [];
        const aw: number[] = [];
        const ac: number[] = [];
        for (let k = 0; k < REPEAT; k++) {
          changeOne(live, 2 + k, 10 + k);
          exec.applyMs = 0;
          c0 = childCpuMs();
          t0 = performance.now();
          const r = await syncer.sync(live.checkout().v4);
          sw.push(performance.now() - t0);
          aw.push(exec.applyMs);
          ac.push(childCpuMs() - c0);
          if (r.full) throw new Error('expected a partial sync');
        }
        row['1-change sync'] = `${fmt(median(sw))} (nft ${fmt(median(aw))}, nft cpu ${fmt(median(ac))})`;
      } finally {
        await ns.stop();
      }
      rows.push(row);
    }, 3_600_000);
  }
}

/**
 * iptables backend figures, ours next to kube-proxy's way of driving the same kernel, in one
 * run: render time (full, and partial with one changed service), bytes of a one-service
 * partial sync, and apply time in a fresh network namespace (kube-proxy: one
 * `iptables-restore --noflush` of the full payload; ours: chunked full sync), plus the
 * one-service partial sync with the full ruleset loaded, and the make-before-break full syncs:
 * the hourly one (content known, one service changed) and the first one after a restart
 * (every existing chain's content unknown, so all of them switch in the last payload).
 *
 * Sizes: IPT_BENCH_SIZES (default 1000,5000,10000; add 20000 if you have the time).
 * Kernel columns need root + ip netns + iptables; otherwise (or with IPT_BENCH_KERNEL=0) they
 * print "n/a".
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { createNetns } from '@nodeagent/test-support/netns';
import { it } from 'vitest';
import {
  type IptablesExecutor,
  IptablesRenderer,
  type IptablesServicePort,
  IptablesSyncer,
  type JumpRule,
  type RestoreFlags,
  restoreText,
  SpawnIptablesExecutor,
} from '../src/index.js';

const SIZES = (process.env.IPT_BENCH_SIZES ?? '1000,5000,10000').split(',').map(Number);
const ENDPOINTS = 10;
// facts/kernel-floor.md: kube-proxy's single --noflush restore on the nf_tables backend.
const KUBE_PROXY_FACTS: Record<number, string> = {
  3000: '87 s',
  4000: '272 s',
  5000: '> 142 s predicted (272 s at 4,000)',
  10000: '> 142 s predicted (272 s at 4,000)',
  20000: '> 142 s predicted (272 s at 4,000)',
};
const KUBE_PROXY_MAX_N = 1000;

function servicePorts(n: number, gen = 0): IptablesServicePort[] {
  const out: IptablesServicePort[] = [];
  for (let i = 0; i < n; i++) out.push(servicePort(i, gen));
  return out;
}

/** Service `i`; `gen` shifts its endpoint IPs (a changed service). */
function servicePort(i: number, gen = 0): IptablesServicePort {
  const eps = [];
  for (let e = 0; e < ENDPOINTS; e++)
    eps.push({ ip: `10.${(i >> 8) & 255}.${i & 255}.${e + 1 + gen}`, port: 8080 });
  return {
    namespace: 'bench',
    name: `svc-${i}`,
    portName: 'http',
    protocol: 'TCP',
    clusterIP: `172.${16 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`,
    port: 80,
    clusterEndpoints: eps,
    localEndpoints: [],
    hasEndpoints: true,
  };
}

/** Wraps an executor and adds up the time spent in restore and ensureJumps. */
class TimingExecutor implements IptablesExecutor {
  readonly family: IptablesExecutor['family'];
  restoreMs = 0;
  jumpsMs = 0;
  constructor(readonly inner: IptablesExecutor) {
    this.family = inner.family;
  }
  async restore(text: string, flags?: RestoreFlags): Promise<void> {
    const t = performance.now();
    await this.inner.restore(text, flags);
    this.restoreMs += ms(t);
  }
  save(table?: string): Promise<string> {
    return this.inner.save(table);
  }
  async ensureJumps(jumps: readonly JumpRule[]): Promise<void> {
    const t = performance.now();
    await this.inner.ensureJumps(jumps);
    this.jumpsMs += ms(t);
  }
  ensureChain(table: string, chain: string): Promise<boolean> {
    return this.inner.ensureChain(table, chain);
  }
  chainExists(table: string, chain: string): Promise<boolean> {
    return this.inner.chainExists(table, chain);
  }
}

function cpuMs(c0: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

function ms(t0: number): number {
  return performance.now() - t0;
}

function fmt(msv: number | string): string {
  if (typeof msv === 'string') return msv;
  return msv >= 1000 ? `${(msv / 1000).toFixed(2)} s` : `${msv.toFixed(1)} ms`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function kernelAvailable(): boolean {
  if (process.env.IPT_BENCH_KERNEL === '0' || process.getuid?.() !== 0) return false;
  return (
    spawnSync('iptables-restore', ['--version']).status === 0 &&
    spawnSync('ip', ['netns', 'list']).status === 0
  );
}

it('iptables: render and apply, ours vs kube-proxy’s way', async () => {
  const kernel = kernelAvailable();
  const rows: string[][] = [];
  for (const n of SIZES) {
    const ports = servicePorts(n);
    const opts = { localDetector: { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } } as const;

    // Render: a fresh renderer (cold caches), then a warm one (e.g. the hourly full sync).
    const cold: number[] = [];
    const coldCpu: number[] = [];
    let payload = '';
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      payload = restoreText(new IptablesRenderer(opts).render(ports));
      Buffer.byteLength(payload);
      coldCpu.push(cpuMs(c0));
      cold.push(ms(t0));
    }
    const renderer = new IptablesRenderer(opts);
    restoreText(renderer.render(ports));
    const t1 = performance.now();
    restoreText(renderer.render(ports));
    const warm = ms(t1);
    const partialTimes: number[] = [];
    const partialCpu: number[] = [];
    let partialBytes = 0;
    for (let k = 0; k < 9; k++) {
      const changed = [...ports];
      changed[k] = servicePort(k, 1);
      const t = performance.now();
      const c0 = process.cpuUsage();
      const text = restoreText(renderer.render(changed, { changedServices: new Set([`bench/svc-${k}`]) }));
      partialBytes = Buffer.byteLength(text);
      partialCpu.push(cpuMs(c0));
      partialTimes.push(ms(t));
    }

    let kubeProxyApply: number | string = 'n/a';
    let oursApply: number | string = 'n/a';
    let oursTotal: number | string = 'n/a';
    let oursPartialEndpoints: number | string = 'n/a';
    let oursPartialAdd: number | string = 'n/a';
    let restoreCalls = 0;
    let periodicFull = 'n/a';
    let restartFull = 'n/a';
    if (kernel) {
      if (n <= KUBE_PROXY_MAX_N) {
        const ns = await createNetns('iptbench');
        try {
          const exec = new SpawnIptablesExecutor({ netns: ns.name });
          const t = performance.now();
          await exec.restore(payload, { noflush: true, counters: true });
          kubeProxyApply = ms(t);
        } finally {
          await ns.stop();
        }
      } else {
        kubeProxyApply = `skipped (facts: ${KUBE_PROXY_FACTS[n] ?? 'minutes'})`;
      }
      const ns = await createNetns('iptbench');
      try {
        const exec = new TimingExecutor(new SpawnIptablesExecutor({ netns: ns.name }));
        const syncer = new IptablesSyncer({ executor: exec, render: opts });
        const t = performance.now();
        const r = await syncer.sync(ports, new Set());
        oursTotal = ms(t);
        oursApply = exec.restoreMs + exec.jumpsMs;
        restoreCalls = r.restoreCalls;
        // One service's endpoints change (shared chains unchanged), then one service is added
        // (KUBE-SERVICES rewritten: kube-proxy's partial payload).
        const epChange: number[] = [];
        const svcAdd: number[] = [];
        let current = ports;
        for (let k = 0; k < 3; k++) {
          current = [...current];
          current[k] = servicePort(k, 2 + k);
          let tp = performance.now();
          const pr = await syncer.sync(current, new Set([`bench/svc-${k}`]));
          if (pr.full) throw new Error('expected a partial sync');
          epChange.push(ms(tp));
          const extra = servicePort(n + k);
          current = [...current, extra];
          tp = performance.now();
          await syncer.sync(current, new Set([`bench/svc-${n + k}`]));
          svcAdd.push(ms(tp));
        }
        oursPartialEndpoints = median(epChange);
        oursPartialAdd = median(svcAdd);
        // The hourly full sync with the kernel's content known, one service changed: only that
        // service's chains switch with the dispatch in the last payload (make before break).
        current = [...current];
        current[0] = servicePort(0, 9);
        let tp = performance.now();
        const pf = await syncer.sync(current, new Set(['bench/svc-0']), { full: true });
        periodicFull = `${fmt(ms(tp))} (${pf.restoreCalls} restores)`;
        // A restarted process over the loaded rules: every existing chain's content is unknown,
        // so all of them switch in the last payload.
        const restarted = new IptablesSyncer({ executor: exec, render: opts });
        tp = performance.now();
        const rf = await restarted.sync(current, new Set());
        restartFull = `${fmt(ms(tp))} (${rf.restoreCalls} restores)`;
      } finally {
        await ns.stop();
      }
    }
    rows.push([
      String(n),
      `${(Buffer.byteLength(payload) / 1e6).toFixed(1)} MB`,
      `${fmt(median(cold))} (cpu ${fmt(median(coldCpu))})`,
      fmt(warm),
      `${fmt(median(partialTimes))} (min ${fmt(Math.min(...partialTimes))}, cpu ${fmt(median(partialCpu))})`,
      `${(partialBytes / 1e6).toFixed(2)} MB`,
      fmt(kubeProxyApply),
      `${fmt(oursApply)}${restoreCalls ? ` (${restoreCalls} restores)` : ''}`,
      fmt(oursTotal),
      fmt(oursPartialEndpoints),
      fmt(oursPartialAdd),
      periodicFull,
      restartFull,
    ]);
  }
  const head = [
    'services',
    'payload',
    'render full (cold, median of 3)',
    'render full (warm)',
    'render partial (1 svc, median of 9)',
    'partial bytes',
    'apply: kube-proxy (1 --noflush restore)',
    'apply: ours (chunked + jumps)',
    'full sync: ours (render + apply)',
    'partial sync: 1 svc endpoints',
    'partial sync: 1 svc added',
    'full sync, content known, 1 svc changed',
    'full sync after a restart (content unknown)',
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(
    `\n${ENDPOINTS} endpoints per service, iptables ${kernel ? 'nf_tables backend, fresh netns' : '(kernel n/a)'}, ` +
      `1-min load average at the end: ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`,
  );
  console.log(line(head));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(r));
}, 3_600_000);

/**
 * First-packet cost of the rules: TCP connect() latency from a node namespace to the FIRST and
 * the LAST service's ClusterIP, iptables (nf_tables backend, our chunked full sync) next to
 * nftables (kube-proxy's layout, loaded in 1,000-service transactions, and the optimized
 * layout in one transaction), plus a connection straight to an endpoint with the rules loaded
 * and with no rules at all (the floor). Compare with facts/kernel-floor.md section 4.
 *
 * Topology per measured ruleset (fresh namespaces each time, so no backend sees another's
 * rules): node netns ── veth ── server netns. The server netns owns a local route for
 * 10.201.0.0/24 (any address in it is local) and one TCP server on 0.0.0.0:8080 that accepts
 * and closes; every service's 10 endpoints are spread over that pool of 250 addresses. The
 * client is a blocking connect() loop (python3: less event-loop noise than Node's async
 * connect) that closes with RST (SO_LINGER 0) so no TIME_WAIT piles up; every connect() makes a
 * new conntrack entry, so every sample walks the NAT rules. A connect that fails throws: a
 * success to a ClusterIP proves the DNAT happened (nothing listens on 172.30.0.0/16).
 *
 * This lives in the proxier package because that is the package depending on both backends.
 *
 * Env: CONNECT_BENCH_SIZES (default 1000,5000,10000,20000), CONNECT_BENCH_CONNECTS connects per
 * target per round (default 600; 3 rounds, interleaved first/last/direct), CONNECT_BENCH_BUDGET_S
 * (default 540: a size whose predicted time would not fit is skipped with the reason printed).
 * Needs root, ip netns, iptables, nft and python3; otherwise prints why and measures nothing.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { IptablesSyncer, SpawnIptablesExecutor } from '@nodeagent/iptables';
import { type NftLayout, NftSyncer, SpawnNftExecutor } from '@nodeagent/nftables';
import { ProxyState } from '@nodeagent/proxy-state';
import { createNetns, createVethPair, type Netns } from '@nodeagent/test-support/netns';
import { realNodeMissing } from '@nodeagent/test-support/real-node';
import { it } from 'vitest';

const SIZES = (process.env.CONNECT_BENCH_SIZES ?? '1000,5000,10000,20000').split(',').map(Number);
const CONNECTS = Number(process.env.CONNECT_BENCH_CONNECTS ?? 600);
const ROUNDS = 3;
const WARMUP = 50;
const BUDGET_MS = Number(process.env.CONNECT_BENCH_BUDGET_S ?? 540) * 1000;
const EPS = 10;
const POOL = 250;
const KP_CHUNK = 1000;
const opts = { localDetector: { mode: 'ClusterCIDR' as const, cidr: '10.0.0.0/8' } };

/** facts/kernel-floor.md section 4 (p50 / p99 µs): first, last, direct. */
const FACTS: Record<number, Record<string, string>> = {
  1000: { none: '- / - / 23', iptables: '40 / 50 / 46', nft: '31 / 35 / 45' },
  5000: { none: '- / - / 27', iptables: '37 / 151 / 118', nft: '31 / 33 / 29' },
  10000: { none: '- / - / 23', iptables: '32 / 194 / 189', nft: '31 / 31 / 28' },
  20000: { none: '- / - / 26', iptables: '36 / 349 / 354', nft: '35 / 34 / 29' },
};

const svcName = (i: number) => `svc-${String(i).padStart(5, '0')}`;
// 250 per /24 so that no ClusterIP ends in .0 or .255.
const clusterIP = (i: number) => `172.30.${Math.floor(i / 250)}.${(i % 250) + 1}`;

function addService(state: ProxyState, i: number): void {
  state.onServiceAdd({
    metadata: { namespace: 'bench', name: svcName(i) },
    spec: { clusterIP: clusterIP(i), ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
  });
  state.onEndpointSliceAdd({
    metadata: {
      namespace: 'bench',
      name: `${svcName(i)}-1`,
      labels: { 'kubernetes.io/service-name': svcName(i) },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: EPS }, (_, e) => ({
      addresses: [`10.201.0.${((i * EPS + e) % POOL) + 1}`],
    })),
  });
}

// Blocking connect() loop; prints {"us": [...], "errors": {...}}.
const CLIENT = `import json,socket,struct,sys,time
host,port,n,warm=sys.argv[1],int(sys.argv[2]),int(sys.argv[3]),int(sys.argv[4])
lg=struct.pack('ii',1,0);lat=[];errs={}
for i in range(warm+n):
    s=socket.socket(socket.AF_INET,socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET,socket.SO_LINGER,lg)
    s.setsockopt(socket.IPPROTO_TCP,socket.TCP_SYNCNT,1)
    t=time.perf_counter_ns()
    try:
        s.connect((host,port))
        d=time.perf_counter_ns()-t
        if i>=warm: lat.append(d/1000)
    except OSError as e:
        k=type(e).__name__;errs[k]=errs.get(k,0)+1
    s.close()
    if len(errs)>0 and sum(errs.values())>=3: break
print(json.dumps({'us':lat,'errors':errs}))`;

// Accepts and closes; the client already reset the connection, so errors are expected.
const SERVER = `const n=require('net');const s=n.createServer(c=>{c.on('error',()=>{});c.destroy();});
s.listen({port:8080,host:'0.0.0.0',backlog:4096},()=>process.stdout.write('ready\\n'));`;

interface Topology {
  readonly node: Netns;
  stop(): Promise<void>;
}

async function topology(): Promise<Topology> {
  const node = await createNetns('connb');
  const server = await createNetns('connb');
  const stop = async () => {
    await Promise.all([node.stop(), server.stop()]);
  };
  try {
    await createVethPair(node, server, { addressA: '10.200.0.1/24', addressB: '10.200.0.2/24' });
    await server.execChecked(['ip', 'route', 'add', 'local', '10.201.0.0/24', 'dev', 'lo']);
    await node.execChecked(['ip', 'route', 'add', '10.201.0.0/24', 'via', '10.200.0.2']);
    await node.execChecked(['ip', 'route', 'add', '172.30.0.0/16', 'via', '10.200.0.2']);
    const child = server.spawn([process.execPath, '-e', SERVER]);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
    });
    return { node, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

let python = 'python3';

async function connects(node: Netns, host: string, port: number): Promise<number[]> {
  const r = await node.exec([python, '-c', CLIENT, host, String(port), String(CONNECTS), String(WARMUP)], {
    timeoutMs: 120_000,
  });
  if (r.code !== 0) throw new Error(`client to ${host} failed (exit ${r.code}): ${r.stderr}${r.stdout}`);
  const out = JSON.parse(r.stdout) as { us: number[]; errors: Record<string, number> };
  if (Object.keys(out.errors).length > 0) {
    throw new Error(`connect to ${host}:${port} failed: ${JSON.stringify(out.errors)}`);
  }
  return out.us;
}

/** First service, last service and a direct endpoint, interleaved over {@link ROUNDS} rounds. */
async function measure(node: Netns, n: number | undefined): Promise<Record<string, number[]>> {
  // Service port 80 is DNAT-ed to an endpoint's 8080; the direct target is an endpoint itself.
  const direct: [string, number] = ['10.201.0.1', 8080];
  const targets: Record<string, [string, number]> =
    n === undefined ? { direct } : { first: [clusterIP(0), 80], last: [clusterIP(n - 1), 80], direct };
  const samples: Record<string, number[]> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [k, [ip, port]] of Object.entries(targets)) {
      const us = await connects(node, ip, port);
      samples[k] = [...(samples[k] ?? []), ...us];
    }
  }
  return samples;
}

function pct(xs: number[] | undefined): string {
  if (!xs || xs.length === 0) return '-';
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return `${q(0.5).toFixed(0)} / ${q(0.99).toFixed(0)}`;
}

const fmt = (t: number) => (t >= 1000 ? `${(t / 1000).toFixed(1)} s` : `${t.toFixed(0)} ms`);

type Backend = 'none' | 'iptables' | NftLayout;

/** Loads `n` services with `backend` into `node`; returns how it was loaded. */
async function load(node: Netns, backend: Backend, n: number, snapState: ProxyState): Promise<string> {
  if (backend === 'none') return 'no rules';
  if (backend === 'iptables') {
    const syncer = new IptablesSyncer({
      executor: new SpawnIptablesExecutor({ netns: node.name }),
      render: opts,
    });
    const r = await syncer.syncSnapshot(snapState.checkout().v4);
    return `${r.restoreCalls} restores`;
  }
  const syncer = new NftSyncer({
    executor: new SpawnNftExecutor({ netns: node.name }),
    render: { ...opts, layout: backend },
  });
  if (backend === 'optimized' || n <= KP_CHUNK) {
    await syncer.sync(snapState.checkout().v4);
    return '1 tx';
  }
  // kube-proxy's layout is quadratic in one transaction: add services 1,000 at a time.
  const live = new ProxyState({ nodeName: 'node', nodeIPs: ['192.168.0.2'] });
  let txs = 0;
  for (let done = 0; done < n; done += KP_CHUNK) {
    for (let i = done; i < Math.min(n, done + KP_CHUNK); i++) addService(live, i);
    await syncer.sync(live.checkout().v4);
    txs++;
  }
  return `${txs} tx of ${KP_CHUNK}`;
}

it('connect latency to the first and last service: iptables vs nftables', async () => {
  const missing = realNodeMissing(['root', 'netns', 'iptables', 'nft']);
  const py = spawnSync(python, ['-c', 'import sys;print(sys.executable)'], { encoding: 'utf8' });
  if (py.status !== 0) missing.push('python3');
  else python = py.stdout.trim();
  if (missing.length > 0) {
    console.log(`\nconnect-latency benchmark skipped: missing ${missing.join(', ')}`);
    return;
  }
  const started = performance.now();
  const rows: string[][] = [];
  const notes: string[] = [];
  let prev: { n: number; ms: number } | undefined;
  for (const n of SIZES) {
    const elapsed = performance.now() - started;
    // kube-proxy's chunked load grows ~n² (each transaction pays for what is loaded): predict so.
    const predicted = prev ? prev.ms * (n / prev.n) ** 2 : 0;
    if (elapsed + predicted > BUDGET_MS) {
      notes.push(
        `${n} services skipped: predicted ~${fmt(predicted)} (from ${fmt(prev!.ms)} at ${prev!.n}, ×(n ratio)²) ` +
          `after ${fmt(elapsed)} would exceed the ${fmt(BUDGET_MS)} budget (CONNECT_BENCH_BUDGET_S)`,
      );
      continue;
    }
    const t0 = performance.now();
    const state = new ProxyState({ nodeName: 'node', nodeIPs: ['192.168.0.2'] });
    for (let i = 0; i < n; i++) addService(state, i);
    for (const backend of ['none', 'iptables', 'kube-proxy', 'optimized'] as Backend[]) {
      const topo = await topology();
      try {
        const ta = performance.now();
        const how = await load(topo.node, backend, n, state);
        const applyMs = performance.now() - ta;
        const s = await measure(topo.node, backend === 'none' ? undefined : n);
        const label =
          backend === 'none'
            ? 'no rules'
            : backend === 'iptables'
              ? 'iptables (nft backend)'
              : `nftables ${backend}`;
        rows.push([
          String(n),
          label,
          backend === 'none' ? '-' : `${fmt(applyMs)} (${how})`,
          pct(s.first),
          pct(s.last),
          pct(s.direct),
          FACTS[n]?.[backend === 'none' || backend === 'iptables' ? backend : 'nft'] ?? '',
        ]);
      } finally {
        await topo.stop();
      }
    }
    prev = { n, ms: performance.now() - t0 };
  }
  const head = [
    'services',
    'rules',
    'apply',
    'first service p50 / p99 µs',
    'last service p50 / p99 µs',
    'direct to endpoint p50 / p99 µs',
    'facts p50: first / last / direct',
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(
    `\nTCP connect() latency from the node netns, ${ROUNDS}×${CONNECTS} connects per target, ${EPS} endpoints per service; ` +
      `1-min load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores; total ${fmt(performance.now() - started)}`,
  );
  console.log(line(head));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(r));
  for (const note of notes) console.log(note);
}, 3_600_000);

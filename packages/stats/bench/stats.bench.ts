// 110 pods / 330 containers: CPU of one housekeeping pass, of a `/metrics/cadvisor` render and
// of a `/stats/summary` (get(true) + JSON), next to the bare cost of reading the same cgroup
// files (the same file names per cgroup, missing ones included) in the same run, twice: with
// readFileSync in a loop (the reference: the cheapest way) and with fs.promises.readFile all at
// once (what the reader did first; about 5× dearer). The cgroup tree is a fake cgroup v2 (and v1) tree on tmpfs (/dev/shm) with the real files'
// contents; the runtime is the in-process FakeRuntime over its gRPC socket, so the summary
// figure includes the CRI server's side too. Alternating rounds, medians printed. Asserts
// nothing about speed (target: housekeeping within 2× of the bare reads).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, it } from 'vitest';
import {
  CGROUP_V1_FILES,
  CGROUP_V2_FILES,
  createStatsProvider,
  renderCadvisorMetrics,
  type StatsProvider,
} from '../src/index.js';
import { type FakeCri, runPod, startFakeCri, uidOf } from '../test/support/fake-cri.js';
import { FakeNode, type Version } from '../test/support/fake-node.js';

const PODS = 110;
const CONTAINERS_PER_POD = 3;
const ROUNDS = Number(process.env.STATS_BENCH_ROUNDS ?? 7);
const MiB = 1024 * 1024;
const SHM = '/dev/shm';

interface Setup {
  node: FakeNode;
  paths: string[];
  stats: StatsProvider;
}

let h: FakeCri;
const setups = new Map<Version, Setup>();

async function build(version: Version): Promise<Setup> {
  const node = await FakeNode.create(version, SHM);
  const paths = ['/', '/kubepods', '/kubepods/burstable'];
  const c = { cpuUsageNs: 5e9, memoryUsage: 100 * MiB, inactiveFile: 10 * MiB, anon: 80 * MiB };
  await node.cgroup('/', c);
  await node.cgroup('/kubepods', c);
  await node.cgroup('/kubepods/burstable', c);
  const { containers } = await h.cri.runtime.listContainers({});
  for (const sandbox of (await h.cri.runtime.listPodSandbox({})).items) {
    const uid = sandbox.metadata?.uid ?? '';
    const pod = `/kubepods/burstable/pod${uid}`;
    await node.cgroup(pod, { ...c, procs: [1] });
    paths.push(pod);
    for (const ctr of containers.filter((x) => x.podSandboxId === sandbox.id)) {
      await node.cgroup(`${pod}/${ctr.id}`, c);
      paths.push(`${pod}/${ctr.id}`);
    }
  }
  const stats = createStatsProvider({
    nodeName: 'bench',
    cri: h.cri,
    cgroupRoot: node.cgroupRoot,
    procRoot: node.procRoot,
    podLogsDirectory: join(node.dir, 'pods'),
    statfs: async () => ({ bsize: 4096, blocks: 1e6, bfree: 5e5, bavail: 4e5, files: 1e5, ffree: 5e4 }),
  });
  return { node, paths, stats };
}

beforeAll(async () => {
  h = await startFakeCri();
  for (let i = 0; i < PODS; i++) {
    await runPod(
      h,
      `pod-${i}`,
      uidOf(i + 1),
      Array.from({ length: CONTAINERS_PER_POD }, (_, j) => `c${j}`),
    );
  }
  for (const v of ['v2', 'v1'] as const) setups.set(v, await build(v));
}, 10 * 60_000);

afterAll(async () => {
  for (const s of setups.values()) await s.node.cleanup();
  await h?.close();
});

async function bareReads(version: Version, node: FakeNode, paths: readonly string[]): Promise<void> {
  const files = version === 'v2' ? CGROUP_V2_FILES : CGROUP_V1_FILES;
  await Promise.all(
    paths.map((p) =>
      Promise.all(
        files.map(([controller, file]) =>
          readFile(join(node.cgroupRoot, controller, p, file), 'utf8').catch(() => undefined),
        ),
      ),
    ),
  );
}

function bareReadsSync(version: Version, node: FakeNode, paths: readonly string[]): void {
  const files = version === 'v2' ? CGROUP_V2_FILES : CGROUP_V1_FILES;
  for (const p of paths) {
    for (const [controller, file] of files) {
      try {
        readFileSync(join(node.cgroupRoot, controller, p, file), 'utf8');
      } catch {
        // missing files cost their failed open, as in the reader
      }
    }
  }
}

async function cpuMs(fn: () => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  await fn();
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

it('CPU of housekeeping and renders at 110 pods / 330 containers vs bare cgroup reads', async () => {
  for (const [version, { node, paths, stats }] of setups) {
    await stats.housekeep(); // warm-up
    await stats.get(true);
    const bare: number[] = [];
    const bareSync: number[] = [];
    const hk: number[] = [];
    const cadvisor: number[] = [];
    const summary: number[] = [];
    let bytes = { cadvisor: 0, summary: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      bare.push(await cpuMs(() => bareReads(version, node, paths)));
      bareSync.push(await cpuMs(async () => bareReadsSync(version, node, paths)));
      hk.push(await cpuMs(() => stats.housekeep()));
      cadvisor.push(
        await cpuMs(async () => {
          bytes.cadvisor = renderCadvisorMetrics(await stats.cadvisorSnapshot()).length;
        }),
      );
      summary.push(
        await cpuMs(async () => {
          bytes.summary = JSON.stringify(await stats.get(true)).length;
        }),
      );
    }
    // The reference is the cheaper of the two ways to read the files (readFileSync here).
    const b = Math.min(median(bare), median(bareSync));
    const row = (label: string, xs: number[]) =>
      `  ${label.padEnd(40)} ${median(xs).toFixed(1).padStart(7)} ms CPU  (${(median(xs) / b).toFixed(2)}× bare)`;
    console.log(
      [
        `stats bench, cgroup ${version}, ${PODS} pods / ${PODS * CONTAINERS_PER_POD} containers, ${paths.length} cgroups, median of ${ROUNDS}:`,
        row('bare reads, readFileSync (reference)', bareSync),
        row('bare reads, fs.promises.readFile', bare),
        row('housekeeping pass', hk),
        row(`/metrics/cadvisor (${(bytes.cadvisor / 1024).toFixed(0)} KiB)`, cadvisor),
        row(`/stats/summary (${(bytes.summary / 1024).toFixed(0)} KiB, incl. CRI)`, summary),
      ].join('\n'),
    );
    bytes = { cadvisor: 0, summary: 0 };
  }
});

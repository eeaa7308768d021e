// 110 pods / 330 containers on a REAL node (a private containerd in a node sandbox, the local
// busybox image, every container `sleep`): CPU of one housekeeping pass, of a `/metrics/cadvisor`
// scrape (CRI lists + render) and of a `/stats/summary` scrape (`get(true)` + JSON, CRI stats and
// log `du` included), next to the bare cost of the same reads in the same run: `readFileSync` of
// exactly the cgroup files the reader opens for the same cgroups (missing ones included), the
// same directory listings as the discovery, and the same `cgroup.procs` + `/proc/<pid>/net/dev`
// reads for the pod networks. Alternating rounds, medians printed. Asserts nothing about speed
// (target: housekeeping within 2× of the bare reads).
//
// Pods run below a bench-private cgroup root (`/nodeagent-statsbench-<pid>-<hex>/kubepods/
// burstable/pod<uid>`), never in the machine's /kubepods; the teardown removes the containers,
// sandboxes, netns and containerd (node sandbox), then that cgroup tree, and fails if anything
// of it is left. Needs root + containerd; skipped (loudly) elsewhere, fails under CI=true.
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, rmdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { type CriClient, createCriClient, type PartialMessage, type PodSandboxConfig } from '@nodeagent/cri';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, it } from 'vitest';
import {
  CGROUP_V1_FILES,
  CGROUP_V2_FILES,
  type CgroupVersion,
  createStatsProvider,
  detectCgroupVersion,
  renderCadvisorMetrics,
} from '../src/index.js';

const PODS = Number(process.env.STATS_BENCH_PODS ?? 110);
const CONTAINERS_PER_POD = 3;
const ROUNDS = Number(process.env.STATS_BENCH_ROUNDS ?? 9);
const START_CONCURRENCY = 4;
const CGROUP_MOUNT = '/sys/fs/cgroup';
const ROOT = `nodeagent-statsbench-${process.pid}-${randomBytes(3).toString('hex')}`;
const PODS_ROOT = `/${ROOT}/kubepods`;

async function removeTree(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return;
  }
  for (const e of entries) await removeTree(join(dir, e));
  for (let attempt = 0; ; attempt++) {
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || attempt >= 8) throw err;
      await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
    }
  }
}

/** Our cgroup root's directory in every hierarchy (v1: one per mounted controller). */
function rootDirs(version: CgroupVersion | undefined): string[] {
  if (version === 'v2') return [join(CGROUP_MOUNT, ROOT)];
  return readdirSync(CGROUP_MOUNT, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(CGROUP_MOUNT, e.name, ROOT));
}

async function runLimited<T>(items: readonly T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

const cpuNow = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function cpuMs(fn: () => unknown): Promise<number> {
  const t0 = cpuNow();
  await fn();
  return cpuNow() - t0;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

describeRealNode('stats at 110 pods / 330 containers on a real containerd', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  let version: CgroupVersion | undefined;
  let startSeconds = 0;

  beforeAll(async () => {
    version = await detectCgroupVersion(CGROUP_MOUNT);
    if (version === undefined) throw new Error(`no cgroup hierarchy at ${CGROUP_MOUNT}`);
    node = await startNodeSandbox({ name: 'statsbench' });
    cri = createCriClient(node.criEndpoint, { timeoutMs: 120_000 });
    const t0 = performance.now();
    await runLimited(
      Array.from({ length: PODS }, (_, i) => i),
      START_CONCURRENCY,
      async (i) => {
        const uid = randomUUID();
        const name = `pod-${i}`;
        const logDirectory = join(node.podLogRoot, `bench_${name}_${uid}`);
        await mkdir(logDirectory, { recursive: true });
        const config: PartialMessage<PodSandboxConfig> = {
          metadata: { name, namespace: 'bench', uid, attempt: 0 },
          hostname: name,
          logDirectory,
          labels: {
            'io.kubernetes.pod.name': name,
            'io.kubernetes.pod.namespace': 'bench',
            'io.kubernetes.pod.uid': uid,
          },
          linux: { cgroupParent: `${PODS_ROOT}/burstable/pod${uid}` },
        };
        const { podSandboxId } = await cri.runtime.runPodSandbox({ config });
        for (let c = 0; c < CONTAINERS_PER_POD; c++) {
          const cname = `c${c}`;
          const { containerId } = await cri.runtime.createContainer({
            podSandboxId,
            sandboxConfig: config,
            config: {
              metadata: { name: cname, attempt: 0 },
              image: { image: node.imageRef },
              command: ['sleep', '3600'],
              labels: {
                'io.kubernetes.pod.name': name,
                'io.kubernetes.pod.namespace': 'bench',
                'io.kubernetes.pod.uid': uid,
                'io.kubernetes.container.name': cname,
              },
              logPath: `${cname}/0.log`,
            },
          });
          await cri.runtime.startContainer({ containerId });
        }
      },
    );
    startSeconds = (performance.now() - t0) / 1000;
  }, 20 * 60_000);

  afterAll(async () => {
    cri?.close();
    // Containers, sandboxes (CNI DEL), containerd by PID, shims, netns, temp root.
    await node?.stop();
    for (const dir of rootDirs(version)) await removeTree(dir);
    const left = rootDirs(version).filter((d) => existsSync(d));
    if (left.length > 0) throw new Error(`bench cgroups left behind: ${left.join(', ')}`);
  }, 10 * 60_000);

  it(
    'CPU of housekeeping and of the two scrapes vs bare reads of the same files',
    async () => {
      const stats = createStatsProvider({
        nodeName: 'statsbench',
        cri,
        podsCgroupRoots: [PODS_ROOT.slice(1)],
        podLogsDirectory: node.podLogRoot,
        rootDirectory: node.rootDir,
      });
      const mount = CGROUP_MOUNT;
      const files = version === 'v2' ? CGROUP_V2_FILES : CGROUP_V1_FILES;
      // Files the reader leaves out at the root cgroup.
      const skippedAtRoot =
        version === 'v2'
          ? new Set([
              'memory.current',
              'memory.events',
              'pids.current',
              'cpu.max',
              'cpu.weight',
              'memory.max',
            ])
          : new Set(['pids.current', 'pids.max']);
      for (const f of ['memory.low', 'memory.peak', 'memory.swap.current', 'memory.swap.max', 'pids.max'])
        if (version === 'v2') skippedAtRoot.add(f);
      const dirOf = (cgroup: string) =>
        version === 'v2' ? join(mount, cgroup) : join(mount, 'memory', cgroup);

      // The bare floor: what a housekeeping pass reads, with no parsing and no cache.
      const bareReads = (): { files: number; cgroups: number } => {
        const listing = (cgroup: string): string[] =>
          readdirSync(dirOf(cgroup), { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .map((e) => e.name);
        const cgroups: string[] = ['/', PODS_ROOT];
        const pods: string[] = [];
        for (const qos of listing(PODS_ROOT)) {
          const q = `${PODS_ROOT}/${qos}`;
          cgroups.push(q);
          for (const pod of listing(q)) {
            const p = `${q}/${pod}`;
            pods.push(p);
            cgroups.push(p, ...listing(p).map((c) => `${p}/${c}`));
          }
        }
        let n = 0;
        const read = (path: string): string | undefined => {
          n++;
          try {
            return readFileSync(path, 'utf8');
          } catch {
            // a missing file costs its failed open, as in the reader
            return undefined;
          }
        };
        for (const cg of cgroups) {
          for (const [controller, file] of files) {
            if (cg === '/' && skippedAtRoot.has(file)) continue;
            read(join(mount, controller, cg, file));
          }
        }
        // pod networks: the first PID in the pod cgroup (or a child), then its net/dev
        for (const cg of ['/', ...pods]) {
          let pid = cg === '/' ? '1' : read(join(dirOf(cg), 'cgroup.procs'))?.split('\n', 1)[0];
          if (!pid) {
            for (const child of listing(cg)) {
              pid = read(join(dirOf(`${cg}/${child}`), 'cgroup.procs'))?.split('\n', 1)[0];
              if (pid) break;
            }
          }
          if (pid) read(`/proc/${pid}/net/dev`);
        }
        return { files: n, cgroups: cgroups.length };
      };

      await stats.housekeep(); // warm-up, and the first sample for rates
      await stats.get(true);
      renderCadvisorMetrics(await stats.cadvisorSnapshot());
      const shape = bareReads();
      const bare: number[] = [];
      const hk: number[] = [];
      const cadvisor: number[] = [];
      const summary: number[] = [];
      const bytes = { cadvisor: 0, summary: 0 };
      const load: string[] = [readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')];
      for (let r = 0; r < ROUNDS; r++) {
        // alternate the order of the floor and ours so drift hits both alike
        const floor = async () => bare.push(await cpuMs(bareReads));
        if (r % 2 === 0) await floor();
        hk.push(await cpuMs(() => stats.housekeep()));
        if (r % 2 === 1) await floor();
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
      load.push(readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '));
      // STATS_BENCH_PROFILE=<prefix>: V8 CPU profiles of 10 housekeeping passes and 10 of each
      // scrape, written to <prefix>.<op>.cpuprofile.
      const profilePrefix = process.env.STATS_BENCH_PROFILE;
      if (profilePrefix) {
        const session = new Session();
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: 100 });
        const ops: [string, () => Promise<unknown>][] = [
          ['housekeeping', () => stats.housekeep()],
          ['cadvisor', async () => renderCadvisorMetrics(await stats.cadvisorSnapshot())],
          ['summary', async () => JSON.stringify(await stats.get(true))],
        ];
        for (const [op, fn] of ops) {
          await session.post('Profiler.start');
          for (let i = 0; i < 10; i++) await fn();
          const { profile } = await session.post('Profiler.stop');
          await writeFile(`${profilePrefix}.${op}.cpuprofile`, JSON.stringify(profile));
        }
        session.disconnect();
      }
      const errors = stats.errorCounts();
      await stats.stop();
      const b = median(bare);
      const row = (label: string, xs: number[]) =>
        `  ${label.padEnd(52)} ${median(xs).toFixed(1).padStart(7)} ms CPU  (${(median(xs) / b).toFixed(2)}× bare)  [min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}]`;
      console.log(
        [
          '',
          `stats bench on the real node, cgroup ${version}, ${PODS} pods / ${PODS * CONTAINERS_PER_POD} containers (+${PODS} sandboxes), ${shape.cgroups} cgroups, median of ${ROUNDS}`,
          `  (pods started in ${startSeconds.toFixed(1)} s; load average before/after: ${load.join(' / ')}; ${Object.values(errors).every((n) => n === 0) ? 'no read errors' : `errors: ${JSON.stringify(errors)}`})`,
          row(`bare reads: readFileSync of ${shape.files} files + listings (reference)`, bare),
          row('housekeeping pass', hk),
          row(
            `/metrics/cadvisor scrape (${(bytes.cadvisor / 1024).toFixed(0)} KiB, CRI lists incl.)`,
            cadvisor,
          ),
          row(`/stats/summary scrape (${(bytes.summary / 1024).toFixed(0)} KiB, CRI + du incl.)`, summary),
          '',
        ].join('\n'),
      );
    },
    10 * 60_000,
  );
});

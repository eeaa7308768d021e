// Stats of real containers under a private containerd agree with their cgroup files.
// Pods get a cgroup parent below a test-owned root (`/nodeagent-stats-<pid>/kubepods`), so
// nothing outside the test's cgroups is read or touched; the root is removed afterwards.
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type CriClient, createCriClient, type PartialMessage, type PodSandboxConfig } from '@nodeagent/cri';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type CgroupVersion,
  createStatsProvider,
  detectCgroupVersion,
  renderCadvisorMetrics,
} from '../src/index.js';

const CGROUP_ROOT = '/sys/fs/cgroup';
const TEST_ROOT = `nodeagent-stats-${process.pid}`;
const MiB = 1024 * 1024;

async function removeTree(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return;
  }
  for (const e of entries) await removeTree(join(dir, e));
  await rmdir(dir).catch(() => undefined);
}

async function cleanupCgroups(version: CgroupVersion | undefined): Promise<void> {
  if (version === 'v2') await removeTree(join(CGROUP_ROOT, TEST_ROOT));
  else {
    for (const c of await readdir(CGROUP_ROOT)) await removeTree(join(CGROUP_ROOT, c, TEST_ROOT));
  }
}

const num = async (path: string): Promise<number> => Number((await readFile(path, 'utf8')).trim());
const statOf = async (path: string): Promise<Map<string, number>> => {
  const out = new Map<string, number>();
  for (const line of (await readFile(path, 'utf8')).split('\n')) {
    const [k, v] = line.split(' ');
    if (k && v) out.set(k, Number(v));
  }
  return out;
};

describeRealNode('stats of real containers under containerd', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  let version: CgroupVersion | undefined;
  beforeAll(async () => {
    version = await detectCgroupVersion(CGROUP_ROOT);
    node = await startNodeSandbox({ name: 'statsnode' });
    cri = createCriClient(node.criEndpoint, { timeoutMs: 30_000 });
  }, 60_000);
  afterAll(async () => {
    cri?.close();
    await node?.stop();
    await cleanupCgroups(version);
  }, 60_000);

  it('memory, working set, CPU (cumulative and rate), network and filesystems agree with the kernel', async () => {
    const uid = randomUUID();
    const name = 'hog';
    const logDirectory = join(node.podLogRoot, `stats_${name}_${uid}`);
    await mkdir(logDirectory, { recursive: true });
    const podCgroup = `/${TEST_ROOT}/kubepods/pod${uid}`;
    const config: PartialMessage<PodSandboxConfig> = {
      metadata: { name, namespace: 'stats', uid, attempt: 0 },
      hostname: name,
      logDirectory,
      linux: { cgroupParent: podCgroup },
    };
    const { podSandboxId } = await cri.runtime.runPodSandbox({ config });
    const run = async (cname: string, script: string, quotaUs?: number): Promise<string> => {
      const { containerId } = await cri.runtime.createContainer({
        podSandboxId,
        sandboxConfig: config,
        config: {
          metadata: { name: cname, attempt: 0 },
          image: { image: node.imageRef },
          command: ['sh', '-c', script],
          labels: {
            'io.kubernetes.pod.name': name,
            'io.kubernetes.pod.namespace': 'stats',
            'io.kubernetes.pod.uid': uid,
            'io.kubernetes.container.name': cname,
          },
          logPath: `${cname}/0.log`,
          linux: {
            resources: {
              memoryLimitInBytes: BigInt(256 * MiB),
              ...(quotaUs === undefined ? {} : { cpuQuota: BigInt(quotaUs), cpuPeriod: 100_000n }),
            },
          },
        },
      });
      await cri.runtime.startContainer({ containerId });
      return containerId;
    };
    // 64 MiB in the container's shm (charged to its memory cgroup), then idle.
    const hog = await run(
      'hog',
      'dd if=/dev/zero of=/dev/shm/fill bs=1M count=64 2>/dev/null; echo filled; sleep 300',
    );
    // Burns CPU under a 0.2-core quota for the whole test.
    const burner = await run('burner', 'while :; do :; done', 20_000);

    const mem = (id: string, file: string) =>
      version === 'v2'
        ? join(CGROUP_ROOT, podCgroup, id, file === 'usage' ? 'memory.current' : 'memory.stat')
        : join(
            CGROUP_ROOT,
            'memory',
            podCgroup,
            id,
            file === 'usage' ? 'memory.usage_in_bytes' : 'memory.stat',
          );
    const cpuUsageNs = async (id: string): Promise<number> =>
      version === 'v2'
        ? ((await statOf(join(CGROUP_ROOT, podCgroup, id, 'cpu.stat'))).get('usage_usec') ?? 0) * 1000
        : num(join(CGROUP_ROOT, 'cpuacct', podCgroup, id, 'cpuacct.usage'));
    const deadline = Date.now() + 20_000;
    while ((await num(mem(hog, 'usage')).catch(() => 0)) < 64 * MiB) {
      if (Date.now() > deadline) throw new Error('the hog container never reached 64 MiB');
      await new Promise((r) => setTimeout(r, 100));
    }

    const stats = createStatsProvider({
      nodeName: 'statsnode',
      cri,
      podsCgroupRoots: [`${TEST_ROOT}/kubepods`],
      podLogsDirectory: node.podLogRoot,
      rootDirectory: node.rootDir,
    });
    await stats.housekeep();
    await new Promise((r) => setTimeout(r, 2000));
    await stats.housekeep();
    const summary = await stats.get(true);
    // Read the kernel's numbers right after the summary: the hog is idle, so they must agree.
    const usage = await num(mem(hog, 'usage'));
    const memStat = await statOf(mem(hog, 'stat'));
    const inactive = memStat.get(version === 'v2' ? 'inactive_file' : 'total_inactive_file') ?? 0;
    const hogCpu = await cpuUsageNs(hog);

    expect(stats.cgroupVersion).toBe(version);
    const pod = summary.pods.find((p) => p.podRef.uid === uid);
    expect(pod?.podRef).toEqual({ name, namespace: 'stats', uid });
    const hogStats = pod?.containers.find((c) => c.name === 'hog');
    const burnerStats = pod?.containers.find((c) => c.name === 'burner');
    expect(hogStats?.memory?.usageBytes).toBeGreaterThanOrEqual(64 * MiB);
    expect(Math.abs((hogStats?.memory?.usageBytes ?? 0) - usage)).toBeLessThan(MiB);
    expect(Math.abs((hogStats?.memory?.workingSetBytes ?? 0) - (usage - inactive))).toBeLessThan(MiB);
    expect(hogStats?.memory?.availableBytes).toBe(256 * MiB - (hogStats?.memory?.workingSetBytes ?? 0));
    expect(hogStats?.cpu?.usageCoreNanoSeconds).toBeLessThanOrEqual(hogCpu);
    expect(hogCpu - (hogStats?.cpu?.usageCoreNanoSeconds ?? 0)).toBeLessThan(50e6);
    // 0.2-core quota: the rate over the 2 s between passes is at most 0.2 cores (+ slack).
    const rate = burnerStats?.cpu?.usageNanoCores ?? 0;
    expect(rate).toBeGreaterThan(20e6);
    expect(rate).toBeLessThan(260e6);
    // The pod cgroup holds both containers (and the sandbox).
    expect(pod?.memory?.usageBytes).toBeGreaterThanOrEqual(
      hogStats?.memory?.usageBytes ?? Number.POSITIVE_INFINITY,
    );
    expect(pod?.process_stats?.process_count).toBeGreaterThanOrEqual(3);
    // The pod's netns (CNI bridge): eth0 with traffic counters.
    expect(pod?.network?.name).toBe('eth0');
    expect(pod?.network?.interfaces?.map((i) => i.name)).toContain('eth0');
    // Writable layer from CRI, logs from du of the pod log dir, nodefs from statfs.
    expect(hogStats?.rootfs?.usedBytes).toBeGreaterThanOrEqual(0);
    expect(hogStats?.logs?.usedBytes).toBeGreaterThan(0);
    expect(summary.node.fs?.capacityBytes).toBeGreaterThan(0);
    // containerd refreshes snapshot usage every 10 s, so usage may still be 0; capacity is statfs.
    expect(summary.node.runtime?.imageFs?.usedBytes).toBeGreaterThanOrEqual(0);
    expect(summary.node.runtime?.imageFs?.capacityBytes).toBeGreaterThan(0);
    expect(summary.node.memory?.availableBytes).toBeGreaterThan(0);
    expect(summary.node.cpu?.usageCoreNanoSeconds).toBeGreaterThan(0);

    const text = renderCadvisorMetrics(await stats.cadvisorSnapshot());
    expect(text).toMatch(
      new RegExp(`container_memory_usage_bytes\\{container="hog",id="${podCgroup}/${hog}"`),
    );
    expect(text).toMatch(
      new RegExp(
        `container_cpu_cfs_throttled_periods_total\\{container="burner",id="${podCgroup}/${burner}"`,
      ),
    );
    await stats.stop();
  }, 60_000);
});

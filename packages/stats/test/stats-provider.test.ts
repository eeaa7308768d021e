import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as promClient from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createStatsProvider,
  renderResourceMetrics,
  type StatfsResult,
  StatsUnavailableError,
} from '../src/index.js';
import { type FakeCri, runPod, startFakeCri, uidOf } from './support/fake-cri.js';
import { FakeNode, MEM_FREE, MEM_TOTAL } from './support/fake-node.js';

const MiB = 1024 * 1024;
let h: FakeCri;
let node: FakeNode | undefined;

beforeEach(async () => {
  h = await startFakeCri([{ name: 'app', behaviour: { cpuCores: 0.5, memoryWorkingSetBytes: 64 * MiB } }]);
});
afterEach(async () => {
  await h.close();
  await node?.cleanup();
  node = undefined;
});

describe('embedded mode (fake runtime, no cgroups)', () => {
  it('builds a valid Summary from CRI stats only', async () => {
    const uid = uidOf(1);
    await runPod(h, 'web', uid, ['app', 'sidecar']);
    await h.clock.advance(10_000);
    const stats = createStatsProvider({ nodeName: 'node-1', cri: h.cri, embedded: true, clock: h.clock });
    const summary = await stats.get(true);
    expect(summary.node.nodeName).toBe('node-1');
    expect(summary.node.runtime?.imageFs?.usedBytes).toBeGreaterThan(0);
    expect(summary.pods).toHaveLength(1);
    const pod = summary.pods[0];
    expect(pod?.podRef).toEqual({ name: 'web', namespace: 'default', uid });
    expect(pod?.startTime).toBe('2023-11-14T22:13:20Z');
    const app = pod?.containers.find((c) => c.name === 'app');
    // The fake reports CPU = cores × run time and the configured working set.
    expect(app?.cpu).toEqual({
      time: '2023-11-14T22:13:30Z',
      usageNanoCores: 500_000_000,
      usageCoreNanoSeconds: 5e9,
    });
    expect(app?.memory?.workingSetBytes).toBe(64 * MiB);
    expect(app?.rootfs?.usedBytes).toBe(8192);
    expect(app?.logs).toBeUndefined();
    expect(pod?.cpu?.usageCoreNanoSeconds).toBe(5e9 + 1e8);
    expect(pod?.memory?.workingSetBytes).toBe(64 * MiB + 4 * MiB);
    expect(pod?.['ephemeral-storage']?.usedBytes).toBe(2 * 8192);
    // JSON as the kubelet writes it: optional fields absent, not null.
    expect(JSON.stringify(summary)).not.toContain('null');
    expect(stats.cgroupVersion).toBeUndefined();
    // Without cgroups, pod-level stats come from the runtime.
    expect(h.fake.calls('ListPodSandboxStats')).toHaveLength(1);
  });

  it('only_cpu_and_memory leaves filesystems and network out', async () => {
    await runPod(h, 'web', uidOf(2), ['app']);
    const stats = createStatsProvider({ nodeName: 'n', cri: h.cri, embedded: true, clock: h.clock });
    const s = await stats.getCpuAndMemory();
    expect(s.node.runtime).toBeUndefined();
    expect(s.node.fs).toBeUndefined();
    // Node CPU, memory and swap from this machine's /proc (the resource metrics need them).
    expect(s.node.memory?.availableBytes).toBeGreaterThan(0);
    expect(s.node.cpu?.usageCoreNanoSeconds).toBeGreaterThan(0);
    expect(s.node.swap?.swapUsageBytes).toBeGreaterThanOrEqual(0);
    expect(s.pods[0]?.containers[0]?.rootfs).toBeUndefined();
    expect(s.pods[0]?.['ephemeral-storage']).toBeUndefined();
    expect(s.pods[0]?.containers[0]?.memory?.workingSetBytes).toBe(64 * MiB);
    // Exactly upstream GetCPUAndMemoryStats' fields (node, pod, container).
    const allowed = (o: object, keys: string[]) =>
      expect(Object.keys(o).filter((k) => !keys.includes(k))).toEqual([]);
    allowed(s.node, ['nodeName', 'startTime', 'cpu', 'memory', 'swap', 'systemContainers']);
    for (const p of s.pods) {
      allowed(p, ['podRef', 'startTime', 'containers', 'cpu', 'memory', 'swap']);
      for (const c of p.containers) allowed(c, ['name', 'startTime', 'cpu', 'memory', 'swap']);
    }
  });

  it("{ pods: false } gives the node's part without listing a pod or a container", async () => {
    await runPod(h, 'web', uidOf(5), ['app']);
    const stats = createStatsProvider({ nodeName: 'n', cri: h.cri, embedded: true, clock: h.clock });
    const full = await stats.get(true);
    const rpcs = ['ListPodSandbox', 'ListContainers', 'ListContainerStats', 'ListPodSandboxStats'] as const;
    const before = rpcs.map((rpc) => h.fake.calls(rpc).length);
    expect(before).toEqual([1, 1, 1, 1]);
    const node = await stats.get(true, { pods: false });
    expect(node.pods).toEqual([]);
    expect(rpcs.map((rpc) => h.fake.calls(rpc).length)).toEqual(before);
    expect(h.fake.calls('ImageFsInfo')).toHaveLength(2);
    expect(node.node.runtime?.imageFs?.usedBytes).toBeGreaterThan(0);
    expect(node.node.runtime).toEqual(full.node.runtime);
  });

  it('keeps only pods the pod lister knows', async () => {
    await runPod(h, 'a', uidOf(3), ['app']);
    await runPod(h, 'b', uidOf(4), ['app']);
    const stats = createStatsProvider({
      nodeName: 'n',
      cri: h.cri,
      embedded: true,
      clock: h.clock,
      podLister: { listPods: () => [{ uid: uidOf(4), name: 'b', namespace: 'default' }] },
    });
    expect((await stats.get(false)).pods.map((p) => p.podRef.name)).toEqual(['b']);
  });

  it('a failed ListContainerStats falls back, a failed ListPodSandbox fails the summary as upstream', async () => {
    await runPod(h, 'web', uidOf(6), ['app']);
    const stats = createStatsProvider({ nodeName: 'n', cri: h.cri, embedded: true, clock: h.clock });
    h.fake.injectError('ListContainerStats', { code: 14, message: 'runtime busy' });
    const partial = await stats.get(false);
    expect(partial.pods[0]?.containers[0]?.name).toBe('app');
    expect(partial.pods[0]?.containers[0]?.memory).toBeUndefined();
    expect(stats.errorCounts().cri).toBe(1);
    h.fake.injectError('ListPodSandbox', { code: 14, message: 'runtime down' });
    const err = await stats.get(false).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatsUnavailableError);
    expect((err as Error).message).toMatch(/^failed to list pod stats: ListPodSandbox: .*runtime down/);
    expect(renderResourceMetrics(undefined)).toContain('resource_scrape_error 1');
  });

  it('rejects an empty node name', () => {
    expect(() => createStatsProvider({ nodeName: '', cri: h.cri })).toThrow(/nodeName/);
  });
});

describe.each(['v1', 'v2'] as const)('cgroup %s with the fake runtime', (version) => {
  it('takes container and pod CPU/memory from cgroups, rootfs from CRI, logs from du, node from the root', async () => {
    node = await FakeNode.create(version);
    const uid = uidOf(9);
    const { sandboxId, containerIds } = await runPod(h, 'web', uid, ['app']);
    const cid = containerIds[0] as string;
    const pod = `/kubepods/burstable/pod${uid}`;
    await node.cgroup('/', {
      cpuUsageNs: 1000e9,
      memoryUsage: MEM_TOTAL - MEM_FREE,
      inactiveFile: 1024 * MiB,
      anon: 0,
    });
    await node.cgroup('/kubepods', { cpuUsageNs: 20e9, memoryUsage: 300 * MiB, inactiveFile: 0, anon: 0 });
    await node.cgroup(pod, {
      cpuUsageNs: 11e9,
      memoryUsage: 210 * MiB,
      inactiveFile: 10 * MiB,
      anon: 150 * MiB,
      pids: 3,
      ...(version === 'v2' ? { pressureTotalUs: 500 } : {}),
    });
    await node.cgroup(`${pod}/${sandboxId}`, {
      cpuUsageNs: 1e9,
      memoryUsage: 1 * MiB,
      inactiveFile: 0,
      anon: 1,
      procs: [4242],
    });
    await node.cgroup(`${pod}/${cid}`, {
      cpuUsageNs: 10e9,
      memoryUsage: 200 * MiB,
      inactiveFile: 50 * MiB,
      anon: 140 * MiB,
      pgfault: 77,
      pgmajfault: 3,
      memoryLimit: 512 * MiB,
    });
    await node.netDev(4242, [['eth0', 12345, 678]]);
    const logs = join(node.dir, 'pods');
    await mkdir(join(logs, `default_web_${uid}`, 'app'), { recursive: true });
    await writeFile(join(logs, `default_web_${uid}`, 'app', '0.log'), 'x'.repeat(10_000));
    const statfs = async (path: string): Promise<StatfsResult> => {
      if (path !== '/var/lib/kubelet') throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      return { bsize: 4096, blocks: 1000, bfree: 400, bavail: 300, files: 500, ffree: 100 };
    };
    const stats = createStatsProvider({
      nodeName: 'n',
      cri: h.cri,
      clock: h.clock,
      cgroupRoot: node.cgroupRoot,
      procRoot: node.procRoot,
      podLogsDirectory: logs,
      statfs,
    });
    await stats.start();
    await node.cgroup(`${pod}/${cid}`, {
      cpuUsageNs: 12e9,
      memoryUsage: 200 * MiB,
      inactiveFile: 50 * MiB,
      anon: 140 * MiB,
      pgfault: 77,
      pgmajfault: 3,
      memoryLimit: 512 * MiB,
    });
    await h.clock.advance(10_000);
    await stats.housekeep();
    const s = await stats.get(true);
    expect(stats.cgroupVersion).toBe(version);
    const c = s.pods[0]?.containers[0];
    expect(c?.cpu).toEqual({
      time: '2023-11-14T22:13:30Z',
      usageNanoCores: 200_000_000,
      usageCoreNanoSeconds: 12e9,
    });
    expect(c?.memory).toEqual({
      time: '2023-11-14T22:13:30Z',
      availableBytes: 512 * MiB - 150 * MiB,
      usageBytes: 200 * MiB,
      workingSetBytes: 150 * MiB,
      rssBytes: 140 * MiB,
      pageFaults: 77,
      majorPageFaults: 3,
    });
    expect(c?.rootfs?.usedBytes).toBe(8192);
    expect(c?.logs?.usedBytes).toBeGreaterThanOrEqual(10_000);
    expect(c?.logs?.capacityBytes).toBe(4096 * 1000);
    const p = s.pods[0];
    expect(p?.cpu?.usageCoreNanoSeconds).toBe(11e9);
    expect(p?.memory?.workingSetBytes).toBe(200 * MiB);
    expect(p?.process_stats).toEqual({ process_count: 3 });
    if (version === 'v2') {
      expect(p?.cpu?.psi?.some).toEqual({ total: 500, avg10: 1.5, avg60: 0.75, avg300: 0.25 });
      expect(p?.memory?.psi?.full.total).toBe(250);
      expect(p?.io).toEqual({ time: '2023-11-14T22:13:30Z', psi: p?.cpu?.psi });
    } else {
      expect(p?.cpu?.psi).toBeUndefined();
      expect(p?.io).toBeUndefined();
    }
    expect(p?.network).toMatchObject({
      name: 'eth0',
      rxBytes: 12345,
      txBytes: 678,
      rxErrors: 1,
      txErrors: 2,
    });
    expect(p?.network?.interfaces?.map((i) => i.name)).toEqual(['eth0']);
    const ws = MEM_TOTAL - MEM_FREE - 1024 * MiB;
    expect(s.node.memory?.workingSetBytes).toBe(ws);
    // The eviction manager's memory.available: capacity − working set.
    expect(s.node.memory?.availableBytes).toBe(MEM_TOTAL - ws);
    expect(s.node.cpu?.usageCoreNanoSeconds).toBe(1000e9);
    expect(s.node.fs).toMatchObject({
      capacityBytes: 4096 * 1000,
      availableBytes: 4096 * 300,
      inodesFree: 100,
      inodes: 500,
    });
    expect(s.node.systemContainers?.map((x) => x.name)).toEqual(['pods']);
    expect(s.node.rlimit).toMatchObject({ maxpid: 4194304, curproc: 321 });
    expect(s.node.startTime).toBe('2023-11-14T21:56:50Z');
    // The fake's image filesystem path does not exist here: counted, usage still reported.
    expect(s.node.runtime?.imageFs?.usedBytes).toBeGreaterThan(0);
    expect(stats.errorCounts().statfs).toBeGreaterThan(0);
    // With cgroups to read, as the kubelet without PodAndContainerStatsFromCRI: never asked.
    await stats.cadvisorSnapshot();
    expect(h.fake.calls('ListPodSandboxStats')).toEqual([]);
    expect(h.fake.calls('ListContainerStats').length).toBeGreaterThan(0);
    // The node's part alone (what the eviction manager reads every round): the same node, and
    // no pod, container or container stats listed for it.
    const rpcs = ['ListPodSandbox', 'ListContainers', 'ListContainerStats'] as const;
    const listed = rpcs.map((rpc) => h.fake.calls(rpc).length);
    expect(await stats.get(true, { pods: false })).toEqual({ node: s.node, pods: [] });
    expect(rpcs.map((rpc) => h.fake.calls(rpc).length)).toEqual(listed);
    await stats.stop();
  });

  it('falls back to CRI for a container whose cgroup vanished, and counts it', async () => {
    node = await FakeNode.create(version);
    const uid = uidOf(10);
    const { containerIds } = await runPod(h, 'web', uid, ['app']);
    await h.clock.advance(10_000);
    const pod = `/kubepods/pod${uid}`;
    await node.cgroup(pod, { cpuUsageNs: 1, memoryUsage: 1, inactiveFile: 0, anon: 1 });
    const stats = createStatsProvider({
      nodeName: 'n',
      cri: h.cri,
      clock: h.clock,
      cgroupRoot: node.cgroupRoot,
      procRoot: node.procRoot,
    });
    await stats.housekeep();
    const s = await stats.get(true);
    const c = s.pods[0]?.containers[0];
    expect(containerIds).toHaveLength(1);
    expect(c?.memory?.workingSetBytes).toBe(64 * MiB);
    expect(c?.cpu?.usageCoreNanoSeconds).toBe(5e9);
    expect(stats.errorCounts().du).toBeGreaterThan(0);
  });

  it('counts read failures on nodeagent_stats_errors_total{source}', async () => {
    node = await FakeNode.create(version);
    await runPod(h, 'web', uidOf(11), ['app']);
    const registry = new promClient.Registry();
    const stats = createStatsProvider({
      nodeName: 'n',
      cri: h.cri,
      clock: h.clock,
      cgroupRoot: node.cgroupRoot,
      procRoot: node.procRoot,
      statfs: async (path) => {
        throw new Error(`statfs ${path}: ENOENT`);
      },
      metrics: { registry, promClient },
    });
    await stats.get(true);
    const text = await registry.metrics();
    expect(text).toMatch(/nodeagent_stats_errors_total\{source="statfs"\} [1-9]/);
    expect(text).toMatch(/nodeagent_stats_errors_total\{source="du"\} 1/);
  });
});

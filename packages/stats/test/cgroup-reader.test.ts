import { noopLogger } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CgroupTree,
  detectCgroupVersion,
  Housekeeping,
  ProcFs,
  parsePressure,
  StatsErrorRecorder,
} from '../src/index.js';
import { FakeNode, MEM_FREE, MEM_TOTAL, type Version } from './support/fake-node.js';

const UID = '0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';
const CID = 'a'.repeat(64);
const POD = `/kubepods/burstable/pod${UID}`;

let node: FakeNode | undefined;
afterEach(async () => {
  await node?.cleanup();
  node = undefined;
});

describe.each<Version>(['v1', 'v2'])('cgroup %s', (version) => {
  it('is detected, and reads working set as usage − inactive_file, RSS, faults, OOM kills and PIDs', async () => {
    node = await FakeNode.create(version);
    await node.cgroup(`${POD}/${CID}`, {
      cpuUsageNs: 5e9,
      userNs: 3e9,
      systemNs: 2e9,
      memoryUsage: 100 << 20,
      inactiveFile: 30 << 20,
      anon: 60 << 20,
      pgfault: 1234,
      pgmajfault: 5,
      oomKills: 2,
      pids: 7,
      memoryLimit: 200 << 20,
    });
    expect(await detectCgroupVersion(node.cgroupRoot)).toBe(version);
    const tree = new CgroupTree(node.cgroupRoot, version);
    const { sample, problems, exists } = await tree.read(`${POD}/${CID}`, 1000);
    expect(exists).toBe(true);
    expect(problems).toEqual([]);
    expect(sample).toMatchObject({
      cpuUsageNs: 5e9,
      cpuUserNs: 3e9,
      cpuSystemNs: 2e9,
      memoryUsageBytes: 100 << 20,
      workingSetBytes: 70 << 20,
      rssBytes: 60 << 20,
      pgfault: 1234,
      pgmajfault: 5,
      oomKills: 2,
      pids: 7,
      memoryLimitBytes: 200 << 20,
      cpuQuotaUs: 0,
    });
  });

  it('floors the working set at 0 when inactive_file exceeds usage (cAdvisor)', async () => {
    node = await FakeNode.create(version);
    await node.cgroup(POD, { cpuUsageNs: 1, memoryUsage: 10, inactiveFile: 20, anon: 0 });
    const { sample } = await new CgroupTree(node.cgroupRoot, version).read(POD, 0);
    expect(sample.workingSetBytes).toBe(0);
  });

  it('gives a partial sample and names the file when one is missing; a vanished cgroup does not exist', async () => {
    node = await FakeNode.create(version);
    await node.cgroup(POD, { cpuUsageNs: 9e9, memoryUsage: 10 << 20, inactiveFile: 0, anon: 1 });
    await node.removeFile(POD, 'memory', version === 'v2' ? 'memory.current' : 'memory.usage_in_bytes');
    const tree = new CgroupTree(node.cgroupRoot, version);
    const partial = await tree.read(POD, 0);
    expect(partial.exists).toBe(true);
    expect(partial.sample.cpuUsageNs).toBe(9e9);
    expect(partial.sample.memoryUsageBytes).toBeUndefined();
    expect(partial.sample.workingSetBytes).toBeUndefined();
    expect(partial.problems).toContainEqual({
      cgroup: POD,
      file: version === 'v2' ? 'memory.current' : 'memory.usage_in_bytes',
      reason: 'ENOENT',
    });
    const gone = await tree.read(`${POD}/${'b'.repeat(64)}`, 0);
    expect(gone.exists).toBe(false);
  });

  it('discovers pod and container cgroups under cgroupfs and systemd names', async () => {
    node = await FakeNode.create(version);
    const c = { cpuUsageNs: 1, memoryUsage: 1, inactiveFile: 0, anon: 1 };
    await node.cgroup(`${POD}/${CID}`, c);
    const uid2 = '11111111-2222-3333-4444-555555555555';
    await node.cgroup(`/kubepods/pod${uid2}/cri-containerd-${'c'.repeat(64)}.scope`, c);
    // Housekeeping yields to the event loop at `pause`, which discovery awaits after each pod.
    let pauses = 0;
    const layout = await new CgroupTree(node.cgroupRoot, version).discover(
      ['kubepods.slice', 'kubepods'],
      async () => {
        pauses += 1;
      },
    );
    expect(pauses).toBe(2);
    expect(layout.podsRoot).toBe('/kubepods');
    expect(layout.intermediate).toEqual(['/kubepods/burstable']);
    expect(layout.pods.get(UID)?.containers.get(CID)).toBe(`${POD}/${CID}`);
    expect(layout.pods.get(uid2)?.containers.get('c'.repeat(64))).toBe(
      `/kubepods/pod${uid2}/cri-containerd-${'c'.repeat(64)}.scope`,
    );
    await node.cgroup(
      `/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${uid2.replaceAll('-', '_')}.slice/cri-containerd-${'d'.repeat(64)}.scope`,
      c,
    );
    const systemd = await new CgroupTree(node.cgroupRoot, version).discover(['kubepods.slice', 'kubepods']);
    expect(systemd.podsRoot).toBe('/kubepods.slice');
    expect([...(systemd.pods.get(uid2)?.containers.keys() ?? [])]).toEqual(['d'.repeat(64)]);
  });
});

describe('pressure (PSI, cgroup v2)', () => {
  it('parses some/full lines; an old cpu.pressure without full gives zeros', () => {
    expect(
      parsePressure(
        'some avg10=1.50 avg60=0.75 avg300=0.25 total=123456\nfull avg10=0.50 avg60=0.25 avg300=0.10 total=654\n',
      ),
    ).toEqual({
      some: { avg10: 1.5, avg60: 0.75, avg300: 0.25, total: 123456 },
      full: { avg10: 0.5, avg60: 0.25, avg300: 0.1, total: 654 },
    });
    expect(parsePressure('some avg10=0.00 avg60=0.00 avg300=0.00 total=9\n')?.full).toEqual({
      avg10: 0,
      avg60: 0,
      avg300: 0,
      total: 0,
    });
    expect(parsePressure('')).toBeUndefined();
  });

  it('is read with the cgroup, and is absent (not an error) on kernels without PSI', async () => {
    node = await FakeNode.create('v2');
    await node.cgroup(POD, {
      cpuUsageNs: 1,
      memoryUsage: 1,
      inactiveFile: 0,
      anon: 1,
      pressureTotalUs: 2_000_000,
    });
    await node.cgroup(`${POD}/${CID}`, { cpuUsageNs: 1, memoryUsage: 1, inactiveFile: 0, anon: 1 });
    const tree = new CgroupTree(node.cgroupRoot, 'v2');
    const withPsi = await tree.read(POD, 0);
    expect(withPsi.sample.cpuPressure?.some.total).toBe(2_000_000);
    expect(withPsi.sample.ioPressure?.full.total).toBe(1_000_000);
    const without = await tree.read(`${POD}/${CID}`, 0);
    expect(without.sample.memoryPressure).toBeUndefined();
    expect(without.problems).toEqual([]);
  });
});

describe('housekeeping', () => {
  it('computes usageNanoCores from two passes 10 s apart on the injected clock', async () => {
    node = await FakeNode.create('v2');
    const clock = new FakeClock({ startMs: 1_700_000_000_000 });
    const errors = new StatsErrorRecorder(noopLogger);
    const hk = new Housekeeping({
      tree: new CgroupTree(node.cgroupRoot, 'v2'),
      proc: new ProcFs(node.procRoot),
      podsCgroupRoots: ['kubepods'],
      clock,
      errors,
    });
    const path = `${POD}/${CID}`;
    await node.cgroup('/', { cpuUsageNs: 100e9, memoryUsage: 0, inactiveFile: 1 << 30, anon: 0 });
    await node.cgroup(path, { cpuUsageNs: 1e9, memoryUsage: 1, inactiveFile: 0, anon: 1 });
    const first = await hk.start();
    expect(first.cgroups.get(path)?.usageNanoCores).toBeUndefined();
    // The v2 root has no memory.current: usage comes from /proc/meminfo (MemTotal − MemFree).
    expect(first.cgroups.get('/')?.latest.memoryUsageBytes).toBe(MEM_TOTAL - MEM_FREE);
    expect(first.cgroups.get('/')?.latest.workingSetBytes).toBe(MEM_TOTAL - MEM_FREE - (1 << 30));
    await node.cgroup(path, { cpuUsageNs: 6e9, memoryUsage: 1, inactiveFile: 0, anon: 1 });
    await clock.advance(10_000);
    await hk.housekeep(); // joins the pass the interval started
    const second = hk.latest();
    expect(second?.timeMs).toBe(1_700_000_010_000);
    // 5 s of CPU in 10 s: half a core.
    expect(second?.cgroups.get(path)?.usageNanoCores).toBe(500_000_000);
    // An on-demand pass at the same instant keeps the earlier sample and the rate.
    await hk.housekeep();
    await hk.housekeep();
    expect(hk.latest()?.cgroups.get(path)?.usageNanoCores).toBe(500_000_000);
    hk.stop();
  });

  it('counts a container that vanished between list and read, and keeps the others', async () => {
    node = await FakeNode.create('v1');
    const errors = new StatsErrorRecorder(noopLogger);
    const tree = new CgroupTree(node.cgroupRoot, 'v1');
    const path = `${POD}/${CID}`;
    await node.cgroup(POD, { cpuUsageNs: 1, memoryUsage: 1, inactiveFile: 0, anon: 1 });
    await node.cgroup(path, { cpuUsageNs: 1, memoryUsage: 1, inactiveFile: 0, anon: 1 });
    const realRead = tree.read.bind(tree);
    tree.read = async (cgroup, timeMs, meminfo) => {
      if (cgroup === path) await node?.removeCgroup(path);
      return realRead(cgroup, timeMs, meminfo);
    };
    const hk = new Housekeeping({
      tree,
      proc: new ProcFs(node.procRoot),
      podsCgroupRoots: ['kubepods'],
      clock: new FakeClock(),
      errors,
    });
    const snap = await hk.housekeep();
    expect(snap.cgroups.has(path)).toBe(false);
    expect(snap.cgroups.get(POD)?.latest.cpuUsageNs).toBe(1);
    expect(errors.snapshot().cgroup).toBeGreaterThanOrEqual(1);
  });
});

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// The hierarchy on fake cgroup trees (v1 and v2, cgroupfs and systemd): the files the kubelet
// writes, where pod cgroups go, the parent the runtime gets, destroy and orphan cleanup.
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CgroupError,
  type CgroupPod,
  ContainerManager,
  type ContainerManagerOptions,
  NoopContainerManager,
} from '../src/index.js';
import { createFakeCgroupTree, type FakeCgroupTree } from '../src/testing.js';

const Mi = 1024n * 1024n;
const trees: FakeCgroupTree[] = [];
afterEach(() => {
  for (const t of trees.splice(0)) t.remove();
});

function setup(version: 1 | 2, extra: Partial<ContainerManagerOptions> & { hybrid?: boolean } = {}) {
  const tree = createFakeCgroupTree({
    version,
    hugePagesKb: [2048],
    ...(extra.hybrid ? { hybrid: true } : {}),
  });
  trees.push(tree);
  const pods: CgroupPod[] = [];
  const cm = new ContainerManager({
    capacity: { cpu: '4', memory: '8Gi', 'hugepages-2Mi': '0' },
    kubeReserved: { cpu: '100m', memory: '512Mi', pid: '1000' },
    systemReserved: { memory: '256Mi' },
    cgroupMountRoot: tree.mountRoot,
    procRoot: tree.procRoot,
    sysRoot: tree.sysRoot,
    fs: tree.fs,
    clock: new FakeClock(),
    activePods: () => pods,
    ...extra,
  });
  return { tree, cm, pods };
}

const guaranteed: CgroupPod = {
  metadata: { uid: '11111111-aaaa-bbbb-cccc-000000000001' },
  spec: {
    containers: [
      { resources: { requests: { cpu: '500m', memory: '128Mi' }, limits: { cpu: '500m', memory: '128Mi' } } },
    ],
  },
};
const burstable: CgroupPod = {
  metadata: { uid: '22222222-aaaa-bbbb-cccc-000000000002' },
  spec: {
    containers: [{ resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { memory: '128Mi' } } }],
  },
};
const besteffort: CgroupPod = {
  metadata: { uid: '33333333-aaaa-bbbb-cccc-000000000003' },
  spec: { containers: [{}] },
};
const allocatableMemory = (8n * 1024n - 512n - 256n) * Mi;
// min(pid_max 4194304, threads-max 126000) − kube-reserved pid 1000.
const allocatablePids = 126_000n - 1000n;

describe('cgroup v2, cgroupfs driver', () => {
  it('creates kubepods with node allocatable and the QoS tiers', async () => {
    const { tree, cm } = setup(2);
    await cm.start();
    await cm.start(); // idempotent
    expect(tree.read('kubepods/memory.max')).toBe(String(allocatableMemory));
    expect(tree.read('kubepods/cpu.weight')).toBe('153'); // 3900m → 3993 shares → weight
    expect(tree.read('kubepods/pids.max')).toBe(String(allocatablePids));
    expect(tree.read('kubepods/cpuset.cpus')).toBe('0-3');
    expect(tree.read('kubepods/memory.min')).toBe('0');
    expect(tree.read('kubepods/besteffort/cpu.weight')).toBe('1');
    expect(tree.read('kubepods/burstable/cpu.weight')).toBe('1');
    // Controllers delegated down the tree, as runc enables them.
    expect(tree.read('cgroup.subtree_control').split(' ')).toContain('memory');
    expect(tree.read('kubepods/burstable/cgroup.controllers').split(' ')).toEqual(
      expect.arrayContaining(['cpu', 'memory', 'pids', 'cpuset']),
    );
    await cm.stop();
  });

  it('pod cgroups carry the pod values; Guaranteed pods sit in kubepods itself', async () => {
    const { tree, cm, pods } = setup(2);
    await cm.start();
    pods.push(guaranteed, burstable, besteffort);
    for (const p of pods) cm.ensurePodCgroup(p);
    const g = `kubepods/pod${guaranteed.metadata?.uid}`;
    expect(cm.podCgroupParent(guaranteed)).toBe(`/${g}`);
    expect(tree.read(`${g}/cpu.weight`)).toBe('20'); // 500m → 512 shares
    expect(tree.read(`${g}/cpu.max`)).toBe('50000 100000');
    expect(tree.read(`${g}/memory.max`)).toBe(String(128n * Mi));
    expect(tree.read(`${g}/hugetlb.2MB.max`)).toBe('0');
    const b = `kubepods/burstable/pod${burstable.metadata?.uid}`;
    expect(cm.podCgroupParent(burstable)).toBe(`/${b}`);
    expect(tree.read(`${b}/cpu.weight`)).toBe('10'); // 250m → 256 shares
    expect(tree.exists(`${b}/cpu.max`)).toBe(false); // no cpu limit: left at the kernel's "max"
    expect(tree.read(`${b}/memory.max`)).toBe(String(128n * Mi));
    const e = `kubepods/besteffort/pod${besteffort.metadata?.uid}`;
    expect(tree.read(`${e}/cpu.weight`)).toBe('1');
    expect(tree.exists(`${e}/memory.max`)).toBe(false);
    // The burstable tier followed the new pod (UpdateQOSCgroups before EnsureExists).
    expect(tree.read('kubepods/burstable/cpu.weight')).toBe('10');
    expect(cm.podCgroupExists(burstable)).toBe(true);
  });

  it('destroy kills through cgroup.kill and removes the pod cgroup with its container cgroups', async () => {
    const { tree, cm } = setup(2);
    await cm.start();
    cm.ensurePodCgroup(burstable);
    const b = `kubepods/burstable/pod${burstable.metadata?.uid}`;
    tree.addProcs(`${b}/ctr1`, [4001, 4002]);
    await cm.destroyPodCgroup(burstable);
    expect(tree.killed).toEqual([4001, 4002]);
    expect(tree.exists(b)).toBe(false);
    expect(tree.exists('kubepods/burstable')).toBe(true);
  });

  it('pods pids limit (podPidsLimit) and CFS quota off', async () => {
    const { tree, cm } = setup(2, { podPidsLimit: 512, cpuCfsQuota: false });
    await cm.start();
    cm.ensurePodCgroup(guaranteed);
    const g = `kubepods/pod${guaranteed.metadata?.uid}`;
    expect(tree.read(`${g}/pids.max`)).toBe('512');
    expect(tree.read(`${g}/cpu.max`)).toBe('max 100000');
  });

  it('without enforceNodeAllocatable "pods" kubepods gets the capacity', async () => {
    const { tree, cm } = setup(2, { enforceNodeAllocatable: [] });
    await cm.start();
    expect(tree.read('kubepods/memory.max')).toBe(String(8n * 1024n * Mi));
    expect(tree.read('kubepods/pids.max')).toBe('126000');
  });
});

describe('cgroup v2, systemd driver', () => {
  it('names the slices as the kubelet and passes the expanded path as the parent', async () => {
    const { tree, cm } = setup(2, { cgroupDriver: 'systemd' });
    await cm.start();
    expect(tree.exists('kubepods.slice/kubepods-burstable.slice')).toBe(true);
    expect(tree.exists('kubepods.slice/kubepods-besteffort.slice')).toBe(true);
    cm.ensurePodCgroup(burstable);
    const slice = 'kubepods-burstable-pod22222222_aaaa_bbbb_cccc_000000000002.slice';
    expect(cm.podCgroupParent(burstable)).toBe(`/kubepods.slice/kubepods-burstable.slice/${slice}`);
    expect(tree.read(`kubepods.slice/kubepods-burstable.slice/${slice}/memory.max`)).toBe(String(128n * Mi));
    expect(cm.podCgroupParent(guaranteed)).toBe(
      '/kubepods.slice/kubepods-pod11111111_aaaa_bbbb_cccc_000000000001.slice',
    );
    const found = cm.getAllPodsFromCgroups();
    expect([...found.keys()]).toEqual([burstable.metadata?.uid]);
    expect(await cm.cleanupOrphanedPodCgroups(new Set())).toEqual([burstable.metadata?.uid]);
    expect(tree.exists(`kubepods.slice/kubepods-burstable.slice/${slice}`)).toBe(false);
  });
});

describe('cgroup v1, cgroupfs driver', () => {
  it('creates the hierarchy in every controller with the v1 files', async () => {
    const { tree, cm } = setup(1);
    await cm.start();
    expect(tree.read('memory/kubepods/memory.limit_in_bytes')).toBe(String(allocatableMemory));
    expect(tree.read('cpu/kubepods/cpu.shares')).toBe('3993');
    expect(tree.read('pids/kubepods/pids.max')).toBe(String(allocatablePids));
    expect(tree.read('cpuset/kubepods/cpuset.cpus')).toBe('0-3');
    expect(tree.read('cpuset/kubepods/cpuset.mems')).toBe('0');
    expect(tree.read('cpu/kubepods/besteffort/cpu.shares')).toBe('2');
    expect(tree.read('cpu/kubepods/burstable/cpu.shares')).toBe('2');
    for (const c of ['cpuacct', 'blkio', 'systemd'])
      expect(tree.exists(`${c}/kubepods/burstable`)).toBe(true);
    expect(tree.exists('kubepods/memory.min')).toBe(false);
  });

  it('pod values in cpu.shares, cfs quota/period and memory.limit_in_bytes', async () => {
    const { tree, cm, pods } = setup(1);
    await cm.start();
    pods.push(burstable);
    cm.ensurePodCgroup(guaranteed);
    cm.ensurePodCgroup(burstable);
    const g = `kubepods/pod${guaranteed.metadata?.uid}`;
    expect(tree.read(`cpu/${g}/cpu.shares`)).toBe('512');
    expect(tree.read(`cpu/${g}/cpu.cfs_quota_us`)).toBe('50000');
    expect(tree.read(`cpu/${g}/cpu.cfs_period_us`)).toBe('100000');
    expect(tree.read(`memory/${g}/memory.limit_in_bytes`)).toBe(String(128n * Mi));
    const b = `kubepods/burstable/pod${burstable.metadata?.uid}`;
    expect(tree.read(`cpu/${b}/cpu.shares`)).toBe('256');
    expect(tree.exists(`cpu/${b}/cpu.cfs_quota_us`)).toBe(false);
    expect(tree.read('cpu/kubepods/burstable/cpu.shares')).toBe('256');
    expect(tree.read(`cpuset/${b}/cpuset.cpus`)).toBe('0-3');
    // Huge pages: pods get their requests (0 here), the QoS tiers stay unbounded, kubepods the capacity.
    expect(tree.read(`hugetlb/${b}/hugetlb.2MB.limit_in_bytes`)).toBe('0');
    expect(tree.read('hugetlb/kubepods/burstable/hugetlb.2MB.limit_in_bytes')).toBe(String(1n << 62n));
  });

  it('destroy SIGKILLs every process then removes the cgroup from every hierarchy (hybrid unified too)', async () => {
    const { tree, cm } = setup(1, { hybrid: true });
    await cm.start();
    cm.ensurePodCgroup(besteffort);
    const e = `kubepods/besteffort/pod${besteffort.metadata?.uid}`;
    tree.addProcs(`memory/${e}/abc`, [7001]);
    tree.addProcs(`pids/${e}/abc`, [7001, 7002]);
    tree.addProcs(`unified/${e}/abc`, [7002]);
    await cm.destroyPodCgroup(besteffort);
    expect(tree.killed.sort()).toEqual([7001, 7002]);
    for (const c of ['cpu', 'memory', 'pids', 'systemd', 'unified'])
      expect(tree.exists(`${c}/${e}`)).toBe(false);
  });

  it('removes only orphaned pod cgroups; pods with volumes left get minimal shares', async () => {
    const { tree, cm } = setup(1);
    await cm.start();
    cm.ensurePodCgroup(guaranteed);
    cm.ensurePodCgroup(burstable);
    cm.ensurePodCgroup(besteffort);
    expect([...cm.getAllPodsFromCgroups().keys()].sort()).toEqual(
      [guaranteed, burstable, besteffort].map((p) => p.metadata?.uid).sort(),
    );
    const removed = await cm.cleanupOrphanedPodCgroups(
      new Set([guaranteed.metadata?.uid ?? '']),
      (uid) => uid === burstable.metadata?.uid,
    );
    expect(removed).toEqual([besteffort.metadata?.uid]);
    expect(tree.exists(`cpu/kubepods/pod${guaranteed.metadata?.uid}`)).toBe(true);
    expect(tree.read(`cpu/kubepods/burstable/pod${burstable.metadata?.uid}/cpu.shares`)).toBe('2');
    expect(tree.exists(`cpu/kubepods/besteffort/pod${besteffort.metadata?.uid}`)).toBe(false);
  });

  it('repeated listings follow pods that come and go (parses are kept per name, dropped when gone)', async () => {
    const { tree, cm } = setup(1);
    await cm.start();
    cm.ensurePodCgroup(burstable);
    cm.ensurePodCgroup(besteffort);
    const uids = () => [...cm.getAllPodsFromCgroups().keys()].sort();
    expect(uids()).toEqual([burstable, besteffort].map((p) => p.metadata?.uid).sort());
    await cm.destroyPodCgroup(besteffort);
    expect(uids()).toEqual([burstable.metadata?.uid]);
    cm.ensurePodCgroup(guaranteed);
    cm.ensurePodCgroup(besteffort);
    expect(uids()).toEqual([guaranteed, burstable, besteffort].map((p) => p.metadata?.uid).sort());
    // A directory with the prefix twice is not a pod cgroup, on every listing.
    mkdirSync(join(tree.mountRoot, 'memory/kubepods/burstable/podpodx'));
    expect(uids()).toEqual([guaranteed, burstable, besteffort].map((p) => p.metadata?.uid).sort());
    expect(uids()).toHaveLength(3);
  });

  it('the orphan cleanup acts on the listing it is given, without listing again', async () => {
    const { tree, cm } = setup(1);
    await cm.start();
    cm.ensurePodCgroup(burstable);
    const listed = cm.getAllPodsFromCgroups();
    // Created after the listing: not in it, so not a candidate in this pass.
    cm.ensurePodCgroup(besteffort);
    expect(await cm.cleanupOrphanedPodCgroups(new Set(), () => false, listed)).toEqual([
      burstable.metadata?.uid,
    ]);
    expect(tree.exists(`memory/kubepods/burstable/pod${burstable.metadata?.uid}`)).toBe(false);
    expect(tree.exists(`memory/kubepods/besteffort/pod${besteffort.metadata?.uid}`)).toBe(true);
    // Without a listing it lists the hierarchies itself.
    expect(await cm.cleanupOrphanedPodCgroups(new Set())).toEqual([besteffort.metadata?.uid]);
  });

  it('pod directories only, from the listing or (without subdirectories) a stat per entry', async () => {
    const { tree, cm } = setup(1);
    await cm.start();
    cm.ensurePodCgroup(burstable);
    cm.ensurePodCgroup(besteffort);
    // A file whose name looks like a pod cgroup is not one.
    writeFileSync(join(tree.mountRoot, 'memory/kubepods/burstable/pod-not-a-dir'), '');
    const expected = [burstable, besteffort].map((p) => p.metadata?.uid).sort();
    expect([...cm.getAllPodsFromCgroups().keys()].sort()).toEqual(expected);
    const { subdirectories: _, ...statPerEntry } = tree.fs;
    const viaStat = new ContainerManager({
      capacity: { cpu: '4', memory: '8Gi', 'hugepages-2Mi': '0' },
      cgroupMountRoot: tree.mountRoot,
      procRoot: tree.procRoot,
      sysRoot: tree.sysRoot,
      fs: statPerEntry,
      clock: new FakeClock(),
      activePods: () => [],
    });
    await viaStat.start();
    expect([...viaStat.getAllPodsFromCgroups().keys()].sort()).toEqual(expected);
    expect(await viaStat.cleanupOrphanedPodCgroups(new Set([burstable.metadata?.uid ?? '']))).toEqual([
      besteffort.metadata?.uid,
    ]);
    expect(tree.exists(`memory/kubepods/besteffort/pod${besteffort.metadata?.uid}`)).toBe(false);
  });

  it('a cgroupRoot below the mount root holds kubepods', async () => {
    const { tree, cm } = setup(1, { cgroupRoot: '/nodeagent-test' });
    for (const c of ['cpu', 'cpuacct', 'cpuset', 'memory', 'hugetlb', 'pids', 'blkio', 'systemd'])
      tree.addProcs(`${c}/nodeagent-test`, []);
    await cm.start();
    cm.ensurePodCgroup(burstable);
    expect(cm.podCgroupParent(burstable)).toBe(
      `/nodeagent-test/kubepods/burstable/pod${burstable.metadata?.uid}`,
    );
    expect(
      tree.read(
        `memory/nodeagent-test/kubepods/burstable/pod${burstable.metadata?.uid}/memory.limit_in_bytes`,
      ),
    ).toBe(String(128n * Mi));
  });
});

describe('configuration errors and the no-op manager', () => {
  it('a missing cgroupRoot is a typed error naming it', async () => {
    const { cm } = setup(2, { cgroupRoot: '/does-not-exist' });
    await expect(cm.start()).rejects.toThrow(CgroupError);
    await expect(cm.start()).rejects.toThrow(
      /invalid configuration: cgroup "\/does-not-exist" does not exist/,
    );
  });

  it('a pod without a UID cannot be named', async () => {
    const { cm } = setup(2);
    await cm.start();
    expect(() => cm.ensurePodCgroup({ spec: { containers: [{}] } })).toThrow(/pod has no metadata.uid/);
  });

  it('cgroupsPerQOS off creates nothing and gives no parent', async () => {
    const { tree, cm } = setup(2, { cgroupsPerQOS: false });
    await cm.start();
    cm.ensurePodCgroup(burstable);
    expect(cm.podCgroupParent(burstable)).toBe('');
    expect(tree.exists('kubepods')).toBe(false);
  });

  it('the no-op manager (fake runtime) leaves the parent empty', async () => {
    const noop = new NoopContainerManager();
    await noop.start();
    noop.ensurePodCgroup();
    expect(noop.podCgroupParent()).toBe('');
    expect(await noop.cleanupOrphanedPodCgroups()).toEqual([]);
  });
});

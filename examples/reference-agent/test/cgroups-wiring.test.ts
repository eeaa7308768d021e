// The agent's cgroup wiring: the kubelet's cgroup flags, which manager a runtime gets, the
// pod cgroup around the sync callbacks (created before the runtime acts, removed after the pod
// terminated), and the orphan cleanup at housekeeping — on a fake cgroup v2 tree.
import type { V1Pod } from '@kubernetes/client-node';
import { ContainerManager, NoopContainerManager } from '@nodeagent/cgroups';
import { createFakeCgroupTree, type FakeCgroupTree } from '@nodeagent/cgroups/testing';
import { noopLogger } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import type { PodSyncer, SyncContext } from '@nodeagent/pod-workers';
import type { MachineInfo } from '@nodeagent/status';
import { afterEach, describe, expect, it } from 'vitest';
import { CgroupPodSyncer, createPodCgroups, startOrphanCgroupCleanup } from '../src/cgroups-wiring.js';
import { FlagError, parseFlags } from '../src/flags.js';

const trees: FakeCgroupTree[] = [];
afterEach(() => {
  for (const t of trees.splice(0)) t.remove();
});

const machine = { cpus: 2, memoryBytes: 4 * 1024 ** 3, hugePages: {} } as unknown as MachineInfo;
const pod = (uid: string, phase?: string): V1Pod => ({
  metadata: { name: uid, namespace: 'default', uid },
  spec: {
    containers: [{ name: 'app', resources: { requests: { cpu: '100m' }, limits: { memory: '32Mi' } } }],
  },
  ...(phase === undefined ? {} : { status: { phase } }),
});

async function manager(clock = new FakeClock()) {
  const tree = createFakeCgroupTree({ version: 2 });
  trees.push(tree);
  const cgroups = createPodCgroups({
    flags: { cgroupRoot: '/' },
    realRuntime: true,
    machine,
    kubeReserved: undefined,
    systemReserved: undefined,
    activePods: () => [],
    overrides: {
      cgroupMountRoot: tree.mountRoot,
      fs: tree.fs,
      procRoot: tree.procRoot,
      sysRoot: tree.sysRoot,
    },
    clock,
    logger: noopLogger,
  });
  await cgroups.start();
  return { tree, cgroups: cgroups as ContainerManager, clock };
}

describe('cgroup flags', () => {
  it('reads the kubelet spellings', () => {
    const f = parseFlags(
      [
        '--cgroup-driver',
        'systemd',
        '--cgroup-root',
        '/custom',
        '--cgroups-per-qos',
        '--enforce-node-allocatable',
        'pods',
      ],
      'node',
    );
    expect(f.cgroups).toEqual({
      cgroupDriver: 'systemd',
      cgroupRoot: '/custom',
      cgroupsPerQOS: true,
      enforceNodeAllocatable: ['pods'],
    });
    expect(
      parseFlags(['--cgroups-per-qos=false', '--enforce-node-allocatable=none'], 'node').cgroups,
    ).toMatchObject({
      cgroupsPerQOS: false,
      enforceNodeAllocatable: [],
    });
    expect(parseFlags([], 'node').cgroups.cgroupDriver).toBeUndefined();
  });

  it('rejects bad values with the flag named', () => {
    expect(() => parseFlags(['--cgroup-driver', 'docker'], 'n')).toThrow(FlagError);
    expect(() => parseFlags(['--cgroup-driver', 'docker'], 'n')).toThrow(
      /--cgroup-driver: expected cgroupfs or systemd/,
    );
    expect(() => parseFlags(['--cgroup-root', 'kubepods'], 'n')).toThrow(
      /--cgroup-root: expected an absolute/,
    );
    expect(() => parseFlags(['--cgroups-per-qos=maybe'], 'n')).toThrow(
      /--cgroups-per-qos: expected true or false/,
    );
    expect(() => parseFlags(['--enforce-node-allocatable', 'pods,bogus'], 'n')).toThrow(
      /unknown value "bogus"/,
    );
  });
});

describe('which manager', () => {
  it('the fake runtime gets the no-op manager (no root, no parent)', () => {
    const cgroups = createPodCgroups({
      flags: undefined,
      realRuntime: false,
      machine,
      kubeReserved: undefined,
      systemReserved: undefined,
      activePods: () => [],
      clock: new FakeClock(),
      logger: noopLogger,
    });
    expect(cgroups).toBeInstanceOf(NoopContainerManager);
    expect(cgroups.podCgroupParent(pod('x'))).toBe('');
  });

  it('a real runtime gets the container manager with the machine as capacity', async () => {
    const { tree, cgroups } = await manager();
    expect(cgroups).toBeInstanceOf(ContainerManager);
    expect(tree.read('kubepods/memory.max')).toBe(String(4 * 1024 ** 3));
  });
});

describe('CgroupPodSyncer', () => {
  const ctx: SyncContext = { signal: new AbortController().signal };
  const recording = (seen: string[], cgroups: ContainerManager): PodSyncer<undefined> => ({
    syncPod: async (_c, _t, p) => {
      seen.push(`sync ${cgroups.podCgroupExists(p)}`);
      return { isTerminal: false };
    },
    syncTerminatingPod: async () => {
      seen.push('terminating');
    },
    syncTerminatingRuntimePod: async () => {},
    syncTerminatedPod: async (_c, p) => {
      seen.push(`terminated ${cgroups.podCgroupExists(p)}`);
    },
  });

  it('creates the pod cgroup before the runtime acts and removes it after the pod terminated', async () => {
    const { tree, cgroups } = await manager();
    const seen: string[] = [];
    const syncer = new CgroupPodSyncer(recording(seen, cgroups), cgroups, () => false);
    const p = pod('p1');
    await syncer.syncPod(ctx, 'create', p, undefined, undefined);
    expect(tree.read('kubepods/burstable/podp1/memory.max')).toBe(String(32 * 1024 * 1024));
    await syncer.syncTerminatingPod(ctx, p, undefined, 1, undefined);
    await syncer.syncTerminatedPod(ctx, p, undefined);
    expect(seen).toEqual(['sync true', 'terminating', 'terminated true']);
    expect(tree.exists('kubepods/burstable/podp1')).toBe(false);
  });

  it('no cgroup for a pod being terminated or already finished', async () => {
    const { tree, cgroups } = await manager();
    const seen: string[] = [];
    await new CgroupPodSyncer(recording(seen, cgroups), cgroups, () => true).syncPod(
      ctx,
      'sync',
      pod('p2'),
      undefined,
      undefined,
    );
    await new CgroupPodSyncer(recording(seen, cgroups), cgroups, () => false).syncPod(
      ctx,
      'sync',
      pod('p3', 'Succeeded'),
      undefined,
      undefined,
    );
    expect(seen).toEqual(['sync false', 'sync false']);
    expect(tree.exists('kubepods/burstable/podp2')).toBe(false);
  });

  it('a cgroup that cannot be created is a FailedToCreatePodContainer event and a sync error', async () => {
    const { cgroups } = await manager();
    const events: string[] = [];
    const syncer = new CgroupPodSyncer(
      recording([], cgroups),
      cgroups,
      () => false,
      (_p, _c, type, reason, message) => events.push(`${type} ${reason} ${message}`),
    );
    const bad = pod('bad_uid');
    await expect(syncer.syncPod(ctx, 'create', bad, undefined, undefined)).rejects.toThrow(
      /failed to ensure that the pod: bad_uid cgroups exist and are correctly applied: invalid character/,
    );
    expect(events[0]).toMatch(
      /^Warning FailedToCreatePodContainer unable to ensure pod container exists: invalid character/,
    );
  });
});

describe('orphan cleanup at housekeeping', () => {
  it('removes pod cgroups whose pods cannot be running, keeps the others', async () => {
    const { tree, cgroups, clock } = await manager();
    cgroups.ensurePodCgroup(pod('keep'));
    cgroups.ensurePodCgroup(pod('gone'));
    tree.addProcs('kubepods/burstable/podgone/c1', [9001]);
    const stop = startOrphanCgroupCleanup({
      cgroups,
      possiblyRunning: (uid) => uid === 'keep',
      podsRoot: tree.mountRoot,
      periodMs: 2_000,
      clock,
      logger: noopLogger,
    });
    await clock.advance(2_000);
    await stop();
    expect(tree.killed).toEqual([9001]);
    expect(tree.exists('kubepods/burstable/podgone')).toBe(false);
    expect(tree.exists('kubepods/burstable/podkeep')).toBe(true);
  });
});

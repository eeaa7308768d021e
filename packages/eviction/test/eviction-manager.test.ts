// The eviction manager's control loop against a fake Summary in fake time: every signal,
// percentages, soft grace periods, min-reclaim, the pressure transition period, one pod per
// round, critical pods, node-level reclaim, stale stats, the evicted pod's status, events,
// metrics and admission — with upstream's expectations (eviction_manager_test.go,
// helpers_test.go).
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '@nodeagent/core/testing';
import * as promClient from 'prom-client';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  EvictionManager,
  type EvictionManagerOptions,
  parseThresholdConfig,
  type ThresholdConfig,
} from '../src/index.js';
import { FakeSummary, Gi, Mi, pod, podStats, RecordingKiller } from './fixtures.js';

interface RecordedEvent {
  target: unknown;
  type: string;
  reason: string;
  message: string;
  annotations: Readonly<Record<string, string>> | undefined;
}

let clock: FakeClock;
let summary: FakeSummary;
let killer: RecordingKiller;
let pods: V1Pod[];
let events: RecordedEvent[];

beforeEach(() => {
  clock = new FakeClock({ startMs: Date.parse('2026-01-01T00:00:00Z') });
  summary = new FakeSummary(() => clock.now());
  killer = new RecordingKiller();
  pods = [];
  events = [];
});

function manager(config: ThresholdConfig, extra: Partial<EvictionManagerOptions> = {}): EvictionManager {
  return new EvictionManager({
    thresholds: parseThresholdConfig({ enforceNodeAllocatable: [], ...config }),
    summaryProvider: summary,
    activePods: () => pods,
    podKiller: killer,
    clock,
    nodeName: 'node-1',
    recorder: {
      event: (target, type, reason, message, annotations) =>
        events.push({ target, type, reason, message, annotations }),
    },
    ...extra,
  });
}

async function round(m: EvictionManager, advanceMs = 10_000): Promise<string[]> {
  await clock.advance(advanceMs);
  return (await m.synchronize()).map((p) => p.metadata?.name ?? '');
}

describe('memory.available', () => {
  it('evicts the pod exceeding its request first, with upstream status, message, condition, event and 1 s grace', async () => {
    const big = pod('big', { memoryRequest: '100Mi' });
    const best = pod('best-effort');
    const within = pod('within', { memoryRequest: '1Gi' });
    pods = [within, best, big];
    summary.pods = [
      podStats(within, { memory: 500 * Mi }),
      podStats(best, { memory: 10 * Mi }),
      podStats(big, { memory: 300 * Mi }),
    ];
    const m = manager({ evictionHard: { 'memory.available': '100Mi' } });
    summary.memoryAvailable = 200 * Mi;
    expect(await round(m)).toEqual([]);
    expect(m.isUnderMemoryPressure()).toBe(false);

    summary.memoryAvailable = 50 * Mi;
    // both best-effort and big exceed requests; same priority; big uses 200Mi above request, best 10Mi.
    expect(await round(m)).toEqual(['big']);
    expect(m.isUnderMemoryPressure()).toBe(true);
    expect(m.nodeConditions()).toEqual(['MemoryPressure']);
    const kill = killer.kills[0];
    expect(kill?.graceSeconds).toBe(1);
    const message =
      'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ' +
      'Container big was using 300Mi, request is 100Mi, has larger consumption of memory. ';
    expect(kill?.status).toMatchObject({ phase: 'Failed', reason: 'Evicted', message });
    expect(kill?.status.condition).toMatchObject({
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'TerminationByKubelet',
      message,
    });
    expect(events.map((e) => [e.type, e.reason, e.message])).toEqual([
      ['Warning', 'EvictionThresholdMet', 'Attempting to reclaim memory'],
      ['Warning', 'Evicted', message],
    ]);
    expect(events[1]?.annotations).toEqual({
      offending_containers: 'big',
      offending_containers_usage: '300Mi',
      starved_resource: 'memory',
    });
  });

  it('ranks lower priority before higher among pods exceeding requests, then usage above request', async () => {
    const low = pod('low', { priority: 0 });
    const high = pod('high', { priority: 1000 });
    const high2 = pod('high2', { priority: 1000 });
    pods = [high, high2, low];
    summary.pods = [
      podStats(high, { memory: 900 * Mi }),
      podStats(high2, { memory: 950 * Mi }),
      podStats(low, { memory: 1 * Mi }),
    ];
    summary.memoryAvailable = 10 * Mi;
    const m = manager({ evictionHard: { 'memory.available': '100Mi' } });
    expect(await round(m)).toEqual(['low']);
    pods = [high, high2];
    expect(await round(m)).toEqual(['high2']);
  });

  it('breaks complete ties by the active-pods order and ranks a pod without stats first', async () => {
    const a = pod('a');
    const b = pod('b');
    const nostats = pod('nostats', { memoryRequest: '1Gi' });
    pods = [a, b];
    summary.pods = [podStats(a, { memory: 100 * Mi }), podStats(b, { memory: 100 * Mi })];
    summary.memoryAvailable = 10 * Mi;
    const m = manager({ evictionHard: { 'memory.available': '100Mi' } });
    expect(await round(m)).toEqual(['a']);
    pods = [a, b, nostats];
    expect(await round(m)).toEqual(['nostats']);
  });

  it('never evicts static, mirror or system-critical pods; moves on to the next in rank', async () => {
    const staticPod = pod('static', { annotations: { 'kubernetes.io/config.source': 'file' } });
    const mirror = pod('mirror', { annotations: { 'kubernetes.io/config.mirror': 'abc' } });
    const critical = pod('critical', { priority: 2_000_000_000 });
    const normal = pod('normal', { priority: 2_000_000_001 - 2 });
    pods = [staticPod, mirror, critical, normal];
    summary.pods = pods.map((p, i) => podStats(p, { memory: (1000 - i) * Mi }));
    summary.memoryAvailable = 10 * Mi;
    const m = manager({ evictionHard: { 'memory.available': '100Mi' } });
    expect(await round(m)).toEqual(['normal']);
    pods = [staticPod, mirror, critical];
    expect(await round(m)).toEqual([]);
    expect(killer.kills.map((k) => k.pod)).toEqual(['normal']);
  });

  it('evicts at most one pod per round', async () => {
    pods = [pod('a'), pod('b'), pod('c')];
    summary.pods = pods.map((p) => podStats(p, { memory: 500 * Mi }));
    summary.memoryAvailable = 10 * Mi;
    const m = manager({ evictionHard: { 'memory.available': '100Mi' } });
    expect(await round(m)).toHaveLength(1);
    expect(killer.kills).toHaveLength(1);
  });

  it('counts a pod whose kill failed as evicted (upstream evictPod returns true)', async () => {
    pods = [pod('a'), pod('b')];
    summary.pods = pods.map((p) => podStats(p, { memory: 500 * Mi }));
    summary.memoryAvailable = 10 * Mi;
    killer.fail = true;
    const m = manager({ evictionHard: { 'memory.available': '100Mi' } });
    expect(await round(m)).toEqual(['a']);
    expect(killer.kills).toHaveLength(1);
  });

  it('does not evict twice on the same (stale) stats', async () => {
    pods = [pod('a'), pod('b')];
    summary.pods = pods.map((p) => podStats(p, { memory: 500 * Mi }));
    summary.memoryAvailable = 10 * Mi;
    const m = manager({ evictionHard: { 'memory.available': '100Mi' } });
    expect(await round(m)).toEqual(['a']);
    expect(await round(m, 0)).toEqual([]);
    expect(await round(m, 1)).toEqual(['a']);
  });

  it('allocatableMemory.available uses the pods system container', async () => {
    pods = [pod('a')];
    summary.pods = [podStats(pods[0] as V1Pod, { memory: 500 * Mi })];
    summary.allocatableAvailable = 50 * Mi;
    summary.allocatableWorkingSet = 950 * Mi;
    const m = manager({ evictionHard: { 'memory.available': '100Mi' }, enforceNodeAllocatable: ['pods'] });
    expect(await round(m)).toEqual(['a']);
    expect(killer.kills[0]?.status.message).toContain('Threshold quantity: 100Mi, available: 50Mi. ');
  });
});

describe('percentages, soft thresholds, min-reclaim and the transition period', () => {
  it('resolves a percentage against capacity = available + working set', async () => {
    pods = [pod('a')];
    summary.pods = [podStats(pods[0] as V1Pod, { memory: 1 * Gi })];
    summary.memoryWorkingSet = 9 * Gi;
    summary.memoryAvailable = 1 * Gi + 1; // 10% of 10Gi+1 is just above 1Gi
    const m = manager({ evictionHard: { 'memory.available': '10%' } });
    expect(await round(m)).toEqual(['a']);
    expect(killer.kills[0]?.status.message).toContain(
      `Threshold quantity: ${Math.trunc((10 * Gi + 1) * Math.fround(Math.fround(10) / 100))}, available: ${Gi + 1}. `,
    );
    summary.memoryAvailable = 2 * Gi;
    expect(await round(m)).toEqual([]);
  });

  it('a soft threshold evicts only after its grace period held, with min(max-pod-grace, the pod own grace)', async () => {
    pods = [pod('a', { terminationGracePeriodSeconds: 20 })];
    summary.pods = [podStats(pods[0] as V1Pod, { memory: 1 * Gi })];
    summary.memoryAvailable = 400 * Mi;
    const m = manager(
      {
        evictionHard: { 'memory.available': '100Mi' },
        evictionSoft: { 'memory.available': '500Mi' },
        evictionSoftGracePeriod: { 'memory.available': '1m' },
      },
      { maxPodGracePeriodSeconds: 30 },
    );
    expect(await round(m, 0)).toEqual([]);
    // pressure is reported while the soft threshold is still in its grace period
    expect(m.isUnderMemoryPressure()).toBe(true);
    expect(await round(m, 50_000)).toEqual([]);
    expect(await round(m, 10_000)).toEqual(['a']);
    expect(killer.kills[0]?.graceSeconds).toBe(20);
  });

  it('a soft threshold that clears restarts its grace period', async () => {
    pods = [pod('a')];
    summary.pods = [podStats(pods[0] as V1Pod, { memory: 1 * Gi })];
    const m = manager({
      evictionHard: {},
      evictionSoft: { 'memory.available': '500Mi' },
      evictionSoftGracePeriod: { 'memory.available': '30s' },
    });
    summary.memoryAvailable = 400 * Mi;
    expect(await round(m, 0)).toEqual([]);
    summary.memoryAvailable = 600 * Mi;
    expect(await round(m, 20_000)).toEqual([]);
    summary.memoryAvailable = 400 * Mi;
    expect(await round(m, 20_000)).toEqual([]);
    expect(await round(m, 20_000)).toEqual([]);
    expect(await round(m, 10_000)).toEqual(['a']);
    expect(killer.kills[0]?.graceSeconds).toBe(0);
  });

  it('once met, a threshold stays met until available ≥ threshold + min-reclaim', async () => {
    pods = [pod('a'), pod('b')];
    summary.pods = pods.map((p) => podStats(p, { memory: 1 * Gi }));
    const m = manager({
      evictionHard: { 'memory.available': '100Mi' },
      evictionMinimumReclaim: { 'memory.available': '500Mi' },
    });
    summary.memoryAvailable = 50 * Mi;
    expect(await round(m)).toEqual(['a']);
    summary.memoryAvailable = 300 * Mi; // above 100Mi, below 100Mi + 500Mi
    expect(await round(m)).toEqual(['a']);
    summary.memoryAvailable = 700 * Mi;
    expect(await round(m)).toEqual([]);
    summary.memoryAvailable = 300 * Mi; // not met afresh: 300Mi > 100Mi
    expect(await round(m)).toEqual([]);
  });

  it('keeps reporting pressure for the transition period after the threshold cleared', async () => {
    const m = manager(
      { evictionHard: { 'memory.available': '100Mi' } },
      { pressureTransitionPeriodMs: 5 * 60_000 },
    );
    summary.memoryAvailable = 50 * Mi;
    await round(m);
    expect(m.isUnderMemoryPressure()).toBe(true);
    summary.memoryAvailable = 1 * Gi;
    await round(m, 4 * 60_000);
    expect(m.isUnderMemoryPressure()).toBe(true);
    await round(m, 59_999);
    expect(m.isUnderMemoryPressure()).toBe(true);
    await round(m, 1);
    expect(m.isUnderMemoryPressure()).toBe(false);
  });
});

describe('disk and pid signals', () => {
  it('nodefs.available: container GC and image GC run first; when they free enough no pod is evicted', async () => {
    pods = [pod('a')];
    summary.pods = [podStats(pods[0] as V1Pod, { rootfs: 5 * Gi })];
    const calls: string[] = [];
    const nodefs = summary.nodefs as NonNullable<FakeSummary['nodefs']>;
    nodefs.available = 5 * Gi;
    const m = manager(
      { evictionHard: { 'nodefs.available': '10%' } },
      {
        containerGC: {
          deleteAllUnusedContainers: async () => {
            calls.push('containers');
          },
        },
        imageGC: {
          deleteUnusedImages: async () => {
            calls.push('images');
            nodefs.available = 20 * Gi;
          },
        },
      },
    );
    expect(await round(m)).toEqual([]);
    expect(calls).toEqual(['containers', 'images']);
    expect(m.isUnderDiskPressure()).toBe(true);
    expect(killer.kills).toEqual([]);
  });

  it('nodefs.available: when GC does not free threshold + min-reclaim, the largest disk user is evicted', async () => {
    const small = pod('small');
    const logs = pod('logs');
    const vol = pod('vol', {
      volumes: [
        { name: 'scratch', emptyDir: {} },
        { name: 'ram', emptyDir: { medium: 'Memory' } },
      ],
    });
    pods = [small, logs, vol];
    summary.pods = [
      podStats(small, { rootfs: 1 * Gi }),
      podStats(logs, { rootfs: 1 * Gi, logs: 2 * Gi }),
      podStats(vol, {
        rootfs: 1 * Gi,
        volumes: [
          { name: 'scratch', used: 3 * Gi },
          { name: 'ram', used: 50 * Gi },
        ],
      }),
    ];
    const nodefs = summary.nodefs as NonNullable<FakeSummary['nodefs']>;
    nodefs.available = 5 * Gi;
    const m = manager(
      { evictionHard: { 'nodefs.available': '10%' }, evictionMinimumReclaim: { 'nodefs.available': '5Gi' } },
      {
        containerGC: {
          deleteAllUnusedContainers: async () => {
            nodefs.available = 11 * Gi; // above 10%, not above 10% + 5Gi
          },
        },
      },
    );
    // the message carries the round's observation (before the reclaim), as upstream
    expect(await round(m)).toEqual(['vol']);
    expect(killer.kills[0]?.status.message).toBe(
      `The node was low on resource: ephemeral-storage. Threshold quantity: ${Math.trunc(100 * Gi * Math.fround(0.1))}, available: 5Gi. Container vol was using 1Gi, request is 0, has larger consumption of ephemeral-storage. `,
    );
  });

  it('with a dedicated imagefs, nodefs pressure runs no node-level reclaim and ranks by logs + volumes only', async () => {
    const root = pod('root');
    const logs = pod('logs');
    pods = [root, logs];
    summary.pods = [podStats(root, { rootfs: 9 * Gi }), podStats(logs, { logs: 1 * Gi })];
    summary.imagefs = { available: 50 * Gi, capacity: 100 * Gi, inodesFree: 1000, inodes: 1000 };
    (summary.nodefs as NonNullable<FakeSummary['nodefs']>).available = 1 * Gi;
    let gc = 0;
    const m = manager(
      { evictionHard: { 'nodefs.available': '10%' } },
      {
        diskInfo: { hasDedicatedImageFs: async () => true },
        containerGC: {
          deleteAllUnusedContainers: async () => {
            gc += 1;
          },
        },
      },
    );
    expect(await round(m)).toEqual(['logs']);
    expect(gc).toBe(0);
  });

  it('imagefs.available on a dedicated imagefs ranks by rootfs', async () => {
    const root = pod('root');
    const logs = pod('logs');
    pods = [logs, root];
    summary.pods = [podStats(root, { rootfs: 9 * Gi }), podStats(logs, { logs: 5 * Gi })];
    summary.imagefs = { available: 1 * Gi, capacity: 100 * Gi, inodesFree: 1000, inodes: 1000 };
    const m = manager(
      { evictionHard: { 'imagefs.available': '15%' } },
      { diskInfo: { hasDedicatedImageFs: async () => true } },
    );
    expect(await round(m)).toEqual(['root']);
    expect(m.isUnderDiskPressure()).toBe(true);
  });

  it('nodefs.inodesFree ranks by inodes used; the message carries the inode threshold', async () => {
    const few = pod('few');
    const many = pod('many');
    pods = [few, many];
    summary.pods = [
      podStats(few, { rootfsInodes: 10 }),
      podStats(many, { rootfsInodes: 5000, logsInodes: 10 }),
    ];
    (summary.nodefs as NonNullable<FakeSummary['nodefs']>).inodesFree = 1000;
    const m = manager({ evictionHard: { 'nodefs.inodesFree': '5%' } });
    expect(await round(m)).toEqual(['many']);
    expect(killer.kills[0]?.status.message).toBe(
      `The node was low on resource: inodes. Threshold quantity: ${Math.trunc(1_000_000 * Math.fround(0.05))}, available: 1k. `,
    );
  });

  it('imagefs.inodesFree on a single filesystem', async () => {
    pods = [pod('a')];
    summary.pods = [podStats(pods[0] as V1Pod, { rootfsInodes: 10 })];
    summary.imagefs = { available: 50 * Gi, capacity: 100 * Gi, inodesFree: 10, inodes: 1000 };
    const m = manager({ evictionHard: { 'imagefs.inodesFree': '5%' } });
    expect(await round(m)).toEqual(['a']);
    expect(m.isUnderDiskPressure()).toBe(true);
  });

  it('containerfs.available: derived from the nodefs threshold, observed from the runtime containerFs', async () => {
    const small = pod('small');
    const big = pod('big');
    pods = [small, big];
    summary.pods = [podStats(small, { rootfs: 1 * Gi }), podStats(big, { rootfs: 2 * Gi, logs: 1 * Gi })];
    summary.containerfs = { available: 1 * Gi, capacity: 100 * Gi, inodesFree: 1000, inodes: 1000 };
    const m = manager({ evictionHard: { 'nodefs.available': '10%' } });
    expect(await round(m)).toEqual(['big']);
    expect(m.thresholds().map((t) => t.signal)).toEqual(['nodefs.available', 'containerfs.available']);
    expect(m.isUnderDiskPressure()).toBe(true);
  });

  it('pid.available: lower priority first, then more processes; PIDPressure', async () => {
    const calm = pod('calm');
    const forky = pod('forky');
    const important = pod('important', { priority: 100 });
    pods = [calm, important, forky];
    summary.pods = [
      podStats(calm, { processes: 10 }),
      podStats(forky, { processes: 3000 }),
      podStats(important, { processes: 9000 }),
    ];
    summary.pid = { maxpid: 10_000, curproc: 9_990 };
    const m = manager({ evictionHard: { 'pid.available': '1%' } });
    expect(await round(m)).toEqual(['forky']);
    expect(m.nodeConditions()).toEqual(['PIDPressure']);
    expect(killer.kills[0]?.status.message).toBe(
      `The node was low on resource: pids. Threshold quantity: ${Math.trunc(10_000 * Math.fround(0.01))}, available: 10. `,
    );
  });

  it('memory is reclaimed before disk when both are met', async () => {
    pods = [pod('a')];
    summary.pods = [podStats(pods[0] as V1Pod, { memory: 1 * Gi, rootfs: 1 * Gi })];
    (summary.nodefs as NonNullable<FakeSummary['nodefs']>).available = 1 * Gi;
    summary.memoryAvailable = 10 * Mi;
    const m = manager({ evictionHard: { 'nodefs.available': '10%', 'memory.available': '100Mi' } });
    expect(await round(m)).toEqual(['a']);
    expect(killer.kills[0]?.status.message).toMatch(/^The node was low on resource: memory\. /);
    expect(m.nodeConditions()).toEqual(['DiskPressure', 'MemoryPressure']);
  });

  it('skips signals without an observation and rounds whose summary failed', async () => {
    pods = [pod('a')];
    summary.memoryAvailable = undefined;
    const m = manager({ evictionHard: { 'memory.available': '100Mi' } });
    expect(await round(m)).toEqual([]);
    summary.fail = true;
    expect(await round(m)).toEqual([]);
  });

  it("reads the node's part every round and the pods' stats only in a round that ranks pods", async () => {
    const a = pod('a', { memoryRequest: '1Gi' });
    const b = pod('b', { memoryRequest: '1Gi' });
    pods = [a, b];
    summary.pods = [podStats(a, { memory: 100 * Mi }), podStats(b, { memory: 2 * Gi })];
    const m = manager({
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' },
      evictionSoft: { 'memory.available': '500Mi' },
      evictionSoftGracePeriod: { 'memory.available': '1m30s' },
    });
    expect(await round(m)).toEqual([]);
    expect(await round(m)).toEqual([]);
    expect([summary.calls, summary.podCalls]).toEqual([2, 0]);
    // A soft threshold met inside its grace period ranks nobody yet.
    summary.memoryAvailable = 300 * Mi;
    expect(await round(m)).toEqual([]);
    expect(m.isUnderMemoryPressure()).toBe(true);
    expect(summary.podCalls).toBe(0);
    // Past a threshold the pods are ranked on their stats: b is over its request, a is not.
    summary.memoryAvailable = 50 * Mi;
    expect(await round(m)).toEqual(['b']);
    expect([summary.calls, summary.podCalls]).toEqual([5, 1]);
    // A round whose pods' stats fail evicts nobody; the next one does.
    summary.failPods = true;
    expect(await round(m)).toEqual([]);
    summary.failPods = false;
    expect(await round(m)).toEqual(['b']);
  });
});

describe('admission, metrics and the loop', () => {
  it('admits as upstream under memory and disk pressure', async () => {
    const m = manager({ evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' } });
    const bestEffort = pod('be');
    const burstable = pod('bu', { memoryRequest: '10Mi' });
    const tolerating: V1Pod = {
      ...bestEffort,
      spec: {
        ...bestEffort.spec,
        containers: bestEffort.spec?.containers ?? [],
        tolerations: [
          { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
        ],
      },
    };
    const attrs = (p: V1Pod) => ({ pod: p, otherPods: [] });
    expect(m.admit(attrs(bestEffort))).toEqual({ admit: true });
    summary.memoryAvailable = 10 * Mi;
    await round(m);
    expect(m.admit(attrs(burstable)).admit).toBe(true);
    expect(m.admit(attrs(tolerating)).admit).toBe(true);
    expect(m.admit(attrs(bestEffort))).toEqual({
      admit: false,
      reason: 'Evicted',
      message: 'The node had condition: [MemoryPressure]. ',
    });
    (summary.nodefs as NonNullable<FakeSummary['nodefs']>).available = 1 * Gi;
    await round(m);
    expect(m.admit(attrs(burstable))).toEqual({
      admit: false,
      reason: 'Evicted',
      message: 'The node had condition: [MemoryPressure DiskPressure]. ',
    });
    expect(m.admit(attrs(pod('crit', { priority: 2_000_000_000 }))).admit).toBe(true);
  });

  it('records kubelet_evictions and kubelet_eviction_stats_age_seconds by signal', async () => {
    const registry = new promClient.Registry();
    pods = [pod('a')];
    summary.pods = [podStats(pods[0] as V1Pod, { memory: 1 * Gi })];
    summary.memoryAvailable = 10 * Mi;
    const m = manager(
      { evictionHard: { 'memory.available': '100Mi' } },
      { metrics: { registry, promClient } },
    );
    await round(m);
    const text = await registry.metrics();
    expect(text).toContain('kubelet_evictions{eviction_signal="memory.available"} 1');
    expect(text).toContain('kubelet_eviction_stats_age_seconds_count{eviction_signal="memory.available"} 1');
  });

  it('runs every 10 s on the clock and stops', async () => {
    const m = manager({ evictionHard: { 'memory.available': '100Mi' } });
    await m.start();
    await clock.advance(0);
    const first = summary.calls;
    expect(first).toBe(1);
    await clock.advance(9_999);
    expect(summary.calls).toBe(first);
    await clock.advance(1);
    expect(summary.calls).toBe(first + 1);
    await m.stop();
    await clock.advance(60_000);
    expect(summary.calls).toBe(first + 1);
  });

  it('after an eviction waits for the pod cleanup (1 s polls, 30 s cap) before the next round', async () => {
    pods = [pod('a'), pod('b')];
    summary.pods = pods.map((p) => podStats(p, { memory: 1 * Gi }));
    summary.memoryAvailable = 10 * Mi;
    let cleaned = false;
    const m = manager({ evictionHard: { 'memory.available': '100Mi' } }, { podCleanedUp: () => cleaned });
    await m.start();
    await clock.advance(0);
    expect(killer.kills).toHaveLength(1);
    // A round reads the node's part; the round that ranks pods also reads the pods' stats.
    const rounds = () => summary.calls - summary.podCalls;
    await clock.advance(29_000);
    expect(rounds()).toBe(1);
    cleaned = true;
    await clock.advance(1_000);
    expect(rounds()).toBe(2);
    await m.stop();
  });

  it('an empty threshold list disables eviction', async () => {
    const m = new EvictionManager({
      thresholds: [],
      summaryProvider: summary,
      activePods: () => pods,
      podKiller: killer,
      clock,
    });
    summary.memoryAvailable = 1;
    expect(await m.synchronize()).toEqual([]);
    expect(summary.calls).toBe(0);
  });
});

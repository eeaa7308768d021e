// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// The node lifecycle controller against upstream's rules
// (kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go, tryUpdateNodeHealth,
// doNoScheduleTaintingPass, processTaintBaseEviction, handleDisruption; controller_utils.go
// MarkPodsNotReady / RecordNodeStatusChange / RecordNodeEvent), on a fake clock:
// a heartbeat is a new Ready lastHeartbeatTime or a newer Lease renewTime, seen by the
// controller on its own clock; past the grace period (strictly) the conditions go Unknown.
import { InvalidOptionsError } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { type MiniApiServer, type MiniApiServerOptions, startMiniApiServer } from '../src/index.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const micro = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, '000Z');

let server: MiniApiServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function startWith(
  clock: FakeClock,
  extra: Partial<MiniApiServerOptions> = {},
): Promise<MiniApiServer> {
  server = await startMiniApiServer({
    clock,
    nodeLifecycleController: true,
    nodeMonitorPeriodMs: 1000,
    nodeMonitorGracePeriodMs: 2000,
    nodeStartupGracePeriodMs: 6000,
    ...extra,
  });
  return server;
}

function createNode(s: MiniApiServer, name: string, clock: FakeClock, posted = true): void {
  s.store.create('nodes', {
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: {},
    status: posted
      ? {
          conditions: [
            ...['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({
              type,
              status: 'False',
              lastHeartbeatTime: iso(clock.now()),
              lastTransitionTime: iso(clock.now()),
              reason: `KubeletHasNo${type}`,
              message: 'ok',
            })),
            {
              type: 'Ready',
              status: 'True',
              lastHeartbeatTime: iso(clock.now()),
              lastTransitionTime: iso(clock.now()),
              reason: 'KubeletReady',
              message: 'kubelet is posting ready status',
            },
          ],
        }
      : {},
  });
}

function renewLease(s: MiniApiServer, name: string, clock: FakeClock): void {
  const cur = s.store.tryGet('leases', 'kube-node-lease', name);
  const spec = { holderIdentity: name, leaseDurationSeconds: 40, renewTime: micro(clock.now()) };
  if (cur) s.store.update('leases', { ...cur, spec });
  else s.store.create('leases', { metadata: { name, namespace: 'kube-node-lease' }, spec });
}

/** What the kubelet's node status loop does: a new heartbeat on every condition, Ready=status. */
function postStatus(s: MiniApiServer, name: string, clock: FakeClock, ready = 'True'): void {
  const node = s.store.get('nodes', undefined, name);
  const conds = ((node.status as any)?.conditions ?? []).map((c: any) => {
    const status = c.type === 'Ready' ? ready : 'False';
    return {
      ...c,
      status,
      lastHeartbeatTime: iso(clock.now()),
      ...(status !== c.status ? { lastTransitionTime: iso(clock.now()) } : {}),
      ...(c.type === 'Ready'
        ? ready === 'True'
          ? { reason: 'KubeletReady', message: 'kubelet is posting ready status' }
          : { reason: 'KubeletNotReady', message: 'container runtime is down' }
        : {}),
    };
  });
  node.status = { ...(node.status as object), conditions: conds };
  s.store.update('nodes', node, { subresource: 'status' });
}

function condition(s: MiniApiServer, node: string, type: string): any {
  return ((s.store.get('nodes', undefined, node).status as any).conditions ?? []).find(
    (c: any) => c?.type === type,
  );
}

function taints(s: MiniApiServer, node: string): string[] {
  return ((s.store.get('nodes', undefined, node).spec as any).taints ?? [])
    .map((t: any) => `${t.key}:${t.effect}`)
    .sort();
}

function events(s: MiniApiServer, reason: string): any[] {
  return s.store.list('events').filter((e: any) => e.reason === reason);
}

async function settle(s: MiniApiServer): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setImmediate(r));
    await s.nodeLifecycle?.idle();
  }
}

/** Advances `steps` seconds, running `each` (a kubelet's heartbeat) before each second. */
async function seconds(clock: FakeClock, steps: number, each: () => void = () => {}): Promise<void> {
  for (let i = 0; i < steps; i++) {
    each();
    await clock.advance(1000);
  }
}

describe('node lifecycle controller: heartbeats', () => {
  test('a Lease renewed alone keeps a Node healthy; Unknown strictly after the grace period from the last renewal seen', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const s = await startWith(clock);
    createNode(s, 'n1', clock);
    // Renewals at T0..T0+9s; the pass at T0+10s sees the last one: probe time T0+10s.
    await seconds(clock, 10, () => renewLease(s, 'n1', clock));
    expect(condition(s, 'n1', 'Ready').status).toBe('True');
    await seconds(clock, 2); // T0+12s: not after probe + 2s yet
    expect(condition(s, 'n1', 'Ready').status).toBe('True');
    await seconds(clock, 1); // T0+13s
    await settle(s);
    const ready = condition(s, 'n1', 'Ready');
    expect(ready).toMatchObject({
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastHeartbeatTime: iso(T0), // the kubelet's last heartbeat is kept
      lastTransitionTime: iso(T0 + 13_000),
    });
    for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      expect(condition(s, 'n1', type)).toMatchObject({
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastTransitionTime: iso(T0 + 13_000),
      });
    }
    expect(events(s, 'NodeNotReady').map((e) => e.message)).toEqual(['Node n1 status is now: NodeNotReady']);
    expect(events(s, 'NodeNotReady')[0]).toMatchObject({
      type: 'Normal',
      source: { component: 'node-controller' },
      involvedObject: { kind: 'Node', name: 'n1' },
      metadata: { namespace: 'default' },
    });
  });

  test('a Ready lastHeartbeatTime posted alone (no Lease) keeps a Node healthy', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const s = await startWith(clock);
    createNode(s, 'n1', clock);
    await seconds(clock, 10, () => postStatus(s, 'n1', clock));
    expect(condition(s, 'n1', 'Ready').status).toBe('True');
    // Last heartbeat T0+9s, seen by the pass at T0+10s: Unknown at the pass at T0+13s.
    await seconds(clock, 2);
    expect(condition(s, 'n1', 'Ready').status).toBe('True');
    await seconds(clock, 1);
    expect(condition(s, 'n1', 'Ready')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      lastHeartbeatTime: iso(T0 + 9000),
      lastTransitionTime: iso(T0 + 13_000),
    });
  });

  test('the stored heartbeat time is not what counts: the first sighting starts the grace period', async () => {
    const clock = new FakeClock({ startMs: T0 + 3_600_000 });
    const s = await startWith(clock);
    // A Node whose heartbeat is an hour old when the controller first sees it (a restart of
    // kube-controller-manager) gets the whole grace period.
    const old = new FakeClock({ startMs: T0 });
    createNode(s, 'n1', old);
    await seconds(clock, 3); // seen at +1s; +3s is not after +1s + 2s
    expect(condition(s, 'n1', 'Ready').status).toBe('True');
    await seconds(clock, 1);
    expect(condition(s, 'n1', 'Ready').status).toBe('Unknown');
  });

  test('a Node that never posted status gets the startup grace period, then "never posted" conditions', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const s = await startWith(clock);
    createNode(s, 'fresh', clock, false);
    // Probe time is the creation time (T0): not Unknown at T0+6s, Unknown at the pass after.
    await seconds(clock, 6);
    expect((s.store.get('nodes', undefined, 'fresh').status as any).conditions ?? []).toEqual([]);
    await seconds(clock, 1);
    for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      expect(condition(s, 'fresh', type)).toEqual({
        type,
        status: 'Unknown',
        reason: 'NodeStatusNeverUpdated',
        message: 'Kubelet never posted node status.',
        lastHeartbeatTime: s.store.get('nodes', undefined, 'fresh').metadata?.creationTimestamp,
        lastTransitionTime: iso(T0 + 7000),
      });
    }
    await settle(s);
    expect(taints(s, 'fresh')).toEqual(['node.kubernetes.io/unreachable:NoSchedule']);
  });

  test('a Node that never posted status but renews its Lease is left alone', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const s = await startWith(clock);
    createNode(s, 'leased', clock, false);
    await seconds(clock, 12, () => renewLease(s, 'leased', clock));
    expect((s.store.get('nodes', undefined, 'leased').status as any).conditions ?? []).toEqual([]);
  });
});

describe('node lifecycle controller: taints, pods, recovery', () => {
  async function threeNodes(clock: FakeClock): Promise<MiniApiServer> {
    const s = await startWith(clock);
    for (const n of ['a', 'b', 'c']) {
      createNode(s, n, clock);
      renewLease(s, n, clock);
    }
    s.store.create('pods', {
      metadata: { name: 'web-a', namespace: 'default' },
      spec: { nodeName: 'a', containers: [{ name: 'app', image: 'nginx' }] },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: iso(T0) },
          { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: iso(T0) },
        ],
      },
    });
    return s;
  }

  test('a dead kubelet: unreachable NoSchedule at once, NoExecute a pass later, its pods not Ready; back Ready removes both', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const s = await threeNodes(clock);
    const healthy = (): void => {
      renewLease(s, 'b', clock);
      renewLease(s, 'c', clock);
    };
    await seconds(clock, 2, () => {
      healthy();
      renewLease(s, 'a', clock);
    });
    // 'a' renews last at T0+1s, seen by the pass at T0+2s: Unknown at the pass at T0+5s.
    await seconds(clock, 3, healthy);
    await settle(s);
    expect(condition(s, 'a', 'Ready').status).toBe('Unknown');
    expect(taints(s, 'a')).toEqual(['node.kubernetes.io/unreachable:NoSchedule']);
    const pod = s.store.get('pods', 'default', 'web-a');
    expect((pod.status as any).conditions).toEqual([
      { type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: iso(T0 + 5000) },
      { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: iso(T0) },
    ]);
    expect(events(s, 'NodeNotReady').find((e) => e.involvedObject.kind === 'Pod')).toMatchObject({
      type: 'Warning',
      message: 'Node is not ready',
      metadata: { namespace: 'default' },
      involvedObject: { name: 'web-a' },
    });
    // The next pass sees Unknown as the observed condition and queues the NoExecute taint;
    // the 100 ms tainting pass applies it (one token at 0.1/s per zone).
    await seconds(clock, 1, healthy);
    await clock.advance(200);
    await settle(s);
    expect(taints(s, 'a')).toEqual([
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/unreachable:NoSchedule',
    ]);
    expect(
      ((s.store.get('nodes', undefined, 'a').spec as any).taints as any[]).every((t) => t.timeAdded),
    ).toBe(true);
    expect(taints(s, 'b')).toEqual([]);
    // No taint eviction controller: the pod stays.
    expect(s.store.tryGet('pods', 'default', 'web-a')).toBeDefined();

    // The kubelet comes back and posts Ready=True.
    postStatus(s, 'a', clock);
    await settle(s);
    expect(taints(s, 'a')).toEqual(['node.kubernetes.io/unreachable:NoExecute']); // NoSchedule follows the condition
    await seconds(clock, 1, () => {
      healthy();
      renewLease(s, 'a', clock);
    });
    await settle(s);
    expect(condition(s, 'a', 'Ready').status).toBe('True');
    expect(taints(s, 'a')).toEqual([]);
  });

  test('every Node down (full disruption): Unknown and NoSchedule, but no NoExecute taint', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const s = await startWith(clock);
    createNode(s, 'only', clock);
    await seconds(clock, 10);
    await settle(s);
    expect(condition(s, 'only', 'Ready').status).toBe('Unknown');
    expect(taints(s, 'only')).toEqual(['node.kubernetes.io/unreachable:NoSchedule']);
  });

  test('Ready=False posted by the kubelet: not-ready NoSchedule at once, not-ready NoExecute after a pass', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const s = await threeNodes(clock);
    const beat = (): void => {
      for (const n of ['a', 'b', 'c']) renewLease(s, n, clock);
    };
    await seconds(clock, 1, beat);
    postStatus(s, 'a', clock, 'False');
    await settle(s);
    expect(taints(s, 'a')).toEqual(['node.kubernetes.io/not-ready:NoSchedule']);
    await seconds(clock, 2, beat);
    await clock.advance(200);
    await settle(s);
    expect(taints(s, 'a')).toEqual([
      'node.kubernetes.io/not-ready:NoExecute',
      'node.kubernetes.io/not-ready:NoSchedule',
    ]);
    expect(condition(s, 'a', 'Ready')).toMatchObject({ status: 'False', reason: 'KubeletNotReady' });
  });

  test('a Node deleted while tracked: RemovingNode, the others still handled, a new Node of that name starts afresh', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const s = await threeNodes(clock);
    await seconds(clock, 1, () => {
      for (const n of ['a', 'b', 'c']) renewLease(s, n, clock);
    });
    expect(
      events(s, 'RegisteredNode')
        .map((e) => e.message)
        .sort(),
    ).toEqual([
      'Node a event: Registered Node a in Controller',
      'Node b event: Registered Node b in Controller',
      'Node c event: Registered Node c in Controller',
    ]);
    // a and c renewed last at T0 (seen at T0+1s): Unknown at the pass at T0+4s.
    await seconds(clock, 4, () => renewLease(s, 'b', clock));
    await settle(s);
    expect(condition(s, 'a', 'Ready').status).toBe('Unknown');
    expect(condition(s, 'c', 'Ready').status).toBe('Unknown');
    // At T0+5s both are queued for NoExecute; the zone's limiter (0.1/s, burst 1) lets one
    // through now and the next ten seconds later.
    await seconds(clock, 1, () => renewLease(s, 'b', clock));
    await clock.advance(200);
    expect(taints(s, 'a')).toContain('node.kubernetes.io/unreachable:NoExecute');
    expect(taints(s, 'c')).not.toContain('node.kubernetes.io/unreachable:NoExecute');
    s.store.delete('nodes', undefined, 'a');
    s.store.delete('leases', 'kube-node-lease', 'a');
    await seconds(clock, 2, () => renewLease(s, 'b', clock));
    await settle(s);
    expect(events(s, 'RemovingNode').map((e) => e.message)).toEqual([
      'Node a event: Removing Node a from Controller',
    ]);
    expect(taints(s, 'c')).not.toContain('node.kubernetes.io/unreachable:NoExecute');
    await seconds(clock, 8, () => renewLease(s, 'b', clock)); // T0+16.2s
    expect(taints(s, 'c')).toContain('node.kubernetes.io/unreachable:NoExecute');
    // Registered again without status: the startup grace (6 s) from its creation.
    await clock.advance(800);
    const created = clock.now();
    createNode(s, 'a', clock, false);
    await seconds(clock, 6, () => renewLease(s, 'b', clock));
    expect((s.store.get('nodes', undefined, 'a').status as any).conditions ?? []).toEqual([]);
    await seconds(clock, 1, () => renewLease(s, 'b', clock));
    expect(condition(s, 'a', 'Ready')).toMatchObject({
      reason: 'NodeStatusNeverUpdated',
      lastTransitionTime: iso(created + 7000),
    });
  });
});

describe('node lifecycle controller: bad input', () => {
  test('a Node with malformed conditions and taints does not stop the pass for the others', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const s = await startWith(clock);
    s.store.create('nodes', {
      metadata: { name: 'weird' },
      spec: { taints: 'nope' },
      status: { conditions: 'x' },
    });
    s.store.create('nodes', {
      metadata: { name: 'weird2' },
      spec: { taints: [42, { key: 'k' }] },
      status: { conditions: [null, 'Ready', { type: 'Ready' }] },
    });
    createNode(s, 'good', clock);
    await seconds(clock, 10);
    await settle(s);
    expect(condition(s, 'good', 'Ready')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
    expect(condition(s, 'weird2', 'Ready')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
    expect(taints(s, 'good')).toEqual(['node.kubernetes.io/unreachable:NoSchedule']);
    expect(condition(s, 'weird', 'Ready')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeStatusNeverUpdated',
    });
    expect(taints(s, 'weird')).toEqual(['node.kubernetes.io/unreachable:NoSchedule']);
  });
});

describe('node lifecycle controller: options', () => {
  test.each([
    [{ nodeMonitorGracePeriodMs: -1 }, /nodeMonitorGracePeriodMs must be a finite number >= 0, got -1/],
    [{ nodeMonitorPeriodMs: 0 }, /nodeMonitorPeriodMs must be a finite number >= 1, got 0/],
    [{ nodeStartupGracePeriodMs: Number.NaN }, /nodeStartupGracePeriodMs .* got NaN/],
  ])('%o is refused with InvalidOptionsError', async (opts, message) => {
    const err = await startMiniApiServer({ nodeLifecycleController: true, ...opts }).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidOptionsError);
    expect(err.message).toMatch(message);
    // Refused even with the controller off: the option is wrong either way.
    await expect(startMiniApiServer(opts)).rejects.toBeInstanceOf(InvalidOptionsError);
  });

  test('defaults are the current release: 5 s period, 50 s grace, 60 s startup grace; off unless asked', async () => {
    server = await startMiniApiServer();
    expect(server.nodeLifecycle).toBeUndefined();
    await server.stop();
    server = await startMiniApiServer({ nodeLifecycleController: true });
    expect(server.nodeLifecycle?.settings).toMatchObject({
      nodeMonitorPeriodMs: 5000,
      nodeMonitorGracePeriodMs: 50_000,
      nodeStartupGracePeriodMs: 60_000,
      nodeEvictionRate: 0.1,
    });
  });
});

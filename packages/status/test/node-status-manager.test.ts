// Node registration and the status cadence in fake time: the Node created with labels, taints and
// allocatable; status computed every 10 s, posted only on change or every 5 min; Ready and pressure
// transitions; an existing Node's default labels reconciled; failed posts retried 5 times.
import type { V1Node } from '@kubernetes/client-node';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type MachineInfo, NodeStatusManager, type NodeStatusManagerOptions } from '../src/index.js';
import { ObjectStoreApi } from './support/object-store-api.js';

const MACHINE: MachineInfo = {
  cpus: 4,
  memoryBytes: 8 * 1024 ** 3,
  hugePages: {},
  ephemeralStorageBytes: 50 * 1024 ** 3,
  arch: 'arm64',
  os: 'linux',
  kernelVersion: '6.1.0',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  machineId: 'mid',
  systemUuid: 'suuid',
  bootId: 'bid',
  hostname: 'host-a',
  internalIp: '10.0.0.9',
};
const NODE_PATH = '/api/v1/nodes/n1';

const running: NodeStatusManager[] = [];
function setup(over: Partial<NodeStatusManagerOptions> = {}) {
  const api = new ObjectStoreApi();
  const clock = new FakeClock({ startMs: Date.UTC(2025, 5, 1) });
  const pressure = { memory: false, disk: false, pid: false };
  const readiness = { errors: [] as string[] };
  const m = new NodeStatusManager({
    api,
    clock,
    nodeName: 'n1',
    machine: MACHINE,
    runtimeVersion: () => 'containerd://2.1.4',
    readiness: () => readiness.errors,
    pressure: {
      isUnderMemoryPressure: () => pressure.memory,
      isUnderDiskPressure: () => pressure.disk,
      isUnderPIDPressure: () => pressure.pid,
    },
    ...over,
  });
  running.push(m);
  const node = () => api.objects.get(NODE_PATH) as V1Node;
  const statusPatches = () => api.calls.filter((c) => c.verb === 'patch' && c.path === `${NODE_PATH}/status`);
  return { api, clock, m, pressure, readiness, node, statusPatches };
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.stop()));
});

describe('registration', () => {
  it('creates the Node with the default labels, --node-labels, --register-with-taints, capacity and allocatable', async () => {
    const { api, m, node } = setup({
      nodeLabels: { 'example.com/rack': 'r1' },
      registerWithTaints: [{ key: 'dedicated', value: 'edge', effect: 'NoSchedule' }],
      kubeReserved: { cpu: '500m', memory: '512Mi' },
      nodeIps: ['192.168.5.5'],
      podCidrs: ['10.244.1.0/24'],
    });
    await m.start();
    const created = api.calls.find((c) => c.verb === 'create')?.body as V1Node;
    expect(created.metadata?.labels).toEqual({
      'example.com/rack': 'r1',
      'kubernetes.io/hostname': 'n1',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'arm64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'arm64',
    });
    expect(created.spec).toEqual({
      taints: [{ key: 'dedicated', value: 'edge', effect: 'NoSchedule' }],
      podCIDR: '10.244.1.0/24',
      podCIDRs: ['10.244.1.0/24'],
    });
    const s = node().status;
    expect(s?.capacity).toEqual({ cpu: '4', memory: '8Gi', 'ephemeral-storage': '50Gi', pods: '110' });
    expect(s?.allocatable).toMatchObject({ cpu: '3500m', memory: `${8192 - 512 - 100}Mi`, pods: '110' });
    expect(s?.addresses).toEqual([
      { type: 'InternalIP', address: '192.168.5.5' },
      { type: 'Hostname', address: 'n1' },
    ]);
    expect(s?.nodeInfo).toMatchObject({
      machineID: 'mid',
      systemUUID: 'suuid',
      bootID: 'bid',
      kernelVersion: '6.1.0',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      containerRuntimeVersion: 'containerd://2.1.4',
      kubeletVersion: 'v1.36.0-nodeagent',
      operatingSystem: 'linux',
      architecture: 'arm64',
    });
    expect(s?.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10250 } });
    expect(s?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
      ['Ready', 'True', 'KubeletReady'],
    ]);
    expect(m.nodeUid).toBe('uid-n1');
  });

  it('reconciles the default labels of an existing Node, but not --node-labels', async () => {
    const { api, m, node } = setup({ nodeLabels: { extra: 'x' } });
    api.objects.set(NODE_PATH, {
      metadata: { name: 'n1', uid: 'old', labels: { 'kubernetes.io/arch': 'amd64', keep: 'me' } },
      status: {},
    });
    await m.start();
    expect(node().metadata?.labels).toEqual({
      'kubernetes.io/arch': 'arm64',
      keep: 'me',
      'kubernetes.io/hostname': 'n1',
      'kubernetes.io/os': 'linux',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'arm64',
    });
    expect(m.nodeUid).toBe('old');
  });

  it('registerNode false: never creates the Node, updates the status of the one an administrator made', async () => {
    const { api, m, node } = setup({ registerNode: false, nodeLabels: { extra: 'x' } });
    api.objects.set(NODE_PATH, {
      metadata: { name: 'n1', uid: 'admin-made', labels: { keep: 'me' } },
      status: {},
    });
    await m.start();
    expect(api.calls.filter((c) => c.verb === 'create')).toHaveLength(0);
    // no label reconciliation either: that is part of registration upstream
    expect(node().metadata?.labels).toEqual({ keep: 'me' });
    expect(node().status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(m.nodeUid).toBe('admin-made');
  });

  it('registerNode false and no Node: nothing is created, the status update fails and is retried later', async () => {
    const { api, m } = setup({ registerNode: false });
    await m.start();
    expect(api.calls.filter((c) => c.verb === 'create')).toHaveLength(0);
    expect(api.calls.filter((c) => c.verb === 'get')).toHaveLength(5);
    expect(m.nodeUid).toBeUndefined();
  });

  it('retries registration 200 ms, 400 ms, ... apart while the API fails (upstream registerWithAPIServer)', async () => {
    const { api, clock, m } = setup();
    api.failNext.create = [500, 500, 500];
    const started = m.start();
    await clock.advance(0);
    expect(api.calls.filter((c) => c.verb === 'create')).toHaveLength(1);
    await clock.advance(199);
    expect(api.calls.filter((c) => c.verb === 'create')).toHaveLength(1);
    await clock.advance(1);
    expect(api.calls.filter((c) => c.verb === 'create')).toHaveLength(2);
    await clock.advance(400);
    expect(api.calls.filter((c) => c.verb === 'create')).toHaveLength(3);
    await clock.advance(800);
    await started;
    expect(api.calls.filter((c) => c.verb === 'create')).toHaveLength(4);
  });
});

describe('status cadence', () => {
  it('computes every 10 s but posts an unchanged status only every 5 min', async () => {
    const { clock, m, statusPatches } = setup();
    await m.start();
    expect(statusPatches()).toHaveLength(1);
    await clock.advance(290_000);
    expect(statusPatches()).toHaveLength(1);
    await clock.advance(10_000);
    expect(statusPatches()).toHaveLength(2);
    // The report carries only the new heartbeats.
    const body = statusPatches()[1]?.body as { status: { conditions: Record<string, unknown>[] } };
    expect(Object.keys(body.status).sort()).toEqual(['$setElementOrder/conditions', 'conditions']);
    expect(
      body.status.conditions.every((c) => Object.keys(c).sort().join() === 'lastHeartbeatTime,type'),
    ).toBe(true);
  });

  it('posts at the next tick when a condition flips, moving its lastTransitionTime only then', async () => {
    const { clock, m, pressure, readiness, node, statusPatches } = setup();
    await m.start();
    const t0 = node().status?.conditions?.find((c) => c.type === 'DiskPressure')?.lastTransitionTime;
    pressure.disk = true;
    await clock.advance(10_000);
    expect(statusPatches()).toHaveLength(2);
    const disk = node().status?.conditions?.find((c) => c.type === 'DiskPressure');
    expect(disk).toMatchObject({
      status: 'True',
      reason: 'KubeletHasDiskPressure',
      message: 'kubelet has disk pressure',
    });
    expect(disk?.lastTransitionTime).not.toBe(t0);
    expect(node().status?.conditions?.find((c) => c.type === 'MemoryPressure')?.lastTransitionTime).toBe(t0);
    readiness.errors = ['container runtime is down'];
    await clock.advance(10_000);
    expect(m.ready).toMatchObject({
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'container runtime is down',
    });
    await clock.advance(10_000);
    expect(statusPatches()).toHaveLength(3);
  });

  it('keeps conditions it does not own (NetworkUnavailable set by a CNI)', async () => {
    const { api, clock, m, node } = setup();
    await m.start();
    await api.patch(`${NODE_PATH}/status`, 'strategic', {
      status: { conditions: [{ type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated' }] },
    });
    await clock.advance(300_000);
    expect(node().status?.conditions?.map((c) => c.type)).toContain('NetworkUnavailable');
  });

  it('retries a failed post up to 5 times, reading the Node again, then waits for the next tick', async () => {
    const { api, clock, m, pressure, statusPatches } = setup();
    await m.start();
    pressure.memory = true;
    api.failNext.patch = [500, 500, 500, 500, 500, 500];
    await clock.advance(10_000);
    expect(statusPatches()).toHaveLength(1 + 5);
    expect(api.calls.filter((c) => c.verb === 'get' && c.path === NODE_PATH).length).toBeGreaterThanOrEqual(
      4,
    );
    await clock.advance(10_000);
    expect(statusPatches()).toHaveLength(1 + 6 + 1);
    expect(m.node?.status?.conditions?.find((c) => c.type === 'MemoryPressure')?.status).toBe('True');
  });

  it('reports the 50 largest images, digests before tags, at most 5 names each', async () => {
    const images = Array.from({ length: 60 }, (_, i) => ({
      repoDigests: [`img${i}@sha256:${i}`],
      repoTags: Array.from({ length: 6 }, (_, t) => `img${i}:t${t}`),
      sizeBytes: 1000 + i,
    }));
    const { m, node } = setup({ images: () => images });
    await m.start();
    const reported = node().status?.images ?? [];
    expect(reported).toHaveLength(50);
    expect(reported[0]).toEqual({
      names: ['img59@sha256:59', 'img59:t0', 'img59:t1', 'img59:t2', 'img59:t3'],
      sizeBytes: 1059,
    });
    expect(reported.at(-1)?.sizeBytes).toBe(1010);
  });
});

describe('lost connections', () => {
  it('a post failing with a dropped connection (no HTTP code) is retried and the status lands', async () => {
    const { api, clock, m, pressure, node } = setup();
    await m.start();
    pressure.pid = true;
    const original = api.handler;
    let dropped = 0;
    Object.defineProperty(api, 'handler', {
      value: (call: Parameters<typeof original>[0]) => {
        if (call.verb === 'patch' && dropped++ < 2)
          throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        return original(call);
      },
    });
    await clock.advance(10_000);
    expect(dropped).toBe(3);
    expect(node().status?.conditions?.find((c) => c.type === 'PIDPressure')?.status).toBe('True');
  });
});

describe('images', () => {
  it('keeps the images the Node has when the runtime cannot list them', async () => {
    let fail = false;
    const { clock, m, node, pressure } = setup({
      images: () => {
        if (fail) throw new Error('runtime down');
        return [{ repoDigests: [], repoTags: ['busybox:1'], sizeBytes: 10 }];
      },
    });
    await m.start();
    fail = true;
    pressure.disk = true; // force a post
    await clock.advance(10_000);
    expect(node().status?.conditions?.find((c) => c.type === 'DiskPressure')?.status).toBe('True');
    expect(node().status?.images).toEqual([{ names: ['busybox:1'], sizeBytes: 10 }]);
  });
});

describe('node events', () => {
  it('records the kubelet reasons when a pressure condition appears or a condition flips, not on every tick', async () => {
    const events: string[] = [];
    const { clock, m, pressure, readiness } = setup({
      recordEvent: (type, reason, message) => events.push(`${type} ${reason}: ${message}`),
    });
    await m.start();
    // Pressure conditions start Unknown upstream, so their first value is an event; a new
    // Ready condition is not (only a flip of an existing one is).
    expect(events).toEqual([
      'Normal NodeHasSufficientMemory: Node n1 status is now: NodeHasSufficientMemory',
      'Normal NodeHasNoDiskPressure: Node n1 status is now: NodeHasNoDiskPressure',
      'Normal NodeHasSufficientPID: Node n1 status is now: NodeHasSufficientPID',
    ]);
    await clock.advance(30_000);
    expect(events).toHaveLength(3);
    pressure.memory = true;
    await clock.advance(10_000);
    expect(events.at(-1)).toBe(
      'Normal NodeHasInsufficientMemory: Node n1 status is now: NodeHasInsufficientMemory',
    );
    expect(events).toHaveLength(4);
    readiness.errors = ['PLEG is not healthy: pleg was last seen active 3m0s ago'];
    await clock.advance(10_000);
    expect(events.at(-1)).toBe('Normal NodeNotReady: Node n1 status is now: NodeNotReady');
    readiness.errors = [];
    await clock.advance(10_000);
    expect(events.at(-1)).toBe('Normal NodeReady: Node n1 status is now: NodeReady');
    expect(events).toHaveLength(6);
  });
});

describe('fast status updates at startup', () => {
  it('posts Ready within 100 ms of the runtime becoming ready, not at the next 10 s tick', async () => {
    const { clock, m, readiness, statusPatches } = setup();
    readiness.errors = ['container runtime status check may not have completed yet'];
    await m.start();
    expect(m.ready?.status).toBe('False');
    await clock.advance(1_000);
    expect(statusPatches()).toHaveLength(1); // nothing changed: no post
    readiness.errors = [];
    await clock.advance(100);
    expect(m.ready).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(statusPatches()).toHaveLength(2);
  });

  it('gives up after the 120 s grace period', async () => {
    const { clock, m, readiness, api } = setup();
    readiness.errors = ['container runtime is down'];
    await m.start();
    await clock.advance(120_000);
    const gets = api.calls.length;
    readiness.errors = [];
    await clock.advance(5_000);
    expect(api.calls.length).toBe(gets); // no fast tick any more; the 10 s tick comes at 130 s
    await clock.advance(5_000);
    expect(m.ready?.status).toBe('True');
  });
});

// Against the mini API server over HTTP: statuses land as the kubelet's would (foreign conditions
// kept, container states replaced), an API server answering 500 or 409 loses no status, and the
// Node and its Lease are registered and kept.
import type { V1Lease, V1Node, V1Pod } from '@kubernetes/client-node';
import { startTestApiServer, type TestApiServer } from '@nodeagent/mini-apiserver/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type MachineInfo, NodeLease, NodeStatusManager, PodStatusManager } from '../src/index.js';
import { fetchApi } from './support/fetch-api.js';

let server: TestApiServer;
const stops: (() => Promise<void>)[] = [];
beforeEach(async () => {
  server = await startTestApiServer();
});
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
  await server.stop();
});

async function eventually(check: () => void, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

function createPod(name: string): V1Pod {
  return server.server.store.create('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
  }) as unknown as V1Pod;
}

const stored = (name: string) => server.server.store.tryGet('pods', 'default', name) as unknown as V1Pod;

describe('PodStatusManager against the mini API server', () => {
  it('writes the status, keeps a foreign condition and replaces container states', async () => {
    const pod = createPod('p1');
    server.server.store.update(
      'pods',
      {
        ...server.server.store.get('pods', 'default', 'p1'),
        status: { phase: 'Pending', conditions: [{ type: 'example.com/gate', status: 'True' }] },
      },
      { subresource: 'status' },
    );
    const m = new PodStatusManager({ api: fetchApi(server.url), syncPeriodMs: 100 });
    stops.push(() => m.stop());
    await m.start();
    const cs = (state: object) => [
      { name: 'c', image: 'busybox', imageID: '', ready: false, restartCount: 0, state },
    ];
    m.setPodStatus(pod, {
      phase: 'Pending',
      containerStatuses: cs({ waiting: { reason: 'ContainerCreating' } }),
    });
    await eventually(() => expect(stored('p1').status?.phase).toBe('Pending'));
    m.setPodStatus(pod, {
      phase: 'Running',
      containerStatuses: cs({ running: { startedAt: '2025-01-01T00:00:00Z' } }),
    });
    await eventually(() => expect(stored('p1').status?.phase).toBe('Running'));
    const s = stored('p1').status;
    expect(s?.containerStatuses?.[0]?.state).toEqual({ running: { startedAt: '2025-01-01T00:00:00Z' } });
    expect(s?.conditions?.map((c) => c.type)).toContain('example.com/gate');
  });

  it('loses no status when the API answers 500 and then 409', async () => {
    const pod = createPod('p2');
    const m = new PodStatusManager({ api: fetchApi(server.url), syncPeriodMs: 100 });
    stops.push(() => m.stop());
    await m.start();
    server.server.faults.failNext(1, { code: 500, method: 'PATCH' });
    server.server.faults.failNext(1, { code: 409, method: 'PATCH', reason: 'Conflict' });
    m.setPodStatus(pod, { phase: 'Running', podIP: '10.1.0.7' });
    await eventually(() => {
      expect(stored('p2').status).toMatchObject({ phase: 'Running', podIP: '10.1.0.7' });
      expect(m.patches).toBe(1);
    });
    const patches = server.server.requests.filter(
      (r) => r.method === 'PATCH' && r.path.endsWith('/pods/p2/status'),
    );
    expect(patches).toHaveLength(3); // 500, 409, then the write
  });

  it('does not write to a pod recreated under the same name (UID precondition)', async () => {
    const pod = createPod('p3');
    server.server.store.delete('pods', 'default', 'p3', { gracePeriodSeconds: 0 });
    createPod('p3');
    const m = new PodStatusManager({ api: fetchApi(server.url), syncPeriodMs: 100 });
    stops.push(() => m.stop());
    await m.start();
    m.setPodStatus(pod, { phase: 'Running' });
    await m.syncBatch(true);
    expect(stored('p3').status?.phase).toBeUndefined();
    expect(m.getPodStatus(pod.metadata?.uid ?? '')).toBeUndefined();
  });
});

describe('Node and Lease against the mini API server', () => {
  const machine: MachineInfo = {
    cpus: 2,
    memoryBytes: 4 * 1024 ** 3,
    hugePages: {},
    ephemeralStorageBytes: 20 * 1024 ** 3,
    arch: 'amd64',
    os: 'linux',
    kernelVersion: '6.1.0',
    osImage: 'Debian',
    machineId: 'm',
    systemUuid: 'u',
    bootId: 'b',
    hostname: 'h',
    internalIp: '10.0.0.3',
  };

  it('registers the Node with four conditions and keeps a Lease owned by it', async () => {
    const api = fetchApi(server.url);
    const node = new NodeStatusManager({ api, nodeName: 'n1', machine, statusUpdateFrequencyMs: 50 });
    stops.push(() => node.stop());
    await node.start();
    const lease = new NodeLease({ api, nodeName: 'n1', nodeUid: () => node.nodeUid, renewIntervalMs: 50 });
    stops.push(() => lease.stop());
    await lease.start();
    const n = server.server.store.tryGet('nodes', undefined, 'n1') as unknown as V1Node;
    expect(n.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'MemoryPressure=False',
      'DiskPressure=False',
      'PIDPressure=False',
      'Ready=True',
    ]);
    expect(n.status?.allocatable).toMatchObject({ cpu: '2', memory: `${4096 - 100}Mi`, pods: '110' });
    const first = server.server.store.tryGet('leases', 'kube-node-lease', 'n1') as unknown as V1Lease;
    expect(first.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'Node',
      name: 'n1',
      uid: n.metadata?.uid,
    });
    await eventually(() => {
      const l = server.server.store.tryGet('leases', 'kube-node-lease', 'n1') as unknown as V1Lease;
      expect(l.spec?.renewTime).not.toEqual(first.spec?.renewTime);
    });
    // Unchanged status is not posted again within the report frequency.
    const patches = () =>
      server.server.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/nodes/n1/status'))
        .length;
    const before = patches();
    await new Promise((r) => setTimeout(r, 300));
    expect(patches()).toBe(before);
  });

  it('keeps the Lease and the node status going through 500s and a 409', async () => {
    const api = fetchApi(server.url);
    let memory = false;
    const node = new NodeStatusManager({
      api,
      nodeName: 'n1',
      machine,
      statusUpdateFrequencyMs: 50,
      pressure: {
        isUnderMemoryPressure: () => memory,
        isUnderDiskPressure: () => false,
        isUnderPIDPressure: () => false,
      },
    });
    stops.push(() => node.stop());
    await node.start();
    const lease = new NodeLease({ api, nodeName: 'n1', nodeUid: () => node.nodeUid, renewIntervalMs: 50 });
    stops.push(() => lease.stop());
    await lease.start();
    server.server.faults.failNext(3, { code: 500, method: 'PUT', path: /\/leases\// });
    server.server.faults.failNext(1, { code: 409, method: 'PUT', path: /\/leases\//, reason: 'Conflict' });
    server.server.faults.failNext(3, { code: 500, method: 'PATCH', path: /\/nodes\/n1\/status$/ });
    memory = true;
    const renewals = lease.renewals;
    await eventually(() => {
      const n = server.server.store.tryGet('nodes', undefined, 'n1') as unknown as V1Node;
      expect(n.status?.conditions?.find((c) => c.type === 'MemoryPressure')?.status).toBe('True');
      expect(lease.renewals).toBeGreaterThan(renewals + 1);
    });
    expect(lease.lastError).toBeUndefined();
  });
});

// The node Lease in fake time: created in kube-node-lease with holder and 40 s duration, renewed
// every 10 s (+ up to 4 % jitter), owner reference once the Node's UID is known, conflicts re-read,
// other failures retried up to 5 times, creation retried with backoff.
import type { V1Lease } from '@kubernetes/client-node';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeLease, type NodeLeaseOptions } from '../src/index.js';
import { ObjectStoreApi } from './support/object-store-api.js';

const PATH = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1';
const leases: NodeLease[] = [];

function setup(over: Partial<NodeLeaseOptions> = {}) {
  const api = new ObjectStoreApi();
  const clock = new FakeClock({ startMs: Date.UTC(2025, 0, 1) });
  const lease = new NodeLease({ api, clock, nodeName: 'n1', random: () => 0, ...over });
  leases.push(lease);
  const updates = () => api.calls.filter((c) => c.verb === 'replace').length;
  return { api, clock, lease, updates, stored: () => api.objects.get(PATH) as V1Lease };
}
afterEach(async () => {
  await Promise.all(leases.splice(0).map((l) => l.stop()));
});

describe('NodeLease', () => {
  it('creates the Lease named after the node, holder = node, 40 s, renewTime in MicroTime', async () => {
    const { lease, stored } = setup();
    await lease.start();
    expect(stored()).toMatchObject({
      metadata: { name: 'n1', namespace: 'kube-node-lease' },
      spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2025-01-01T00:00:00.000000Z' },
    });
    expect(lease.renewIntervalMs).toBe(10_000);
  });

  it('renews every 10 s, and later with the jitter (at most 4 %)', async () => {
    const { clock, lease, updates } = setup();
    await lease.start();
    await clock.advance(9_999);
    expect(updates()).toBe(0);
    await clock.advance(1);
    expect(updates()).toBe(1);
    await clock.advance(50_000);
    expect(updates()).toBe(6);
  });

  it('jitters up to 4 % of the interval', async () => {
    const { clock, lease, updates } = setup({ random: () => 0.999 });
    await lease.start();
    await clock.advance(10_000);
    expect(updates()).toBe(0);
    await clock.advance(400);
    expect(updates()).toBe(1);
  });

  it('adds the owner reference to the Node once its UID is known', async () => {
    let uid: string | undefined;
    const { clock, lease, stored } = setup({ nodeUid: () => uid });
    await lease.start();
    expect(stored().metadata?.ownerReferences).toBeUndefined();
    uid = 'node-uid';
    await clock.advance(10_000);
    expect(stored().metadata?.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid' },
    ]);
  });

  it('on a conflict reads the Lease again and updates that one', async () => {
    const { api, clock, lease, updates } = setup();
    await lease.start();
    api.failNext.replace = [409];
    await clock.advance(10_000);
    expect(updates()).toBe(2);
    expect(lease.lastError).toBeUndefined();
    expect(api.calls.filter((c) => c.verb === 'get')).toHaveLength(2);
  });

  it('retries other failures up to 5 times and reports repeated heartbeat failures', async () => {
    let failures = 0;
    const { api, clock, lease, updates } = setup({ onRepeatedHeartbeatFailure: () => failures++ });
    await lease.start();
    api.failNext.replace = [500, 500, 500, 500, 500, 500];
    await clock.advance(10_000);
    // 5 tries on the latest lease, then ensure (GET) + 1 more try that also fails.
    expect(updates()).toBeGreaterThanOrEqual(6);
    expect(failures).toBeGreaterThan(0);
    await clock.advance(10_000);
    expect(lease.lastError).toBeUndefined();
  });

  it('retries the create with backoff 200 ms, 400 ms, ... (cap 7 s) while the API is down', async () => {
    const { api, clock, lease, stored } = setup();
    api.failNext.get = [503, 503, 503];
    const started = lease.start();
    await clock.advance(0);
    expect(api.calls.filter((c) => c.verb === 'get')).toHaveLength(1);
    await clock.advance(200);
    expect(api.calls.filter((c) => c.verb === 'get')).toHaveLength(2);
    await clock.advance(400);
    expect(api.calls.filter((c) => c.verb === 'get')).toHaveLength(3);
    await clock.advance(800);
    await started;
    expect(stored().spec?.holderIdentity).toBe('n1');
  });
});

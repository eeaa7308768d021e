// The fleet harness itself (bench/fleet.bench.ts runs it at 100 × 30): 3 agents × 3 pods against
// one mini-apiserver, with a short lease so a 3 s window sees renewals. Upstream's expectations:
// every pod Running and Ready; each node renews its Lease every leaseDuration/4 with a PUT; no pod
// status write in steady state (the status manager writes only on a change).
import { describe, expect, it } from 'vitest';
import { classify, runFleet } from './fleet-harness.js';
import { FAST_AGENT_TIMINGS } from './helpers.js';

describe('fleet harness', () => {
  it('classifies a node’s requests as the kubelet makes them', () => {
    expect(
      classify({
        method: 'PUT',
        path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1',
        watch: false,
      }),
    ).toBe('leaseWrites');
    expect(classify({ method: 'PATCH', path: '/api/v1/nodes/n1/status', watch: false })).toBe('nodeWrites');
    expect(
      classify({ method: 'PATCH', path: '/api/v1/namespaces/default/pods/p/status', watch: false }),
    ).toBe('podStatusWrites');
    expect(classify({ method: 'POST', path: '/api/v1/namespaces/default/events', watch: false })).toBe(
      'otherWrites',
    );
    expect(classify({ method: 'GET', path: '/api/v1/pods', watch: true })).toBe('watchStarts');
    expect(classify({ method: 'GET', path: '/api/v1/nodes/n1', watch: false })).toBe('reads');
  });

  it('3 agents × 3 pods: all Running and Ready, requests counted per node, no steady-state pod status writes', async () => {
    const r = await runFleet({
      agents: 3,
      podsPerAgent: 3,
      windowMs: 3_000,
      settleMs: 1_500,
      readyTimeoutMs: 30_000,
      agentOptions: { ...FAST_AGENT_TIMINGS, leaseDurationSeconds: 4 },
    });
    expect(r.agentsStarted).toBe(3);
    expect(r.startError).toBeUndefined();
    expect(r.podsReady).toBe(9);
    expect(r.allReadyMs).toBeGreaterThan(0);
    expect([...r.perNode.keys()].sort()).toEqual(['fleet-node-000', 'fleet-node-001', 'fleet-node-002']);
    for (const [node, rates] of r.perNode) {
      // Renew every 1 s (4 s / 4): ~60 per minute; the window is short, allow a wide band.
      expect(rates.leaseWrites, node).toBeGreaterThanOrEqual(30);
      expect(rates.leaseWrites, node).toBeLessThanOrEqual(90);
      expect(rates.podStatusWrites, node).toBe(0);
    }
    expect(r.rssSteady).toBeGreaterThan(0);
  }, 60_000);
});

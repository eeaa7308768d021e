/**
 * KUBE-LOOP-BACK holds this node's endpoints only (upstream's syncProxyRules skips endpoints
 * that are not local; its TestEndpointSliceE2E expects exactly one entry for a slice with one
 * local endpoint), and every hash set is checked against its maxelem: an over-full set is
 * refused with IPSetOverflowError naming it, every other set is still applied.
 */
import { describe, expect, it } from 'vitest';
import {
  diffIpvs,
  IPSetOverflowError,
  type IpvsPlan,
  KUBE_CLUSTER_IP,
  KUBE_LOOP_BACK,
  planIpvs,
  renderIpsetRestore,
  renderResidualIptables,
} from '../src/index.js';
import { FakeIpvsExecutor } from '../src/testing.js';
import { NODE, plan, slice, snapshot, svc, TEST_OPTIONS } from './helpers.js';
import { scaleSnapshot } from './scale-cluster.js';

const setOf = (p: IpvsPlan, name: string) => p.ipsets.find((s) => s.name === name)!;

describe('KUBE-LOOP-BACK', () => {
  // upstream TestEndpointSliceE2E: one local endpoint, two remote ready ones, one not ready.
  const cluster = {
    services: [svc('ns1', 'svc1', { clusterIP: '172.20.1.1', ports: [{ name: 'p80', port: 80 }] })],
    slices: [
      slice(
        'ns1',
        'svc1',
        [{ name: 'p80', port: 80 }],
        [
          { ip: '10.0.1.1', node: NODE },
          { ip: '10.0.1.2', node: 'node2' },
          { ip: '10.0.1.3', node: 'node3' },
          { ip: '10.0.1.4', node: 'node3', ready: false },
        ],
      ),
    ],
  };

  it('holds only the local endpoint; the virtual server has the three ready endpoints (TestEndpointSliceE2E)', () => {
    const p = plan(cluster);
    expect(setOf(p, KUBE_LOOP_BACK).entries).toEqual(['10.0.1.1,tcp:80,10.0.1.1']);
    expect(p.virtualServers.map((v) => v.realServers.map((r) => r.address))).toEqual([
      ['10.0.1.1', '10.0.1.2', '10.0.1.3'],
    ]);
  });

  it('is empty once the slice is gone, and so are the real servers', () => {
    const p = plan({ ...cluster, slices: [] });
    expect(setOf(p, KUBE_LOOP_BACK).entries).toEqual([]);
    expect(p.virtualServers[0]!.realServers).toEqual([]);
    // With the set empty, the hairpin MASQUERADE rule is not written (upstream: non-empty sets only).
    expect(renderResidualIptables(p.iptables)).not.toContain('KUBE-LOOP-BACK');
  });

  it('stays within maxelem at 7,000 services × 10 remote endpoints (the cluster size that overflowed it)', () => {
    const p = planIpvs(scaleSnapshot(7000, { endpoints: 10, local: false }), TEST_OPTIONS);
    expect(setOf(p, KUBE_LOOP_BACK).entries).toEqual([]);
    expect(p.errors).toEqual([]);
  });
});

describe('sets over their maxelem', () => {
  // Three ports on one cluster IP: KUBE-CLUSTER-IP gets 3 entries, KUBE-IPVS-IPS 1 (the
  // endpoint is remote, so KUBE-LOOP-BACK stays empty).
  const cluster = {
    services: [
      svc('ns1', 'multi', {
        clusterIP: '172.30.0.41',
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 81 },
          { name: 'c', port: 82 },
        ],
      }),
    ],
    slices: [
      slice(
        'ns1',
        'multi',
        [
          { name: 'a', port: 8080 },
          { name: 'b', port: 8081 },
          { name: 'c', port: 8082 },
        ],
        [{ ip: '10.180.0.1', node: 'node-b' }],
      ),
    ],
  };
  const limited = plan(cluster, { ...TEST_OPTIONS, ipsetMaxElem: 2 });

  it('are refused with IPSetOverflowError naming the set, its size and its limit', () => {
    expect(limited.errors).toEqual([expect.any(IPSetOverflowError)]);
    const e = limited.errors[0] as IPSetOverflowError;
    expect([e.set, e.entries, e.maxElem]).toEqual([KUBE_CLUSTER_IP, 3, 2]);
    expect(e.message).toBe(
      'ipset KUBE-CLUSTER-IP would hold 3 entries, more than its maxelem 2: its entries are left unchanged this sync',
    );
    expect(setOf(limited, KUBE_CLUSTER_IP)).toMatchObject({ entries: [], entriesRefused: true, maxElem: 2 });
  });

  it('names the IPv6 set by its IPv6 name', () => {
    const v6 = {
      services: [
        svc('ns1', 'multi', {
          clusterIP: 'fd00::41',
          ipFamilies: ['IPv6'],
          ports: [
            { name: 'a', port: 80 },
            { name: 'b', port: 81 },
            { name: 'c', port: 82 },
          ],
        }),
      ],
      slices: [],
    };
    const p = plan(v6, { ipsetMaxElem: 2 }, 6);
    expect(p.errors.map((e) => (e as IPSetOverflowError).set)).toEqual(['KUBE-6-CLUSTER-IP']);
  });

  it('leave every other set, the virtual servers and the residual rules planned as usual', () => {
    const full = plan(cluster, TEST_OPTIONS);
    for (const s of limited.ipsets) {
      if (s.name !== KUBE_CLUSTER_IP) expect({ ...s, maxElem: 65536 }).toEqual(setOf(full, s.name));
    }
    expect(limited.virtualServers).toEqual(full.virtualServers);
    // The rules are those of the wanted contents, so they match what the kernel's set holds.
    expect(renderResidualIptables(limited.iptables)).toBe(renderResidualIptables(full.iptables));
  });

  it('render as a create line only (no flush, no adds), so ipset restore cannot hit "Hash is full"', () => {
    for (const flush of [false, true]) {
      const text = renderIpsetRestore(limited.ipsets, { flush });
      expect(text.split('\n').filter((l) => l.includes(' KUBE-CLUSTER-IP '))).toEqual([
        'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 2 -exist',
      ]);
      expect(text).toContain('add KUBE-IPVS-IPS 172.30.0.41 -exist');
    }
  });

  it('are created if missing and otherwise keep the kernel’s entries; the other sets converge', async () => {
    const kernel = new FakeIpvsExecutor();
    await kernel.apply(diffIpvs(await kernel.read(), limited).operations);
    expect(kernel.state().ipsets.find((s) => s.name === KUBE_CLUSTER_IP)?.entries).toEqual([]);
    // What an earlier sync wrote stays: nothing is deleted from a refused set.
    await kernel.apply([{ kind: 'ipset-add', set: KUBE_CLUSTER_IP, entry: '172.30.0.41,tcp:80' }]);
    const ops = diffIpvs(await kernel.read(), limited).operations;
    expect(ops.filter((o) => 'set' in o && o.set === KUBE_CLUSTER_IP)).toEqual([]);
    expect(ops).toEqual([]);
    expect(kernel.state().ipsets.find((s) => s.name === 'KUBE-IPVS-IPS')?.entries).toEqual(['172.30.0.41']);
    expect(kernel.state().virtualServers).toHaveLength(3);
  });

  it('local endpoints past the limit (7,000 services × 10 on this node) refuse KUBE-LOOP-BACK only', () => {
    const p = planIpvs(scaleSnapshot(7000, { endpoints: 10, local: true }), TEST_OPTIONS);
    expect(p.errors.map((e) => e.message)).toEqual([
      'ipset KUBE-LOOP-BACK would hold 70000 entries, more than its maxelem 65536: its entries are left unchanged this sync',
    ]);
    expect(setOf(p, KUBE_CLUSTER_IP).entries).toHaveLength(7000);
    expect(p.virtualServers).toHaveLength(14_000); // 7,000 cluster IPs + 7,000 node ports
  });
});

describe('scale: 10,000 services × 10 remote endpoints', () => {
  it('plans every set within its limit, with no error', () => {
    const p = planIpvs(scaleSnapshot(10_000, { endpoints: 10, local: false }), TEST_OPTIONS);
    expect(p.errors).toEqual([]);
    for (const s of p.ipsets) {
      expect(s.entriesRefused ?? false).toBe(false);
      if (s.type !== 'bitmap:port') expect(s.entries.length).toBeLessThanOrEqual(s.maxElem);
    }
    expect(setOf(p, KUBE_CLUSTER_IP).entries).toHaveLength(10_000);
    expect(setOf(p, KUBE_LOOP_BACK).entries).toEqual([]);
    expect(p.virtualServers).toHaveLength(20_000);
    expect(p.virtualServers.every((v) => v.realServers.length === 10)).toBe(true);
  });
});

it('the snapshot helper sees endpoints as remote unless placed on this node', () => {
  const s = snapshot({
    services: [svc('ns1', 's', { clusterIP: '172.30.0.1', ports: [{ name: 'p', port: 80 }] })],
    slices: [slice('ns1', 's', [{ name: 'p', port: 80 }], [{ ip: '10.0.0.1' }])],
  });
  expect(s.endpoints.get('ns1/s:p')?.map((e) => e.isLocal)).toEqual([false]);
});

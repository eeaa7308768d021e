/**
 * kube-proxy's `NodePortAddresses` (`pkg/proxy/util/nodeport_addresses.go`) and its
 * `NodeManager` wait (`pkg/proxy/node.go`). The tables restate the cases of upstream's
 * `TestGetNodeAddresses` and `TestContainsIPv4Loopback` (interfaces and expected addresses as
 * upstream's tests give them); the wait's reasons are `newNodeManager`'s error texts.
 */
import type { V1Node } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  NodeWaitTimeoutError,
  newNodePortAddresses,
  nodePortAddressIPs,
  podCIDRsChanged,
  waitForNodePodCIDRs,
} from '../src/node-manager.js';

interface Expectation {
  readonly matchAll: boolean;
  readonly ips: readonly string[];
}

const cases: {
  name: string;
  cidrs: string[];
  addrs: string[];
  v4: Expectation;
  v6: Expectation;
}[] = [
  {
    name: 'IPv4 single',
    cidrs: ['10.20.30.0/24'],
    addrs: ['10.20.30.51', '100.200.201.1'],
    v4: { matchAll: false, ips: ['10.20.30.51'] },
    v6: { matchAll: true, ips: [] },
  },
  {
    name: 'IPv4 zero CIDR',
    cidrs: ['0.0.0.0/0'],
    addrs: ['10.20.30.51', '127.0.0.1'],
    v4: { matchAll: true, ips: ['10.20.30.51', '127.0.0.1'] },
    v6: { matchAll: true, ips: [] },
  },
  {
    name: 'IPv6 multiple',
    cidrs: ['2001:db8::/64', '::1/128'],
    addrs: ['2001:db8::1', '::1'],
    v4: { matchAll: true, ips: [] },
    v6: { matchAll: false, ips: ['2001:db8::1', '::1'] },
  },
  {
    name: 'IPv6 zero CIDR',
    cidrs: ['::/0'],
    addrs: ['2001:db8::1', '::1'],
    v4: { matchAll: true, ips: [] },
    v6: { matchAll: true, ips: ['2001:db8::1', '::1'] },
  },
  {
    name: 'IPv4 localhost exact',
    cidrs: ['127.0.0.1/32'],
    addrs: ['10.20.30.51', '127.0.0.1'],
    v4: { matchAll: false, ips: ['127.0.0.1'] },
    v6: { matchAll: true, ips: [] },
  },
  {
    name: 'IPv4 localhost subnet',
    cidrs: ['127.0.0.0/8'],
    addrs: ['127.0.1.1'],
    v4: { matchAll: false, ips: ['127.0.1.1'] },
    v6: { matchAll: true, ips: [] },
  },
  {
    name: 'IPv4 multiple',
    cidrs: ['10.20.30.0/24', '100.200.201.0/24'],
    addrs: ['10.20.30.51', '100.200.201.1'],
    v4: { matchAll: false, ips: ['10.20.30.51', '100.200.201.1'] },
    v6: { matchAll: true, ips: [] },
  },
  {
    name: 'IPv4 multiple, no match',
    cidrs: ['10.20.30.0/24', '100.200.201.0/24'],
    addrs: ['192.168.1.2', '127.0.0.1'],
    v4: { matchAll: false, ips: [] },
    v6: { matchAll: true, ips: [] },
  },
  {
    name: 'empty list, IPv4 addrs',
    cidrs: [],
    addrs: ['192.168.1.2', '127.0.0.1'],
    v4: { matchAll: true, ips: ['192.168.1.2', '127.0.0.1'] },
    v6: { matchAll: true, ips: [] },
  },
  {
    name: 'empty list, IPv6 addrs',
    cidrs: [],
    addrs: ['2001:db8::1', '::1'],
    v4: { matchAll: true, ips: [] },
    v6: { matchAll: true, ips: ['2001:db8::1', '::1'] },
  },
  {
    name: 'IPv4 redundant CIDRs',
    cidrs: ['1.2.3.0/24', '0.0.0.0/0'],
    addrs: ['1.2.3.4'],
    v4: { matchAll: true, ips: ['1.2.3.4'] },
    v6: { matchAll: true, ips: [] },
  },
  {
    name: 'Dual-stack, redundant IPv4',
    cidrs: ['0.0.0.0/0', '1.2.3.0/24', '2001:db8::1/128'],
    addrs: ['1.2.3.4', '2001:db8::1', '127.0.0.1', '::1'],
    v4: { matchAll: true, ips: ['1.2.3.4', '127.0.0.1'] },
    v6: { matchAll: false, ips: ['2001:db8::1'] },
  },
  {
    name: 'Dual-stack, redundant IPv6',
    cidrs: ['::/0', '1.2.3.0/24', '2001:db8::1/128'],
    addrs: ['1.2.3.4', '2001:db8::1', '127.0.0.1', '::1'],
    v4: { matchAll: false, ips: ['1.2.3.4'] },
    v6: { matchAll: true, ips: ['2001:db8::1', '::1'] },
  },
];

describe('newNodePortAddresses + nodePortAddressIPs (kube-proxy TestGetNodeAddresses)', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      for (const [family, want] of [
        [4, tc.v4],
        [6, tc.v6],
      ] as const) {
        const npa = newNodePortAddresses(family, tc.cidrs);
        expect(npa.matchAll, `MatchAll(IPv${family})`).toBe(want.matchAll);
        expect(new Set(nodePortAddressIPs(npa, tc.addrs)), `IPv${family}`).toEqual(new Set(want.ips));
      }
    });
  }

  it('a family with no CIDR of its own is the zero CIDR even when the other family has CIDRs', () => {
    expect(newNodePortAddresses(6, ['10.0.0.0/8']).cidrs).toEqual(['::/0']);
    expect(newNodePortAddresses(4, ['fd00::/64']).cidrs).toEqual(['0.0.0.0/0']);
  });
});

describe('ContainsIPv4Loopback (kube-proxy TestContainsIPv4Loopback)', () => {
  const tests: [string, string[], boolean][] = [
    ['empty', [], true],
    ['all zeros ipv4', ['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '0.0.0.0/0'], true],
    ['all zeros ipv6', ['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '::/0'], false],
    ['ipv4 loopback', ['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '127.0.0.0/8'], true],
    ['ipv6 loopback', ['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '::1/128'], false],
    [
      'ipv4 loopback smaller range',
      ['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '127.0.2.0/28'],
      true,
    ],
    [
      'ipv4 loopback within larger range',
      ['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '64.0.0.0/2'],
      true,
    ],
    ['non loop loopback', ['128.0.2.0/28', '224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64'], false],
  ];
  for (const [name, cidrs, want] of tests) {
    it(name, () => {
      expect(newNodePortAddresses(4, cidrs).containsIPv4Loopback).toBe(want);
      expect(newNodePortAddresses(6, cidrs).containsIPv4Loopback).toBe(false);
    });
  }
});

function node(opts: { ip?: string; podCIDRs?: string[] }): V1Node {
  return {
    metadata: { name: 'n1' },
    spec: opts.podCIDRs ? { podCIDRs: opts.podCIDRs } : {},
    status: { addresses: opts.ip ? [{ type: 'InternalIP', address: opts.ip }] : [] },
  };
}

describe('waitForNodePodCIDRs (kube-proxy newNodeManager)', () => {
  it('returns once the Node has a host IP and PodCIDRs, polling meanwhile', async () => {
    const start = Date.now();
    let polls = 0;
    const got = await waitForNodePodCIDRs({
      nodeName: 'n1',
      getNode: () => {
        polls++;
        if (Date.now() - start < 60) return undefined;
        if (Date.now() - start < 120) return node({ ip: '10.0.0.2' });
        return node({ ip: '10.0.0.2', podCIDRs: ['10.244.1.0/24'] });
      },
      pollIntervalMs: 10,
      timeoutMs: 5_000,
    });
    expect(got.spec?.podCIDRs).toEqual(['10.244.1.0/24']);
    expect(Date.now() - start).toBeGreaterThanOrEqual(120);
    expect(polls).toBeGreaterThan(2);
  });

  it('without waitForPodCIDRs a Node with a host IP is enough', async () => {
    const got = await waitForNodePodCIDRs({
      nodeName: 'n1',
      getNode: () => node({ ip: '10.0.0.2' }),
      waitForPodCIDRs: false,
    });
    expect(got.status?.addresses?.[0]?.address).toBe('10.0.0.2');
  });

  it('times out with the last reason, as kube-proxy returns it', async () => {
    const wait = (n: V1Node | undefined) =>
      waitForNodePodCIDRs({ nodeName: 'n1', getNode: () => n, pollIntervalMs: 10, timeoutMs: 50 });
    await expect(wait(node({ ip: '10.0.0.2' }))).rejects.toThrow(
      new NodeWaitTimeoutError('n1', 'node "n1" does not have any PodCIDR allocated'),
    );
    await expect(wait(undefined)).rejects.toThrow('node "n1" not found');
    await expect(wait(node({}))).rejects.toThrow('host IP unknown; known addresses: []');
    await expect(wait(undefined)).rejects.toBeInstanceOf(NodeWaitTimeoutError);
  });

  it('a read that fails is retried like a missing Node', async () => {
    let n = 0;
    const got = await waitForNodePodCIDRs({
      nodeName: 'n1',
      getNode: async () => {
        if (n++ < 2) throw new Error('connection refused');
        return node({ ip: '10.0.0.2', podCIDRs: ['fd00:10::/64'] });
      },
      pollIntervalMs: 5,
    });
    expect(got.spec?.podCIDRs).toEqual(['fd00:10::/64']);
  });

  it('is cancelled by its signal (shutdown during the wait)', async () => {
    const ac = new AbortController();
    const wait = waitForNodePodCIDRs({
      nodeName: 'n1',
      getNode: () => node({ ip: '10.0.0.2' }),
      pollIntervalMs: 1_000,
      signal: ac.signal,
    });
    setTimeout(() => ac.abort(new Error('shutting down')), 30);
    const t0 = Date.now();
    await expect(wait).rejects.toThrow('shutting down');
    expect(Date.now() - t0).toBeLessThan(900);
  });
});

describe('podCIDRsChanged', () => {
  it('compares as reflect.DeepEqual on the lists', () => {
    expect(podCIDRsChanged(['10.0.0.0/24'], ['10.0.0.0/24'])).toBe(false);
    expect(podCIDRsChanged(['10.0.0.0/24'], ['10.0.1.0/24'])).toBe(true);
    expect(podCIDRsChanged(['10.0.0.0/24'], ['10.0.0.0/24', 'fd00::/64'])).toBe(true);
    expect(podCIDRsChanged([], [])).toBe(false);
  });
});

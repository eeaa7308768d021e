import { ProxyState } from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import { conntrackArgs, SpawnConntrackCleaner, staleConntrackFilters } from '../src/index.js';

const udpService = (name: string, clusterIP: string, extra: Record<string, unknown> = {}) => ({
  metadata: { namespace: 'ns', name },
  spec: { clusterIP, ports: [{ name: 'dns', port: 53, protocol: 'UDP' }], ...extra },
});
const slice = (svc: string, eps: { ip: string; ready?: boolean }[], protocol = 'UDP') => ({
  metadata: { namespace: 'ns', name: `${svc}-1`, labels: { 'kubernetes.io/service-name': svc } },
  addressType: 'IPv4',
  ports: [{ name: 'dns', port: 5353, protocol }],
  endpoints: eps.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready ?? true } })),
});

function steps() {
  const state = new ProxyState({ nodeName: 'me', nodeIPs: ['192.168.0.2'] });
  let prev = state.checkout().v4;
  return {
    state,
    next() {
      const snap = state.checkout().v4;
      const filters = staleConntrackFilters(prev, snap);
      prev = snap;
      return filters;
    },
  };
}

describe('staleConntrackFilters (kube-proxy detectStaleConntrackEntries)', () => {
  it('a UDP service going from no ready endpoint to one clears its service IPs and node port', () => {
    const s = steps();
    s.state.onServiceAdd(
      udpService('dns', '172.30.0.10', {
        type: 'LoadBalancer',
        externalIPs: ['203.0.113.7'],
        ports: [{ name: 'dns', port: 53, protocol: 'UDP', nodePort: 30053 }],
      }),
    );
    s.state.onEndpointSliceAdd(slice('dns', [{ ip: '10.1.0.1', ready: false }]));
    expect(s.next()).toEqual([]); // still no ready endpoint
    s.state.onEndpointSliceUpdate(undefined, slice('dns', [{ ip: '10.1.0.1' }]));
    expect(s.next()).toEqual([
      { kind: 'ip', family: 4, ip: '172.30.0.10' },
      { kind: 'ip', family: 4, ip: '203.0.113.7' },
      { kind: 'port', family: 4, port: 30053 },
    ]);
  });

  it('a removed (or no longer ready) UDP endpoint clears the flows DNATed to it', () => {
    const s = steps();
    s.state.onServiceAdd(udpService('dns', '172.30.0.10'));
    s.state.onEndpointSliceAdd(slice('dns', [{ ip: '10.1.0.1' }, { ip: '10.1.0.2' }, { ip: '10.1.0.3' }]));
    s.next();
    s.state.onEndpointSliceUpdate(
      undefined,
      slice('dns', [{ ip: '10.1.0.1' }, { ip: '10.1.0.3', ready: false }]),
    );
    expect(s.next()).toEqual([
      { kind: 'nat', family: 4, origDst: '172.30.0.10', dstNat: '10.1.0.2' },
      { kind: 'nat', family: 4, origDst: '172.30.0.10', dstNat: '10.1.0.3' },
    ]);
  });

  it('a deleted UDP service clears its cluster IP; TCP services never produce filters', () => {
    const s = steps();
    s.state.onServiceAdd(udpService('dns', '172.30.0.10'));
    s.state.onServiceAdd({
      metadata: { namespace: 'ns', name: 'web' },
      spec: { clusterIP: '172.30.0.11', ports: [{ name: 'dns', port: 80, protocol: 'TCP' }] },
    });
    s.state.onEndpointSliceAdd(slice('web', [{ ip: '10.1.0.9' }], 'TCP'));
    s.next();
    s.state.onEndpointSliceUpdate(undefined, slice('web', [], 'TCP'));
    s.state.onServiceDelete(udpService('dns', '172.30.0.10'));
    expect(s.next()).toEqual([{ kind: 'ip', family: 4, ip: '172.30.0.10' }]);
  });

  it('changes that cancel out (A→B→A) produce nothing', () => {
    const s = steps();
    s.state.onServiceAdd(udpService('dns', '172.30.0.10'));
    s.state.onEndpointSliceAdd(slice('dns', [{ ip: '10.1.0.1' }]));
    s.next();
    s.state.onEndpointSliceUpdate(undefined, slice('dns', []));
    s.state.onEndpointSliceUpdate(undefined, slice('dns', [{ ip: '10.1.0.1' }]));
    expect(s.next()).toEqual([]);
  });

  it('builds kube-proxy conntrack argv (IPv6 gets -f ipv6) and runs it without a shell, optionally in a netns', () => {
    expect(conntrackArgs({ kind: 'ip', family: 4, ip: '172.30.0.10' })).toEqual([
      '-D',
      '--orig-dst',
      '172.30.0.10',
      '-p',
      'udp',
    ]);
    expect(conntrackArgs({ kind: 'port', family: 6, port: 30053 })).toEqual([
      '-D',
      '-p',
      'udp',
      '--dport',
      '30053',
      '-f',
      'ipv6',
    ]);
    expect(conntrackArgs({ kind: 'nat', family: 4, origDst: '172.30.0.10', dstNat: '10.1.0.2' })).toEqual([
      '-D',
      '--orig-dst',
      '172.30.0.10',
      '--dst-nat',
      '10.1.0.2',
      '-p',
      'udp',
    ]);
    expect(conntrackArgs({ kind: 'port-nat', family: 4, port: 30053, dstNat: '10.1.0.2' })).toEqual([
      '-D',
      '-p',
      'udp',
      '--dport',
      '30053',
      '--dst-nat',
      '10.1.0.2',
    ]);
    expect(new SpawnConntrackCleaner({ netns: 'n1' }).argv({ kind: 'ip', family: 4, ip: '1.2.3.4' })).toEqual(
      ['nsenter', '--net=/run/netns/n1', '--', 'conntrack', '-D', '--orig-dst', '1.2.3.4', '-p', 'udp'],
    );
    expect(() => new SpawnConntrackCleaner({ netns: 'a b' })).toThrow(TypeError);
  });
});

import { describe, expect, it } from 'vitest';
import { testCluster, testEndpointSlice, testService } from '../src/testing.js';

describe('@nodeagent/proxy-state/testing builders', () => {
  it('builds the snapshots of the documented example', () => {
    const { v4, errors } = testCluster(
      {
        services: [
          testService('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }),
        ],
        slices: [
          testEndpointSlice(
            'ns1',
            'svc1',
            [{ name: 'p80', port: 80 }],
            [{ ip: '10.180.0.1', node: 'node-a' }],
          ),
        ],
      },
      { nodeName: 'node-a', nodeIPs: ['192.168.0.2'] },
    );
    expect(errors).toEqual([]);
    expect(v4.categorize('ns1/svc1:p80').clusterEndpoints.map((e) => e.endpoint)).toEqual(['10.180.0.1:80']);
  });

  it('writes only the fields it is given', () => {
    expect(testService('ns', 'a', { ports: [] })).toEqual({
      metadata: { namespace: 'ns', name: 'a' },
      spec: { ports: [] },
    });
    expect(
      testEndpointSlice(
        'ns',
        'a',
        [{ port: 53, protocol: 'UDP' }],
        [{ ip: 'fd00::1', ready: false }],
        'a-x',
        'IPv6',
      ),
    ).toEqual({
      metadata: { namespace: 'ns', name: 'a-x', labels: { 'kubernetes.io/service-name': 'a' } },
      addressType: 'IPv6',
      ports: [{ port: 53, protocol: 'UDP' }],
      endpoints: [{ addresses: ['fd00::1'], conditions: { ready: false } }],
    });
  });

  it('writes zone, topology hints and the node labels', () => {
    const s = testEndpointSlice(
      'ns',
      'a',
      [{ name: 'p', port: 80 }],
      [
        {
          ip: '10.0.0.1',
          node: 'n1',
          zone: 'z1',
          serving: true,
          terminating: true,
          forZones: ['z1'],
          forNodes: ['n1'],
        },
      ],
    );
    expect(s.endpoints[0]).toEqual({
      addresses: ['10.0.0.1'],
      nodeName: 'n1',
      zone: 'z1',
      conditions: { serving: true, terminating: true },
      hints: { forZones: [{ name: 'z1' }], forNodes: [{ name: 'n1' }] },
    });
    const { v4 } = testCluster(
      {
        services: [testService('ns', 'a', { clusterIP: '172.30.0.1', ports: [{ name: 'p', port: 80 }] })],
        slices: [s],
        nodeLabels: { 'topology.kubernetes.io/zone': 'z1' },
      },
      { nodeName: 'n1', nodeIPs: ['192.168.0.2'] },
    );
    expect(v4.node.zone).toBe('z1');
  });
});

import { describe, expect, it } from 'vitest';
import { ProxyState } from '../src/index.js';

describe('README example', () => {
  it('prints the changed service and its endpoint', () => {
    const warnings: string[] = [];
    const state = new ProxyState({
      nodeName: 'node-a',
      nodeIPs: ['192.168.0.2'],
      onError: (e) => warnings.push(e.message),
    });
    state.onServiceAdd({
      metadata: { namespace: 'ns1', name: 'svc1' },
      spec: { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] },
    });
    state.onEndpointSliceAdd({
      metadata: { namespace: 'ns1', name: 'svc1-abc', labels: { 'kubernetes.io/service-name': 'svc1' } },
      addressType: 'IPv4',
      ports: [{ name: 'p80', port: 80 }],
      endpoints: [{ addresses: ['10.180.0.1'] }],
    });
    const { v4 } = state.checkout();
    expect([...v4.changedServices]).toEqual(['ns1/svc1']);
    expect(v4.categorize('ns1/svc1:p80').clusterEndpoints.map((e) => e.endpoint)).toEqual(['10.180.0.1:80']);
    expect(warnings).toEqual([]);
  });
});

import { buildProxySnapshots } from '@nodeagent/proxy-state';
import { expect, it } from 'vitest';
import { renderIptables, tracePacket } from '../src/index.js';

it('the README example works as written', () => {
  const services = [
    {
      metadata: { namespace: 'ns1', name: 'svc1' },
      spec: { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] },
    },
  ];
  const endpointSlices = [
    {
      metadata: { namespace: 'ns1', name: 'svc1-a', labels: { 'kubernetes.io/service-name': 'svc1' } },
      addressType: 'IPv4',
      ports: [{ name: 'p80', port: 80 }],
      endpoints: [{ addresses: ['10.180.0.1'] }],
    },
  ];
  const { v4 } = buildProxySnapshots({
    nodeName: 'node-a',
    nodeIPs: ['192.168.0.2'],
    services,
    endpointSlices,
  });
  const rules = renderIptables(v4, { localDetector: { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } });
  const r = tracePacket(rules, { sourceIP: '10.0.0.5', destIP: '172.30.0.41', destPort: 80 });
  expect(r.outcome).toBe('endpoints');
  expect(r.endpoints).toEqual(['10.180.0.1:80']);
  expect(r.masquerade).toBe(false);
});

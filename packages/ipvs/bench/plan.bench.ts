/**
 * Planner, renderer and diff cost at 1,000 / 10,000 services × 10 endpoints (IPv4), next to a
 * reference: rendering the same plan as full `ipvsadm-restore` + `ipset restore` text. Prints a
 * table; asserts nothing about speed.
 */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { buildProxySnapshots } from '@nodeagent/proxy-state';
import { bench, describe } from 'vitest';
import { diffIpvs, planIpvs, renderIpsetRestore, renderIpvsadmRestore } from '../src/index.js';

function cluster(n: number, changed = -1): { services: V1Service[]; endpointSlices: V1EndpointSlice[] } {
  const services: V1Service[] = [];
  const endpointSlices: V1EndpointSlice[] = [];
  for (let i = 0; i < n; i++) {
    const ip = `172.${16 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
    services.push({
      metadata: { namespace: 'ns', name: `svc${i}` },
      spec: { type: 'NodePort', clusterIP: ip, ports: [{ name: 'p', port: 80, nodePort: 20000 + i }] },
    });
    endpointSlices.push({
      metadata: { namespace: 'ns', name: `svc${i}-a`, labels: { 'kubernetes.io/service-name': `svc${i}` } },
      addressType: 'IPv4',
      ports: [{ name: 'p', port: i === changed ? 8081 : 8080, protocol: 'TCP' }],
      endpoints: Array.from({ length: 10 }, (_, j) => ({
        addresses: [`10.${(i >> 8) & 255}.${i & 255}.${j + 1}`],
      })),
    });
  }
  return { services, endpointSlices };
}

for (const n of [1000, 10000]) {
  const snap = buildProxySnapshots({ nodeName: 'n', nodeIPs: ['192.168.0.2'], ...cluster(n) }).v4;
  const changed = buildProxySnapshots({ nodeName: 'n', nodeIPs: ['192.168.0.2'], ...cluster(n, 7) }).v4;
  const plan = planIpvs(snap);
  const plan2 = planIpvs(changed);
  describe(`${n} services × 10 endpoints`, () => {
    bench(
      'planIpvs',
      () => {
        planIpvs(snap);
      },
      { iterations: 5, warmupIterations: 1 },
    );
    bench(
      'reference: render full ipvsadm-restore + ipset restore text',
      () => {
        renderIpvsadmRestore(plan);
        renderIpsetRestore(plan.ipsets);
      },
      { iterations: 5, warmupIterations: 1 },
    );
    bench(
      'diffIpvs, one service changed',
      () => {
        diffIpvs(plan, plan2);
      },
      { iterations: 5, warmupIterations: 1 },
    );
  });
}

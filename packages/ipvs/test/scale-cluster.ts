/** A large cluster for the set-limit tests: n NodePort services × k endpoints, remote or local. */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { buildProxySnapshots, type ProxySnapshot } from '@nodeagent/proxy-state';
import { NODE, NODE_IP } from './helpers.js';

/** Options of {@link scaleSnapshot}. */
export interface ScaleOptions {
  /** Endpoints per service. */
  readonly endpoints: number;
  /** Put the endpoints on this node (else on `node-b`). */
  readonly local: boolean;
}

/** The IPv4 snapshot of `n` services (cluster IPs from 172.16.0.0, node ports from 20000). */
export function scaleSnapshot(n: number, o: ScaleOptions): ProxySnapshot {
  const services: V1Service[] = [];
  const endpointSlices: V1EndpointSlice[] = [];
  for (let i = 0; i < n; i++) {
    services.push({
      metadata: { namespace: 'ns', name: `svc${i}` },
      spec: {
        type: 'NodePort',
        clusterIP: `172.${16 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`,
        ports: [{ name: 'p', port: 80, nodePort: 20000 + i }],
      },
    });
    endpointSlices.push({
      metadata: { namespace: 'ns', name: `svc${i}-a`, labels: { 'kubernetes.io/service-name': `svc${i}` } },
      addressType: 'IPv4',
      ports: [{ name: 'p', port: 8080, protocol: 'TCP' }],
      endpoints: Array.from({ length: o.endpoints }, (_, j) => ({
        addresses: [`10.${(i >> 8) & 255}.${i & 255}.${j + 1}`],
        nodeName: o.local ? NODE : 'node-b',
      })),
    });
  }
  const built = buildProxySnapshots({ nodeName: NODE, nodeIPs: [NODE_IP], services, endpointSlices });
  if (built.errors.length > 0) throw new Error(built.errors[0]!.message);
  return built.v4;
}

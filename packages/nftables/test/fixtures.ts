/** Upstream's TestOverallNFTablesRules cluster (kube-proxy nftables proxier_test.go) and its expected service lines. */
import { type Cluster, slice, svc } from './helpers.js';

export const OVERALL: Cluster = {
  services: [
    svc('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] }),
    svc(
      'ns2',
      'svc2',
      {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        clusterIP: '172.30.0.42',
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }],
        externalIPs: ['192.168.99.22'],
        healthCheckNodePort: 30000,
      },
      { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
    ),
    svc('ns3', 'svc3', {
      type: 'NodePort',
      clusterIP: '172.30.0.43',
      ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3003 }],
    }),
    svc('ns4', 'svc4', {
      type: 'NodePort',
      clusterIP: '172.30.0.44',
      externalIPs: ['192.168.99.33'],
      ports: [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 80 }],
    }),
    svc(
      'ns5',
      'svc5',
      {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Cluster',
        clusterIP: '172.30.0.45',
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3002 }],
        healthCheckNodePort: 30000,
        loadBalancerSourceRanges: [' 203.0.113.0/25'],
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
      },
      { loadBalancer: { ingress: [{ ip: '5.6.7.8' }] } },
    ),
    svc('ns6', 'svc6', {
      type: 'ClusterIP',
      clusterIP: '172.30.0.46',
      ports: [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 80 }],
    }),
  ],
  slices: [
    slice('ns1', 'svc1', [{ name: 'p80', port: 80 }], [{ ip: '10.180.0.1' }]),
    slice('ns2', 'svc2', [{ name: 'p80', port: 80 }], [{ ip: '10.180.0.2' }]),
    slice('ns3', 'svc3', [{ name: 'p80', port: 80 }], [{ ip: '10.180.0.3' }]),
    slice(
      'ns4',
      'svc4',
      [{ name: 'p80', port: 80 }],
      [{ ip: '10.180.0.4' }, { ip: '10.180.0.5', node: 'test-node' }],
    ),
    slice('ns5', 'svc5', [{ name: 'p80', port: 80 }], [{ ip: '10.180.0.3' }]),
  ],
};

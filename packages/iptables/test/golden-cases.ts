/** Rendering cases derived from kube-proxy's behaviour, each with a reviewed golden file. */
import type { IptablesRenderOptions } from '../src/index.js';
import { type Cluster, POD_CIDR, slice, svc, TEST_OPTIONS } from './helpers.js';

export interface GoldenCase {
  readonly name: string;
  readonly cluster: Cluster;
  readonly family?: 4 | 6;
  readonly options?: IptablesRenderOptions;
}

const p80 = [{ name: 'p80', port: 80 }];

export const GOLDEN_CASES: readonly GoldenCase[] = [
  {
    name: 'lb-local-affinity-firewall',
    cluster: {
      services: [
        svc(
          'ns3',
          'lb',
          {
            type: 'LoadBalancer',
            clusterIP: '172.30.0.43',
            externalTrafficPolicy: 'Local',
            healthCheckNodePort: 30000,
            sessionAffinity: 'ClientIP',
            sessionAffinityConfig: { clientIP: { timeoutSeconds: 300 } },
            loadBalancerSourceRanges: ['203.0.113.0/25', '192.168.0.0/24'],
            externalIPs: ['192.168.99.11'],
            ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }],
          },
          { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
        ),
        svc('ns4', 'empty', {
          type: 'NodePort',
          clusterIP: '172.30.0.44',
          ports: [{ name: 'p80', port: 80, protocol: 'UDP', nodePort: 3002 }],
        }),
      ],
      slices: [
        slice('ns3', 'lb', p80, [
          { ip: '10.180.0.1', node: 'test-node' },
          { ip: '10.180.1.1', node: 'other' },
        ]),
      ],
    },
  },
  {
    name: 'internal-local-and-no-local-endpoints',
    cluster: {
      services: [
        svc('ns1', 'itp', {
          clusterIP: '172.30.0.41',
          internalTrafficPolicy: 'Local',
          ports: [{ name: 'p80', port: 80 }],
        }),
        svc('ns2', 'itp-remote', {
          clusterIP: '172.30.0.42',
          internalTrafficPolicy: 'Local',
          ports: [{ name: 'p80', port: 80 }],
        }),
        svc('ns3', 'etp-remote', {
          type: 'NodePort',
          clusterIP: '172.30.0.43',
          externalTrafficPolicy: 'Local',
          externalIPs: ['192.168.99.33'],
          ports: [{ name: 'p80', port: 80, nodePort: 3003 }],
        }),
      ],
      slices: [
        slice('ns1', 'itp', p80, [
          { ip: '10.180.0.1', node: 'test-node' },
          { ip: '10.180.2.1', node: 'other' },
        ]),
        slice('ns2', 'itp-remote', p80, [{ ip: '10.180.2.2', node: 'other' }]),
        slice('ns3', 'etp-remote', p80, [{ ip: '10.180.2.3', node: 'other' }]),
      ],
    },
  },
  {
    name: 'terminating-fallback',
    cluster: {
      services: [
        svc('ns1', 'term', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }),
        svc('ns2', 'mixed', { clusterIP: '172.30.0.42', ports: [{ name: 'p80', port: 80 }] }),
        svc('ns3', 'gone', { clusterIP: '172.30.0.43', ports: [{ name: 'p80', port: 80 }] }),
      ],
      slices: [
        // Only serving+terminating endpoints: they are used.
        slice('ns1', 'term', p80, [
          { ip: '10.180.0.1', ready: false, serving: true, terminating: true },
          { ip: '10.180.0.2', ready: false, serving: true, terminating: true },
        ]),
        // A ready endpoint exists: terminating ones are not used.
        slice('ns2', 'mixed', p80, [
          { ip: '10.180.0.3' },
          { ip: '10.180.0.4', ready: false, serving: true, terminating: true },
        ]),
        // Terminating and not serving: no usable endpoint, REJECT.
        slice('ns3', 'gone', p80, [{ ip: '10.180.0.5', ready: false, serving: false, terminating: true }]),
      ],
    },
  },
  {
    name: 'large-cluster-mode',
    options: { ...TEST_OPTIONS, largeClusterEndpointsThreshold: 2 },
    cluster: {
      services: [
        svc('ns1', 'svc1', {
          clusterIP: '172.30.0.41',
          sessionAffinity: 'ClientIP',
          ports: [{ name: 'p80', port: 80 }],
        }),
      ],
      slices: [slice('ns1', 'svc1', p80, [{ ip: '10.180.0.1' }, { ip: '10.180.0.2' }, { ip: '10.180.0.3' }])],
    },
  },
  {
    name: 'ipv6-nodeport',
    family: 6,
    options: { localDetector: { mode: 'ClusterCIDR', cidr: 'fd00:10::/64' } },
    cluster: {
      services: [
        svc('ns1', 'v6', {
          type: 'NodePort',
          ipFamilies: ['IPv6'],
          clusterIP: 'fd00:172:30::41',
          clusterIPs: ['fd00:172:30::41'],
          ports: [{ name: 'p80', port: 80, nodePort: 3001 }],
        }),
      ],
      slices: [slice('ns1', 'v6', p80, [{ ip: 'fd00:10::1' }, { ip: 'fd00:10::2' }], 'v6-1', 'IPv6')],
    },
  },
  {
    name: 'masquerade-all-nodeport-addresses',
    options: {
      masqueradeAll: true,
      localhostNodePorts: false,
      randomFully: true,
      masqueradeBit: 13,
      nodePortIPs: ['192.168.0.2', '127.0.0.1'],
      conntrackTCPLiberal: true,
    },
    cluster: {
      services: [
        svc('ns1', 'np', {
          type: 'NodePort',
          clusterIP: '172.30.0.41',
          ports: [
            { name: 'p80', port: 80, nodePort: 3001 },
            { name: 'p53', port: 53, protocol: 'SCTP', nodePort: 3002 },
          ],
        }),
      ],
      slices: [
        slice(
          'ns1',
          'np',
          [
            { name: 'p80', port: 8080 },
            { name: 'p53', port: 5353, protocol: 'SCTP' },
          ],
          [{ ip: '10.180.0.1' }],
        ),
      ],
    },
  },
];

export { POD_CIDR };

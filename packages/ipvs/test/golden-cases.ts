/** The planner's golden cases: one cluster per service type / traffic policy / affinity rule. */
import type { IpvsPlanOptions } from '../src/index.js';
import { type Cluster, NODE, slice, svc, TEST_OPTIONS } from './helpers.js';

export interface GoldenCase {
  readonly name: string;
  readonly cluster: Cluster;
  readonly options?: IpvsPlanOptions;
  readonly family?: 4 | 6;
}

const p80 = [{ name: 'p80', port: 80 }];
const local = (ip: string) => ({ ip, node: NODE });
const remote = (ip: string) => ({ ip, node: 'other-node' });

export const GOLDEN_CASES: readonly GoldenCase[] = [
  {
    name: 'cluster-ip',
    cluster: {
      services: [svc('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] })],
      slices: [slice('ns1', 'svc1', p80, [local('10.180.0.1'), remote('10.180.0.2')])],
    },
  },
  {
    name: 'session-affinity',
    cluster: {
      services: [
        svc('ns1', 'default-timeout', {
          clusterIP: '172.30.0.41',
          sessionAffinity: 'ClientIP',
          ports: [{ name: 'p80', port: 80 }],
        }),
        svc('ns2', 'short-timeout', {
          type: 'NodePort',
          clusterIP: '172.30.0.42',
          sessionAffinity: 'ClientIP',
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 300 } },
          ports: [{ name: 'p80', port: 80, nodePort: 3002 }],
        }),
      ],
      slices: [
        slice('ns1', 'default-timeout', p80, [remote('10.180.0.1')]),
        slice('ns2', 'short-timeout', p80, [remote('10.180.0.2'), remote('10.180.0.3')]),
      ],
    },
  },
  {
    name: 'node-ports-tcp-udp-sctp',
    cluster: {
      services: [
        svc('ns1', 'multi', {
          type: 'NodePort',
          clusterIP: '172.30.0.41',
          ports: [
            { name: 'tcp', port: 80, nodePort: 3001 },
            { name: 'udp', port: 53, protocol: 'UDP', nodePort: 3002 },
            { name: 'sctp', port: 9999, protocol: 'SCTP', nodePort: 3003 },
          ],
        }),
      ],
      slices: [
        slice(
          'ns1',
          'multi',
          [
            { name: 'tcp', port: 8080 },
            { name: 'udp', port: 5353, protocol: 'UDP' },
            { name: 'sctp', port: 9999, protocol: 'SCTP' },
          ],
          [remote('10.180.0.1')],
        ),
      ],
    },
    options: { ...TEST_OPTIONS, nodePortIPs: ['192.168.0.2', '192.168.1.2'] },
  },
  {
    name: 'external-policy-local',
    cluster: {
      services: [
        svc('ns1', 'has-local', {
          type: 'NodePort',
          clusterIP: '172.30.0.41',
          externalTrafficPolicy: 'Local',
          externalIPs: ['192.168.99.11'],
          ports: [{ name: 'p80', port: 80, nodePort: 3001 }],
        }),
        svc('ns2', 'no-local', {
          type: 'NodePort',
          clusterIP: '172.30.0.42',
          externalTrafficPolicy: 'Local',
          ports: [{ name: 'p80', port: 80, nodePort: 3002 }],
        }),
      ],
      slices: [
        slice('ns1', 'has-local', p80, [local('10.180.0.1'), remote('10.180.0.2')]),
        slice('ns2', 'no-local', p80, [remote('10.180.0.3')]),
      ],
    },
  },
  {
    name: 'load-balancer-source-ranges',
    cluster: {
      services: [
        svc(
          'ns1',
          'lb-node-allowed',
          {
            type: 'LoadBalancer',
            clusterIP: '172.30.0.41',
            loadBalancerSourceRanges: ['203.0.113.0/25', ' 192.168.0.0/24 '],
            ports: [{ name: 'p80', port: 80, nodePort: 3001 }],
          },
          { loadBalancer: { ingress: [{ ip: '1.2.3.4' }, { ip: '5.6.7.8', ipMode: 'Proxy' }] } },
        ),
        svc(
          'ns2',
          'lb-node-blocked',
          {
            type: 'LoadBalancer',
            clusterIP: '172.30.0.42',
            loadBalancerSourceRanges: ['203.0.113.0/25'],
            ports: [{ name: 'p80', port: 80, nodePort: 3002 }],
          },
          { loadBalancer: { ingress: [{ ip: '1.2.3.5' }] } },
        ),
        svc(
          'ns3',
          'lb-local-hc',
          {
            type: 'LoadBalancer',
            clusterIP: '172.30.0.43',
            externalTrafficPolicy: 'Local',
            healthCheckNodePort: 30000,
            ports: [{ name: 'p80', port: 80, nodePort: 3003 }],
          },
          { loadBalancer: { ingress: [{ ip: '1.2.3.6' }] } },
        ),
      ],
      slices: [
        slice('ns1', 'lb-node-allowed', p80, [remote('10.180.0.1')]),
        slice('ns2', 'lb-node-blocked', p80, [remote('10.180.0.2')]),
        slice('ns3', 'lb-local-hc', p80, [local('10.180.0.3'), remote('10.180.0.4')]),
      ],
    },
  },
  {
    name: 'external-ips',
    cluster: {
      services: [
        svc('ns1', 'ext', {
          clusterIP: '172.30.0.41',
          externalIPs: ['192.168.99.11', '192.168.0.2'],
          ports: [{ name: 'p80', port: 80 }],
        }),
      ],
      slices: [slice('ns1', 'ext', p80, [remote('10.180.0.1')])],
    },
  },
  {
    name: 'internal-policy-local',
    cluster: {
      services: [
        svc('ns1', 'itp-local', {
          clusterIP: '172.30.0.41',
          internalTrafficPolicy: 'Local',
          ports: [{ name: 'p80', port: 80 }],
        }),
        svc('ns2', 'itp-remote', {
          clusterIP: '172.30.0.42',
          internalTrafficPolicy: 'Local',
          ports: [{ name: 'p80', port: 80 }],
        }),
        svc('ns3', 'no-endpoints', { clusterIP: '172.30.0.43', ports: [{ name: 'p80', port: 80 }] }),
      ],
      slices: [
        slice('ns1', 'itp-local', p80, [local('10.180.0.1'), remote('10.180.0.2')]),
        slice('ns2', 'itp-remote', p80, [remote('10.180.0.3')]),
      ],
    },
  },
  {
    name: 'terminating-fallback',
    cluster: {
      services: [
        svc('ns1', 'all-terminating', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }),
        svc('ns2', 'mixed', { clusterIP: '172.30.0.42', ports: [{ name: 'p80', port: 80 }] }),
      ],
      slices: [
        slice('ns1', 'all-terminating', p80, [
          { ip: '10.180.0.1', ready: false, serving: true, terminating: true },
          { ip: '10.180.0.2', ready: false, serving: false, terminating: true },
        ]),
        slice('ns2', 'mixed', p80, [
          { ip: '10.180.0.3' },
          { ip: '10.180.0.4', ready: false, serving: true, terminating: true },
        ]),
      ],
    },
  },
  {
    name: 'ipv6',
    family: 6,
    cluster: {
      services: [
        svc(
          'ns1',
          'v6',
          {
            type: 'LoadBalancer',
            ipFamilies: ['IPv6'],
            clusterIP: 'fd00:172:30::41',
            clusterIPs: ['fd00:172:30::41'],
            loadBalancerSourceRanges: ['2001:db8::/64'],
            ports: [
              { name: 'p80', port: 80, nodePort: 3001 },
              { name: 'sctp', port: 9, protocol: 'SCTP', nodePort: 3002 },
            ],
          },
          { loadBalancer: { ingress: [{ ip: '2001:db8:1::4' }] } },
        ),
      ],
      slices: [
        slice(
          'ns1',
          'v6',
          [
            { name: 'p80', port: 80 },
            { name: 'sctp', port: 9, protocol: 'SCTP' },
          ],
          [{ ip: 'fd00:10:180::1', node: NODE }],
          'v6-1',
          'IPv6',
        ),
      ],
    },
    options: { localDetector: { mode: 'ClusterCIDR', cidr: 'fd00:10::/32' } },
  },
  {
    name: 'masquerade-all-mh',
    cluster: {
      services: [
        svc('ns1', 'svc1', {
          clusterIP: '172.30.0.41',
          sessionAffinity: 'ClientIP',
          externalIPs: ['192.168.99.11'],
          ports: [{ name: 'p80', port: 80 }],
        }),
      ],
      slices: [slice('ns1', 'svc1', p80, [remote('10.180.0.1')])],
    },
    options: {
      masqueradeAll: true,
      scheduler: 'mh',
      randomFully: true,
      conntrackTCPLiberal: true,
      masqueradeBit: 10,
    },
  },
  {
    name: 'no-local-detector',
    cluster: {
      services: [svc('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] })],
      slices: [slice('ns1', 'svc1', p80, [remote('10.180.0.1')])],
    },
    options: {},
  },
];

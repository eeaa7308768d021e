/**
 * Packet-flow cases derived from kube-proxy's nftables tests, run through the tracer for
 * BOTH layouts: every traffic-policy and topology rule.
 */
import { describe, it } from 'vitest';
import { runFlows } from './flow-support.js';
import { type Cluster, NODE, NODE_IP, slice, svc } from './helpers.js';

const EXT_CLIENT = '203.0.113.2';
const BLOCKED = '203.0.113.130';

/**
 * The cluster of one service, `ns1/svc1`, with one EndpointSlice (port p80: 80) of
 * `endpoints`, or none when there are none.
 */
function oneService(
  spec: Parameters<typeof svc>[2],
  endpoints: Parameters<typeof slice>[3],
  status?: Parameters<typeof svc>[3],
): Cluster {
  return {
    services: [svc('ns1', 'svc1', spec, status)],
    slices: endpoints.length ? [slice('ns1', 'svc1', [{ name: 'p80', port: 80 }], endpoints)] : [],
  };
}

describe('packet flows (both layouts)', () => {
  it('no endpoints: REJECT on every address', () => {
    const c: Cluster = {
      services: [
        svc(
          'ns1',
          'svc1',
          {
            type: 'LoadBalancer',
            clusterIP: '172.30.0.41',
            externalIPs: ['192.168.99.11'],
            ports: [{ name: 'p80', port: 80, nodePort: 3001 }],
          },
          { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
        ),
      ],
      slices: [],
    };
    runFlows(c, [
      {
        name: 'pod to cluster IP',
        sourceIP: '10.0.0.2',
        destIP: '172.30.0.41',
        destPort: 80,
        output: 'REJECT',
      },
      {
        name: 'external to external IP',
        sourceIP: EXT_CLIENT,
        destIP: '192.168.99.11',
        destPort: 80,
        output: 'REJECT',
      },
      { name: 'pod to NodePort', sourceIP: '10.0.0.2', destIP: NODE_IP, destPort: 3001, output: 'REJECT' },
      {
        name: 'external to NodePort',
        sourceIP: EXT_CLIENT,
        destIP: NODE_IP,
        destPort: 3001,
        output: 'REJECT',
      },
      { name: 'pod to LB IP', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: 'REJECT' },
      { name: 'external to LB IP', sourceIP: EXT_CLIENT, destIP: '1.2.3.4', destPort: 80, output: 'REJECT' },
    ]);
  });

  it('cluster IP: endpoints, hairpin, ports, protocols, unallocated IPs', () => {
    const c: Cluster = {
      services: [
        svc('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'http', port: 80 }] }),
        svc('ns2', 'svc2', {
          clusterIP: '172.30.0.42',
          ports: [
            { name: 'http', port: 80 },
            { name: 'https', port: 443, targetPort: 8443 },
            { name: 'dns-udp', port: 53, protocol: 'UDP' },
            { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 5353 },
            { name: 'dns-sctp', port: 53, protocol: 'SCTP' },
          ],
        }),
      ],
      slices: [
        slice('ns1', 'svc1', [{ name: 'http', port: 80 }], [{ ip: '10.180.0.1', node: NODE }]),
        slice(
          'ns2',
          'svc2',
          [
            { name: 'http', port: 80 },
            { name: 'https', port: 8443 },
            { name: 'dns-udp', port: 53, protocol: 'UDP' },
            { name: 'dns-tcp', port: 5353, protocol: 'TCP' },
            { name: 'dns-sctp', port: 53, protocol: 'SCTP' },
          ],
          [
            { ip: '10.180.0.1', node: NODE },
            { ip: '10.180.2.1', node: 'node2' },
          ],
        ),
      ],
    };
    runFlows(c, [
      {
        name: 'simple',
        sourceIP: '10.180.0.2',
        destIP: '172.30.0.41',
        destPort: 80,
        output: '10.180.0.1:80',
      },
      {
        name: 'hairpin',
        sourceIP: '10.180.0.1',
        destIP: '172.30.0.41',
        destPort: 80,
        output: '10.180.0.1:80',
        masq: true,
      },
      {
        name: 'multiple endpoints',
        sourceIP: '10.180.0.2',
        destIP: '172.30.0.42',
        destPort: 80,
        output: '10.180.0.1:80, 10.180.2.1:80',
      },
      {
        name: 'target port',
        sourceIP: '10.180.0.2',
        destIP: '172.30.0.42',
        destPort: 443,
        output: '10.180.0.1:8443, 10.180.2.1:8443',
      },
      {
        name: 'TCP 53',
        sourceIP: '10.180.0.2',
        destIP: '172.30.0.42',
        destPort: 53,
        output: '10.180.0.1:5353, 10.180.2.1:5353',
      },
      {
        name: 'UDP 53',
        sourceIP: '10.180.0.2',
        protocol: 'UDP',
        destIP: '172.30.0.42',
        destPort: 53,
        output: '10.180.0.1:53, 10.180.2.1:53',
      },
      {
        name: 'SCTP 53',
        sourceIP: '10.180.0.2',
        protocol: 'SCTP',
        destIP: '172.30.0.42',
        destPort: 53,
        output: '10.180.0.1:53, 10.180.2.1:53',
      },
      {
        name: 'UDP to TCP-only port',
        sourceIP: '10.180.0.2',
        protocol: 'UDP',
        destIP: '172.30.0.42',
        destPort: 80,
        output: 'REJECT',
      },
      {
        name: "svc1 lacks svc2's port",
        sourceIP: '10.180.0.2',
        destIP: '172.30.0.41',
        destPort: 443,
        output: 'REJECT',
      },
      {
        name: 'unallocated cluster IP',
        sourceIP: '10.180.0.2',
        destIP: '172.30.0.50',
        destPort: 80,
        output: 'DROP',
      },
      { name: 'non-service traffic', sourceIP: '10.180.0.2', destIP: '10.180.2.1', destPort: 80, output: '' },
      {
        name: 'external client to cluster IP is masqueraded',
        sourceIP: EXT_CLIENT,
        destIP: '172.30.0.41',
        destPort: 80,
        output: '10.180.0.1:80',
        masq: true,
      },
      {
        name: 'node to cluster IP is masqueraded',
        sourceIP: NODE_IP,
        destIP: '172.30.0.41',
        destPort: 80,
        output: '10.180.0.1:80',
        masq: true,
      },
    ]);
  });

  it('load balancer with source ranges', () => {
    const c = oneService(
      {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.41',
        ports: [{ name: 'p80', port: 80, nodePort: 3001 }],
        loadBalancerSourceRanges: ['192.168.0.0/24', ' 203.0.113.0/25'],
      },
      [{ ip: '10.180.0.1' }],
      { loadBalancer: { ingress: [{ ip: '1.2.3.4' }, { ip: '5.6.7.8' }] } },
    );
    runFlows(c, [
      {
        name: 'pod to cluster IP',
        sourceIP: '10.0.0.2',
        destIP: '172.30.0.41',
        destPort: 80,
        output: '10.180.0.1:80',
      },
      {
        name: 'external to nodePort',
        sourceIP: EXT_CLIENT,
        destIP: NODE_IP,
        destPort: 3001,
        output: '10.180.0.1:80',
        masq: true,
      },
      {
        name: 'nodePort bypasses source ranges',
        sourceIP: BLOCKED,
        destIP: NODE_IP,
        destPort: 3001,
        output: '10.180.0.1:80',
        masq: true,
      },
      {
        name: 'accepted to LB1',
        sourceIP: EXT_CLIENT,
        destIP: '1.2.3.4',
        destPort: 80,
        output: '10.180.0.1:80',
        masq: true,
      },
      {
        name: 'accepted to LB2',
        sourceIP: EXT_CLIENT,
        destIP: '5.6.7.8',
        destPort: 80,
        output: '10.180.0.1:80',
        masq: true,
      },
      { name: 'blocked to LB1', sourceIP: BLOCKED, destIP: '1.2.3.4', destPort: 80, output: 'DROP' },
      { name: 'blocked to LB2', sourceIP: BLOCKED, destIP: '5.6.7.8', destPort: 80, output: 'DROP' },
      {
        name: 'node to LB (node in range)',
        sourceIP: NODE_IP,
        destIP: '1.2.3.4',
        destPort: 80,
        output: '10.180.0.1:80',
        masq: true,
      },
      {
        name: 'pod to LB (pod not in range)',
        sourceIP: '10.0.0.2',
        destIP: '1.2.3.4',
        destPort: 80,
        output: 'DROP',
      },
      {
        name: 'LB IP as source (hairpin through LB)',
        sourceIP: '1.2.3.4',
        destIP: '5.6.7.8',
        destPort: 80,
        output: '10.180.0.1:80',
        masq: true,
      },
    ]);
  });

  const etpLocal = (endpoints: Parameters<typeof slice>[3]): Cluster =>
    oneService(
      {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        clusterIP: '172.30.0.41',
        externalIPs: ['192.168.99.11'],
        ports: [{ name: 'p80', port: 80, nodePort: 3001 }],
        healthCheckNodePort: 30000,
      },
      endpoints,
      { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
    );

  it('externalTrafficPolicy Local with local and remote endpoints', () => {
    runFlows(
      etpLocal([
        { ip: '10.180.0.1', node: NODE },
        { ip: '10.180.2.1', node: 'host2' },
      ]),
      [
        {
          name: 'pod to cluster IP: all endpoints',
          sourceIP: '10.0.0.2',
          destIP: '172.30.0.41',
          destPort: 80,
          output: '10.180.0.1:80, 10.180.2.1:80',
        },
        {
          name: 'pod to LB: short-circuit to all',
          sourceIP: '10.0.0.2',
          destIP: '1.2.3.4',
          destPort: 80,
          output: '10.180.0.1:80, 10.180.2.1:80',
        },
        {
          name: 'pod to NodePort: short-circuit',
          sourceIP: '10.0.0.2',
          destIP: NODE_IP,
          destPort: 3001,
          output: '10.180.0.1:80, 10.180.2.1:80',
        },
        {
          name: 'external to LB: local only, no masq',
          sourceIP: EXT_CLIENT,
          destIP: '1.2.3.4',
          destPort: 80,
          output: '10.180.0.1:80',
        },
        {
          name: 'external to NodePort: local only',
          sourceIP: EXT_CLIENT,
          destIP: NODE_IP,
          destPort: 3001,
          output: '10.180.0.1:80',
        },
        {
          name: 'external to external IP',
          sourceIP: EXT_CLIENT,
          destIP: '192.168.99.11',
          destPort: 80,
          output: '10.180.0.1:80',
        },
        {
          name: 'node to LB: masqueraded, all endpoints',
          sourceIP: NODE_IP,
          destIP: '1.2.3.4',
          destPort: 80,
          output: '10.180.0.1:80, 10.180.2.1:80',
          masq: true,
        },
        {
          name: 'node to NodePort: masqueraded',
          sourceIP: NODE_IP,
          destIP: NODE_IP,
          destPort: 3001,
          output: '10.180.0.1:80, 10.180.2.1:80',
          masq: true,
        },
      ],
    );
  });

  it('externalTrafficPolicy Local without local endpoints: external DROP, pods short-circuit', () => {
    runFlows(etpLocal([{ ip: '10.180.2.1', node: 'host2' }]), [
      {
        name: 'pod to cluster IP',
        sourceIP: '10.0.0.2',
        destIP: '172.30.0.41',
        destPort: 80,
        output: '10.180.2.1:80',
      },
      {
        name: 'pod to LB short-circuits',
        sourceIP: '10.0.0.2',
        destIP: '1.2.3.4',
        destPort: 80,
        output: '10.180.2.1:80',
      },
      {
        name: 'external to LB dropped',
        sourceIP: EXT_CLIENT,
        destIP: '1.2.3.4',
        destPort: 80,
        output: 'DROP',
      },
      {
        name: 'external to NodePort dropped',
        sourceIP: EXT_CLIENT,
        destIP: NODE_IP,
        destPort: 3001,
        output: 'DROP',
      },
      {
        name: 'external to external IP dropped',
        sourceIP: EXT_CLIENT,
        destIP: '192.168.99.11',
        destPort: 80,
        output: 'DROP',
      },
    ]);
  });

  it('internalTrafficPolicy Local', () => {
    const c = (eps: Parameters<typeof slice>[3]): Cluster =>
      oneService(
        {
          type: 'NodePort',
          internalTrafficPolicy: 'Local',
          clusterIP: '172.30.0.41',
          ports: [{ name: 'p80', port: 80, nodePort: 3001 }],
        },
        eps,
      );
    runFlows(
      c([
        { ip: '10.180.0.1', node: NODE },
        { ip: '10.180.2.1', node: 'host2' },
      ]),
      [
        {
          name: 'pod to cluster IP: local only',
          sourceIP: '10.0.0.2',
          destIP: '172.30.0.41',
          destPort: 80,
          output: '10.180.0.1:80',
        },
        {
          name: 'external to NodePort: cluster-wide',
          sourceIP: EXT_CLIENT,
          destIP: NODE_IP,
          destPort: 3001,
          output: '10.180.0.1:80, 10.180.2.1:80',
          masq: true,
        },
      ],
    );
    runFlows(c([{ ip: '10.180.2.1', node: 'host2' }]), [
      {
        name: 'no local endpoints: DROP',
        sourceIP: '10.0.0.2',
        destIP: '172.30.0.41',
        destPort: 80,
        output: 'DROP',
      },
      {
        name: 'NodePort still works',
        sourceIP: EXT_CLIENT,
        destIP: NODE_IP,
        destPort: 3001,
        output: '10.180.2.1:80',
        masq: true,
      },
    ]);
  });

  it('terminating endpoints are used only when no endpoint is ready', () => {
    const c = (eps: Parameters<typeof slice>[3]): Cluster =>
      oneService({ clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }, eps);
    runFlows(c([{ ip: '10.0.1.1' }, { ip: '10.0.1.2', ready: false, serving: true, terminating: true }]), [
      {
        name: 'ready only',
        sourceIP: '10.0.0.2',
        destIP: '172.30.0.41',
        destPort: 80,
        output: '10.0.1.1:80',
      },
    ]);
    runFlows(
      c([
        { ip: '10.0.1.2', ready: false, serving: true, terminating: true },
        { ip: '10.0.1.3', ready: false, serving: false, terminating: true },
      ]),
      [
        {
          name: 'serving terminating fallback',
          sourceIP: '10.0.0.2',
          destIP: '172.30.0.41',
          destPort: 80,
          output: '10.0.1.2:80',
        },
      ],
    );
    runFlows(c([{ ip: '10.0.1.3', ready: false, serving: false, terminating: true }]), [
      {
        name: 'nothing serving: REJECT',
        sourceIP: '10.0.0.2',
        destIP: '172.30.0.41',
        destPort: 80,
        output: 'REJECT',
      },
    ]);
  });

  it('topology hints: PreferSameZone and PreferSameNode', () => {
    const zoneSvc = (eps: Parameters<typeof slice>[3]): Cluster => ({
      ...oneService({ clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }, eps),
      nodeLabels: { 'topology.kubernetes.io/zone': 'zone-a' },
    });
    runFlows(
      zoneSvc([
        { ip: '10.0.1.1', forZones: ['zone-a'] },
        { ip: '10.0.1.2', forZones: ['zone-b'] },
      ]),
      [
        {
          name: 'same zone only',
          sourceIP: '10.0.0.2',
          destIP: '172.30.0.41',
          destPort: 80,
          output: '10.0.1.1:80',
        },
      ],
    );
    runFlows(zoneSvc([{ ip: '10.0.1.1', forZones: ['zone-a'] }, { ip: '10.0.1.2' }]), [
      {
        name: 'incomplete hints: all',
        sourceIP: '10.0.0.2',
        destIP: '172.30.0.41',
        destPort: 80,
        output: '10.0.1.1:80, 10.0.1.2:80',
      },
    ]);
    runFlows(
      zoneSvc([
        { ip: '10.0.1.1', forZones: ['zone-c'] },
        { ip: '10.0.1.2', forZones: ['zone-b'] },
      ]),
      [
        {
          name: 'no hint for our zone: all',
          sourceIP: '10.0.0.2',
          destIP: '172.30.0.41',
          destPort: 80,
          output: '10.0.1.1:80, 10.0.1.2:80',
        },
      ],
    );
  });

  it('session affinity services still reach every endpoint', () => {
    const c = oneService(
      { clusterIP: '172.30.0.41', sessionAffinity: 'ClientIP', ports: [{ name: 'p80', port: 80 }] },
      [{ ip: '10.0.1.1' }, { ip: '10.0.1.2' }],
    );
    runFlows(c, [
      {
        name: 'affinity',
        sourceIP: '10.0.0.2',
        destIP: '172.30.0.41',
        destPort: 80,
        output: '10.0.1.1:80, 10.0.1.2:80',
      },
      {
        name: 'affinity hairpin',
        sourceIP: '10.0.1.2',
        destIP: '172.30.0.41',
        destPort: 80,
        output: '10.0.1.1:80, 10.0.1.2:80',
        masq: true,
      },
    ]);
  });

  it('masquerade-all and no detector', () => {
    const c = oneService({ clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }, [
      { ip: '10.0.1.1' },
    ]);
    runFlows(
      c,
      [
        {
          name: 'pod masqueraded',
          sourceIP: '10.0.0.2',
          destIP: '172.30.0.41',
          destPort: 80,
          output: '10.0.1.1:80',
          masq: true,
        },
      ],
      {
        masqueradeAll: true,
      },
    );
    runFlows(
      c,
      [
        {
          name: 'external not masqueraded',
          sourceIP: EXT_CLIENT,
          destIP: '172.30.0.41',
          destPort: 80,
          output: '10.0.1.1:80',
        },
      ],
      {},
    );
  });

  it('IPv6 dual-stack service', () => {
    const c: Cluster = {
      services: [
        svc('ns1', 'svc1', {
          type: 'NodePort',
          clusterIP: '172.30.0.41',
          clusterIPs: ['172.30.0.41', 'fd00:10:96::41'],
          ipFamilies: ['IPv4', 'IPv6'],
          ports: [{ name: 'p80', port: 80, nodePort: 3001 }],
        }),
      ],
      slices: [
        slice(
          'ns1',
          'svc1',
          [{ name: 'p80', port: 80 }],
          [{ ip: 'fd00:10::1' }, { ip: 'fd00:20::1', node: NODE }],
          'svc1-v6',
          'IPv6',
        ),
      ],
    };
    runFlows(
      c,
      [
        {
          name: 'pod to v6 cluster IP',
          sourceIP: 'fd00:10::5',
          destIP: 'fd00:10:96::41',
          destPort: 80,
          output: '[fd00:10::1]:80, [fd00:20::1]:80',
        },
        {
          name: 'hairpin v6',
          sourceIP: 'fd00:10::1',
          destIP: 'fd00:10:96::41',
          destPort: 80,
          output: '[fd00:10::1]:80, [fd00:20::1]:80',
          masq: true,
        },
        {
          name: 'external to v6 NodePort',
          sourceIP: '2001:db8:99::5',
          destIP: '2001:db8::1',
          destPort: 3001,
          output: '[fd00:10::1]:80, [fd00:20::1]:80',
          masq: true,
        },
      ],
      { family: 'ip6', localDetector: { mode: 'ClusterCIDR', cidr: 'fd00:10::/64' } },
      6,
    );
  });
});

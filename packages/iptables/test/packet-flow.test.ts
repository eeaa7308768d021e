import { packetFlowServices } from '@nodeagent/proxy-state/testing';
import { describe, expect, it } from 'vitest';
import { tracePacket } from '../src/index.js';
import { type Cluster, NODE_IP, render, slice, svc } from './helpers.js';

// kube-proxy test conventions: pod CIDR 10.0.0.0/8, node 192.168.0.2, external client
// 203.0.113.2, blocked client 203.0.113.130, LB source range 203.0.113.0/25.
const POD = '10.0.0.2';
const EXTERNAL = '203.0.113.2';
const BLOCKED = '203.0.113.130';
const p80 = [{ name: 'p80', port: 80 }];

const cluster: Cluster = {
  nodeLabels: { 'topology.kubernetes.io/zone': 'zone-a' },
  services: [
    ...packetFlowServices(),
    svc('ns9', 'lb-local-hc', {
      type: 'LoadBalancer',
      clusterIP: '172.30.0.49',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 30000,
      ports: [{ name: 'p80', port: 80, nodePort: 3009 }],
    }),
    svc('ns10', 'zone', { clusterIP: '172.30.0.50', ports: [{ name: 'p80', port: 80 }] }),
    svc('ns11', 'zone-partial', { clusterIP: '172.30.0.51', ports: [{ name: 'p80', port: 80 }] }),
    svc('ns12', 'same-node', { clusterIP: '172.30.0.52', ports: [{ name: 'p80', port: 80 }] }),
    svc('ns13', 'terminating', { clusterIP: '172.30.0.53', ports: [{ name: 'p80', port: 80 }] }),
    svc('ns14', 'udp', { clusterIP: '172.30.0.54', ports: [{ name: 'p53', port: 53, protocol: 'UDP' }] }),
    svc('ns15', 'local-terminating', {
      type: 'NodePort',
      clusterIP: '172.30.0.55',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'p80', port: 80, nodePort: 3015 }],
    }),
    svc('ns16', 'affinity', {
      clusterIP: '172.30.0.56',
      sessionAffinity: 'ClientIP',
      ports: [{ name: 'p80', port: 80 }],
    }),
  ],
  slices: [
    slice('ns1', 'cip', p80, [
      { ip: '10.180.0.1', node: 'test-node' },
      { ip: '10.180.2.1', node: 'other' },
    ]),
    slice('ns2', 'np', p80, [{ ip: '10.180.0.2', node: 'other' }]),
    slice('ns3', 'np-local', p80, [
      { ip: '10.180.0.3', node: 'test-node' },
      { ip: '10.180.2.3', node: 'other' },
    ]),
    slice('ns4', 'np-local-remote', p80, [{ ip: '10.180.2.4', node: 'other' }]),
    slice('ns5', 'itp-local', p80, [
      { ip: '10.180.0.5', node: 'test-node' },
      { ip: '10.180.2.5', node: 'other' },
    ]),
    slice('ns6', 'itp-remote', p80, [{ ip: '10.180.2.6', node: 'other' }]),
    slice('ns7', 'lb', p80, [{ ip: '10.180.0.7', node: 'other' }]),
    slice('ns9', 'lb-local-hc', p80, [{ ip: '10.180.0.9', node: 'test-node' }]),
    slice('ns10', 'zone', p80, [
      { ip: '10.180.0.10', zone: 'zone-a', forZones: ['zone-a'] },
      { ip: '10.180.2.10', zone: 'zone-b', forZones: ['zone-b'] },
    ]),
    slice('ns11', 'zone-partial', p80, [
      { ip: '10.180.0.11', zone: 'zone-a', forZones: ['zone-a'] },
      { ip: '10.180.2.11', zone: 'zone-b' },
    ]),
    slice('ns12', 'same-node', p80, [
      { ip: '10.180.0.12', node: 'test-node', forNodes: ['test-node'], forZones: ['zone-a'] },
      { ip: '10.180.2.12', node: 'other', forNodes: ['other'], forZones: ['zone-a'] },
    ]),
    slice('ns13', 'terminating', p80, [
      { ip: '10.180.0.13', ready: false, serving: true, terminating: true },
      { ip: '10.180.2.13', ready: false, serving: false, terminating: true },
    ]),
    slice('ns14', 'udp', [{ name: 'p53', port: 53, protocol: 'UDP' }], [{ ip: '10.180.0.14' }]),
    slice('ns15', 'local-terminating', p80, [
      { ip: '10.180.0.15', node: 'test-node', ready: false, serving: true, terminating: true },
      { ip: '10.180.2.15', node: 'other' },
    ]),
    slice('ns16', 'affinity', p80, [{ ip: '10.180.0.16' }, { ip: '10.180.2.16' }]),
  ],
};

interface FlowCase {
  name: string;
  src: string;
  dst: string;
  port: number;
  proto?: 'TCP' | 'UDP' | 'SCTP';
  outcome: 'endpoints' | 'REJECT' | 'DROP' | 'ACCEPT' | 'untouched';
  endpoints?: string[];
  masq?: boolean;
}

const cases: FlowCase[] = [
  // ClusterIP, Cluster policy.
  {
    name: 'pod to cluster IP reaches all endpoints without masquerade',
    src: POD,
    dst: '172.30.0.41',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.0.1:80', '10.180.2.1:80'],
    masq: false,
  },
  {
    name: 'non-pod source to cluster IP is masqueraded (local detector)',
    src: EXTERNAL,
    dst: '172.30.0.41',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.0.1:80', '10.180.2.1:80'],
    masq: true,
  },
  {
    name: 'wrong port on cluster IP is untouched',
    src: POD,
    dst: '172.30.0.41',
    port: 81,
    outcome: 'untouched',
    endpoints: [],
  },
  {
    name: 'wrong protocol is untouched',
    src: POD,
    dst: '172.30.0.54',
    port: 53,
    proto: 'TCP',
    outcome: 'untouched',
  },
  {
    name: 'UDP service over UDP',
    src: POD,
    dst: '172.30.0.54',
    port: 53,
    proto: 'UDP',
    outcome: 'endpoints',
    endpoints: ['10.180.0.14:53'],
    masq: false,
  },
  // NodePort, Cluster policy.
  {
    name: 'external to node port is masqueraded',
    src: EXTERNAL,
    dst: NODE_IP,
    port: 3001,
    outcome: 'endpoints',
    endpoints: ['10.180.0.2:80'],
    masq: true,
  },
  {
    name: 'localhost node port (route_localnet)',
    src: '127.0.0.1',
    dst: '127.0.0.1',
    port: 3001,
    outcome: 'endpoints',
    endpoints: ['10.180.0.2:80'],
    masq: true,
  },
  {
    name: 'node port on a non-local address is untouched',
    src: EXTERNAL,
    dst: '192.168.0.99',
    port: 3001,
    outcome: 'untouched',
  },
  // NodePort, externalTrafficPolicy Local.
  {
    name: 'eTP Local: external client reaches only local endpoints, source kept',
    src: EXTERNAL,
    dst: NODE_IP,
    port: 3003,
    outcome: 'endpoints',
    endpoints: ['10.180.0.3:80'],
    masq: false,
  },
  {
    name: 'eTP Local: pod traffic short-circuits to all endpoints',
    src: POD,
    dst: NODE_IP,
    port: 3003,
    outcome: 'endpoints',
    endpoints: ['10.180.0.3:80', '10.180.2.3:80'],
    masq: false,
  },
  {
    name: 'eTP Local: node-originated traffic goes to all endpoints, masqueraded',
    src: NODE_IP,
    dst: NODE_IP,
    port: 3003,
    outcome: 'endpoints',
    endpoints: ['10.180.0.3:80', '10.180.2.3:80'],
    masq: true,
  },
  {
    name: 'eTP Local without local endpoints: external client dropped',
    src: EXTERNAL,
    dst: NODE_IP,
    port: 3004,
    outcome: 'DROP',
  },
  {
    name: 'eTP Local without local endpoints: pod traffic still served',
    src: POD,
    dst: NODE_IP,
    port: 3004,
    outcome: 'endpoints',
    endpoints: ['10.180.2.4:80'],
    masq: false,
  },
  {
    name: 'eTP Local without local endpoints: cluster IP still served',
    src: POD,
    dst: '172.30.0.44',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.2.4:80'],
  },
  {
    name: 'eTP Local: serving-terminating local endpoint used as fallback',
    src: EXTERNAL,
    dst: NODE_IP,
    port: 3015,
    outcome: 'endpoints',
    endpoints: ['10.180.0.15:80'],
    masq: false,
  },
  {
    name: 'eTP Local: cluster traffic ignores the terminating local endpoint',
    src: POD,
    dst: '172.30.0.55',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.2.15:80'],
  },
  // internalTrafficPolicy Local.
  {
    name: 'iTP Local: only local endpoints',
    src: POD,
    dst: '172.30.0.45',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.0.5:80'],
    masq: false,
  },
  {
    name: 'iTP Local without local endpoints: dropped',
    src: POD,
    dst: '172.30.0.46',
    port: 80,
    outcome: 'DROP',
  },
  // LoadBalancer with source ranges, external IP.
  {
    name: 'LB: allowed source reaches endpoints, masqueraded (eTP Cluster)',
    src: EXTERNAL,
    dst: '1.2.3.4',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.0.7:80'],
    masq: true,
  },
  {
    name: 'LB: source outside loadBalancerSourceRanges dropped by KUBE-PROXY-FIREWALL',
    src: BLOCKED,
    dst: '1.2.3.4',
    port: 80,
    outcome: 'DROP',
  },
  {
    name: 'LB: node port is not subject to source ranges',
    src: BLOCKED,
    dst: NODE_IP,
    port: 3007,
    outcome: 'endpoints',
    endpoints: ['10.180.0.7:80'],
    masq: true,
  },
  {
    name: 'LB: ipMode Proxy ingress gets no rule',
    src: EXTERNAL,
    dst: '5.6.7.8',
    port: 80,
    outcome: 'untouched',
  },
  {
    name: 'external IP reaches endpoints, masqueraded',
    src: EXTERNAL,
    dst: '192.168.99.11',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.0.7:80'],
    masq: true,
  },
  // No endpoints.
  { name: 'no endpoints: cluster IP rejected', src: POD, dst: '172.30.0.48', port: 80, outcome: 'REJECT' },
  {
    name: 'no endpoints: external IP rejected',
    src: EXTERNAL,
    dst: '192.168.99.12',
    port: 80,
    outcome: 'REJECT',
  },
  { name: 'no endpoints: LB IP rejected', src: EXTERNAL, dst: '9.10.11.12', port: 80, outcome: 'REJECT' },
  { name: 'no endpoints: node port rejected', src: EXTERNAL, dst: NODE_IP, port: 3008, outcome: 'REJECT' },
  // Health check node port.
  { name: 'health check node port accepted', src: EXTERNAL, dst: NODE_IP, port: 30000, outcome: 'ACCEPT' },
  // Topology.
  {
    name: 'PreferSameZone hints: only this zone',
    src: POD,
    dst: '172.30.0.50',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.0.10:80'],
  },
  {
    name: 'hints missing on some endpoint: topology ignored',
    src: POD,
    dst: '172.30.0.51',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.0.11:80', '10.180.2.11:80'],
  },
  {
    name: 'PreferSameNode hints: only this node',
    src: POD,
    dst: '172.30.0.52',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.0.12:80'],
  },
  // Terminating fallback, affinity.
  {
    name: 'only terminating endpoints: serving ones used',
    src: POD,
    dst: '172.30.0.53',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.0.13:80'],
  },
  {
    name: 'ClientIP affinity: every endpoint reachable for a new client',
    src: POD,
    dst: '172.30.0.56',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.180.0.16:80', '10.180.2.16:80'],
  },
];

describe('packet flows through the rendered rules (kube-proxy tracer semantics)', () => {
  const rules = render(cluster);
  for (const c of cases) {
    it(c.name, () => {
      const r = tracePacket(rules, {
        sourceIP: c.src,
        destIP: c.dst,
        destPort: c.port,
        protocol: c.proto ?? 'TCP',
        nodeIPs: [NODE_IP],
      });
      expect(r.outcome, JSON.stringify(r.matchedRules, null, 1)).toBe(c.outcome);
      if (c.endpoints) expect(r.endpoints).toEqual(c.endpoints);
      if (c.masq !== undefined) expect(r.masquerade).toBe(c.masq);
    });
  }
});

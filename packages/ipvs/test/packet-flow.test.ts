/**
 * Packet flows through IPVS plans for every traffic-policy rule. Where IPVS mode differs from
 * the iptables backend (Local policy without local endpoints falls back to cluster endpoints
 * instead of DROP), the expectation says so.
 */
import { packetFlowServices } from '@nodeagent/proxy-state/testing';
import { describe, expect, it } from 'vitest';
import { type IpvsTracePacket, traceIpvs } from '../src/index.js';
import { type Cluster, NODE, NODE_IP, plan, slice, svc } from './helpers.js';

const POD = '10.0.0.2';
const EXTERNAL = '203.0.113.2';
const BLOCKED = '203.0.113.130';
const p80 = [{ name: 'p80', port: 80 }];
const local = (ip: string) => ({ ip, node: NODE });
const remote = (ip: string) => ({ ip, node: 'other-node' });

const cluster: Cluster = {
  services: [
    ...packetFlowServices(),
    svc(
      'ns9',
      'lb-local-hc',
      {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.49',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 30000,
        externalIPs: ['192.168.99.13'],
        ports: [{ name: 'p80', port: 80, nodePort: 3009 }],
      },
      { loadBalancer: { ingress: [{ ip: '1.2.3.9' }] } },
    ),
    svc('ns10', 'terminating', { clusterIP: '172.30.0.50', ports: [{ name: 'p80', port: 80 }] }),
    svc('ns11', 'udp', { clusterIP: '172.30.0.51', ports: [{ name: 'p53', port: 53, protocol: 'UDP' }] }),
    svc(
      'ns12',
      'lb-node-ok',
      {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.52',
        loadBalancerSourceRanges: ['192.168.0.0/16'],
        ports: [{ name: 'p80', port: 80, nodePort: 3012 }],
      },
      { loadBalancer: { ingress: [{ ip: '1.2.3.12' }] } },
    ),
  ],
  slices: [
    slice('ns1', 'cip', p80, [local('10.180.0.1'), remote('10.180.1.1')]),
    slice('ns2', 'np', p80, [remote('10.180.0.2')]),
    slice('ns3', 'np-local', p80, [local('10.180.0.3'), remote('10.180.1.3')]),
    slice('ns4', 'np-local-remote', p80, [remote('10.180.1.4')]),
    slice('ns5', 'itp-local', p80, [local('10.180.0.5'), remote('10.180.1.5')]),
    slice('ns6', 'itp-remote', p80, [remote('10.180.1.6')]),
    slice('ns7', 'lb', p80, [remote('10.180.0.7')]),
    slice('ns9', 'lb-local-hc', p80, [local('10.180.0.9'), remote('10.180.1.9')]),
    slice('ns10', 'terminating', p80, [
      { ip: '10.180.0.10', ready: false, serving: true, terminating: true },
      { ip: '10.180.1.10', ready: false, serving: false, terminating: true },
    ]),
    slice('ns11', 'udp', [{ name: 'p53', port: 53, protocol: 'UDP' }], [remote('10.180.0.11')]),
    slice('ns12', 'lb-node-ok', p80, [remote('10.180.0.12')]),
  ],
};

const thePlan = plan(cluster);

interface FlowCase {
  name: string;
  pkt: IpvsTracePacket;
  outcome: 'endpoints' | 'REJECT' | 'DROP' | 'ACCEPT' | 'untouched';
  endpoints?: string[];
  masquerade: boolean;
}

const cases: FlowCase[] = [
  {
    name: 'pod to cluster IP: all endpoints, no masquerade',
    pkt: { sourceIP: POD, destIP: '172.30.0.41', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.1:80', '10.180.1.1:80'],
    masquerade: false,
  },
  {
    name: 'external source to cluster IP is masqueraded',
    pkt: { sourceIP: EXTERNAL, destIP: '172.30.0.41', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.1:80', '10.180.1.1:80'],
    masquerade: true,
  },
  {
    name: 'hairpin: endpoint to its own service is masqueraded',
    pkt: { sourceIP: '10.180.0.1', destIP: '172.30.0.41', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.1:80', '10.180.1.1:80'],
    masquerade: true,
  },
  {
    name: 'cluster IP on a port no service uses is rejected by KUBE-IPVS-FILTER',
    pkt: { sourceIP: POD, destIP: '172.30.0.41', destPort: 22 },
    outcome: 'REJECT',
    masquerade: false,
  },
  {
    name: 'unknown address is untouched',
    pkt: { sourceIP: POD, destIP: '10.99.0.1', destPort: 80 },
    outcome: 'untouched',
    masquerade: false,
  },
  {
    name: 'wrong protocol to a TCP service is rejected',
    pkt: { sourceIP: POD, destIP: '172.30.0.41', destPort: 80, protocol: 'UDP' },
    outcome: 'REJECT',
    masquerade: false,
  },
  {
    name: 'UDP service',
    pkt: { sourceIP: POD, destIP: '172.30.0.51', destPort: 53, protocol: 'UDP' },
    outcome: 'endpoints',
    endpoints: ['10.180.0.11:53'],
    masquerade: false,
  },
  {
    name: 'node port (Cluster policy) is masqueraded',
    pkt: { sourceIP: EXTERNAL, destIP: NODE_IP, destPort: 3001 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.2:80'],
    masquerade: true,
  },
  {
    name: 'node port on a non-node address is untouched',
    pkt: { sourceIP: EXTERNAL, destIP: '192.168.0.99', destPort: 3001 },
    outcome: 'untouched',
    masquerade: false,
  },
  {
    name: 'node port (Local policy) reaches only local endpoints, source kept',
    pkt: { sourceIP: EXTERNAL, destIP: NODE_IP, destPort: 3003 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.3:80'],
    masquerade: false,
  },
  {
    name: 'cluster IP of a Local-policy service still reaches every endpoint',
    pkt: { sourceIP: POD, destIP: '172.30.0.43', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.3:80', '10.180.1.3:80'],
    masquerade: false,
  },
  {
    name: 'IPVS difference: Local node port without local endpoints falls back to cluster endpoints (iptables: DROP)',
    pkt: { sourceIP: EXTERNAL, destIP: NODE_IP, destPort: 3004 },
    outcome: 'endpoints',
    endpoints: ['10.180.1.4:80'],
    masquerade: false,
  },
  {
    name: 'internal policy Local: only the local endpoint',
    pkt: { sourceIP: POD, destIP: '172.30.0.45', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.5:80'],
    masquerade: false,
  },
  {
    name: 'internal policy Local without local endpoints: no real server, refused',
    pkt: { sourceIP: POD, destIP: '172.30.0.46', destPort: 80 },
    outcome: 'REJECT',
    masquerade: false,
  },
  {
    name: 'LB IP from an allowed source',
    pkt: { sourceIP: EXTERNAL, destIP: '1.2.3.4', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.7:80'],
    masquerade: true,
  },
  {
    name: 'LB IP from a blocked source is dropped',
    pkt: { sourceIP: BLOCKED, destIP: '1.2.3.4', destPort: 80 },
    outcome: 'DROP',
    masquerade: true,
  },
  {
    name: 'node to an LB whose ranges exclude it is dropped (KUBE-IPVS-OUT-FILTER)',
    pkt: { sourceIP: '1.2.3.4', destIP: '1.2.3.4', destPort: 80, fromLocalProcess: true },
    outcome: 'DROP',
    masquerade: true,
  },
  {
    name: 'node to an LB whose ranges include the node IP is allowed (KUBE-LOAD-BALANCER-SOURCE-IP)',
    pkt: { sourceIP: '1.2.3.12', destIP: '1.2.3.12', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.12:80'],
    masquerade: true,
  },
  {
    name: 'ipMode Proxy LB IP is not handled',
    pkt: { sourceIP: EXTERNAL, destIP: '5.6.7.8', destPort: 80 },
    outcome: 'untouched',
    masquerade: false,
  },
  {
    name: 'node ports are not subject to source ranges',
    pkt: { sourceIP: BLOCKED, destIP: NODE_IP, destPort: 3007 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.7:80'],
    masquerade: true,
  },
  {
    name: 'external IP (Cluster policy) from outside is masqueraded',
    pkt: { sourceIP: EXTERNAL, destIP: '192.168.99.11', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.7:80'],
    masquerade: true,
  },
  {
    name: 'service without endpoints: cluster IP refused',
    pkt: { sourceIP: POD, destIP: '172.30.0.48', destPort: 80 },
    outcome: 'REJECT',
    masquerade: false,
  },
  {
    name: 'service without endpoints: external IP refused',
    pkt: { sourceIP: EXTERNAL, destIP: '192.168.99.12', destPort: 80 },
    outcome: 'REJECT',
    masquerade: true,
  },
  {
    name: 'service without endpoints: LB IP refused',
    pkt: { sourceIP: EXTERNAL, destIP: '9.10.11.12', destPort: 80 },
    outcome: 'REJECT',
    masquerade: true,
  },
  {
    name: 'service without endpoints: node port refused',
    pkt: { sourceIP: EXTERNAL, destIP: NODE_IP, destPort: 3008 },
    outcome: 'REJECT',
    masquerade: true,
  },
  {
    name: 'LB with Local policy keeps the source and reaches the local endpoint',
    pkt: { sourceIP: EXTERNAL, destIP: '1.2.3.9', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.9:80'],
    masquerade: false,
  },
  {
    name: 'external IP with Local policy keeps the source',
    pkt: { sourceIP: EXTERNAL, destIP: '192.168.99.13', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.9:80'],
    masquerade: false,
  },
  {
    name: 'health-check node port is accepted',
    pkt: { sourceIP: EXTERNAL, destIP: NODE_IP, destPort: 30000 },
    outcome: 'ACCEPT',
    masquerade: false,
  },
  {
    name: 'serving terminating endpoints are used when none is ready',
    pkt: { sourceIP: POD, destIP: '172.30.0.50', destPort: 80 },
    outcome: 'endpoints',
    endpoints: ['10.180.0.10:80'],
    masquerade: false,
  },
  {
    name: 'connections from localhost are not masqueraded by KUBE-SERVICES',
    pkt: { sourceIP: '127.0.0.1', destIP: '172.30.0.41', destPort: 80, fromLocalProcess: true },
    outcome: 'endpoints',
    endpoints: ['10.180.0.1:80', '10.180.1.1:80'],
    masquerade: false,
  },
];

describe('IPVS packet flows', () => {
  for (const c of cases) {
    it(c.name, () => {
      const r = traceIpvs(thePlan, c.pkt);
      expect({ outcome: r.outcome, endpoints: r.endpoints, masquerade: r.masquerade }).toEqual({
        outcome: c.outcome,
        endpoints: c.endpoints ?? [],
        masquerade: c.masquerade,
      });
    });
  }

  it('real servers at weight 0 (draining) get no new connections', () => {
    const vs = thePlan.virtualServers.find((v) => v.address === '172.30.0.41')!;
    const drained = {
      ...thePlan,
      virtualServers: thePlan.virtualServers.map((v) =>
        v === vs
          ? {
              ...v,
              realServers: v.realServers.map((r) => ({ ...r, weight: r.address === '10.180.0.1' ? 0 : 1 })),
            }
          : v,
      ),
    };
    expect(traceIpvs(drained, { sourceIP: POD, destIP: '172.30.0.41', destPort: 80 }).endpoints).toEqual([
      '10.180.1.1:80',
    ]);
  });

  it('masqueradeAll marks pod traffic too; no detector masquerades VIP-sourced node traffic only', () => {
    const all = plan(cluster, { masqueradeAll: true });
    expect(traceIpvs(all, { sourceIP: POD, destIP: '172.30.0.41', destPort: 80 }).masquerade).toBe(true);
    const none = plan(cluster, {});
    expect(traceIpvs(none, { sourceIP: EXTERNAL, destIP: '172.30.0.41', destPort: 80 }).masquerade).toBe(
      false,
    );
    expect(
      traceIpvs(none, {
        sourceIP: '172.30.0.41',
        destIP: '172.30.0.41',
        destPort: 80,
        fromLocalProcess: true,
      }).masquerade,
    ).toBe(true);
  });

  it('interface-based local detection', () => {
    const p = plan(cluster, { localDetector: { mode: 'InterfaceNamePrefix', interfacePrefix: 'veth' } });
    expect(
      traceIpvs(p, { sourceIP: POD, destIP: '172.30.0.41', destPort: 80, inInterface: 'veth123' }).masquerade,
    ).toBe(false);
    expect(
      traceIpvs(p, { sourceIP: POD, destIP: '172.30.0.41', destPort: 80, inInterface: 'eth0' }).masquerade,
    ).toBe(true);
  });

  it('reports the rules that matched and refuses bad addresses', () => {
    const r = traceIpvs(thePlan, { sourceIP: BLOCKED, destIP: '1.2.3.4', destPort: 80 });
    expect(r.matchedRules.at(-1)).toBe('-A KUBE-SOURCE-RANGES-FIREWALL -j DROP');
    expect(() => traceIpvs(thePlan, { sourceIP: 'nope', destIP: '1.2.3.4', destPort: 80 })).toThrow(
      TypeError,
    );
  });
});

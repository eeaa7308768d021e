/** fast-check generators of random clusters (hostile names, IPv6, odd ports) for property tests. */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { buildProxySnapshots, type ProxySnapshot } from '@nodeagent/proxy-state';
import fc from 'fast-check';
import { NODE, NODE_IP, NODE_IP6 } from './helpers.js';

/** Names with quotes, newlines, spaces, shell and ipset/iptables syntax characters. */
export const hostileName = fc.oneof(
  fc.constantFrom(
    'svc',
    'a"b',
    "it's",
    'new\nline',
    'sp ace',
    '-A KUBE',
    'x;rm -rf /',
    '$(id)',
    'COMMIT',
    'ünï',
    'a\\b',
    '#c',
  ),
  fc.string({ minLength: 1, maxLength: 12 }),
);

interface GenPort {
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly nodePort: number;
  readonly targetPort: number;
}

interface GenService {
  readonly ns: string;
  readonly name: string;
  readonly type: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  readonly ipIndex: number;
  readonly ports: readonly GenPort[];
  readonly eTPLocal: boolean;
  readonly iTPLocal: boolean;
  readonly affinity: number;
  readonly externalIPs: readonly number[];
  readonly lbIPs: readonly number[];
  readonly sourceRanges: readonly string[];
  readonly hcPort: number;
  readonly endpoints: readonly { index: number; local: boolean; ready: boolean; terminating: boolean }[];
}

const genPort: fc.Arbitrary<GenPort> = fc.record({
  port: fc.oneof(fc.constantFrom(1, 80, 443, 65535), fc.integer({ min: 1, max: 65535 })),
  protocol: fc.constantFrom('TCP', 'UDP', 'SCTP'),
  nodePort: fc.integer({ min: 30000, max: 32767 }),
  targetPort: fc.integer({ min: 1, max: 65535 }),
});

/** One random service with endpoints. */
export const genService: fc.Arbitrary<GenService> = fc.record({
  ns: hostileName,
  name: hostileName,
  type: fc.constantFrom('ClusterIP', 'NodePort', 'LoadBalancer'),
  ipIndex: fc.integer({ min: 1, max: 40 }),
  ports: fc.uniqueArray(genPort, { minLength: 1, maxLength: 3, selector: (p) => `${p.port}/${p.protocol}` }),
  eTPLocal: fc.boolean(),
  iTPLocal: fc.boolean(),
  affinity: fc.constantFrom(0, 0, 10800, 60),
  externalIPs: fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { maxLength: 2 }),
  lbIPs: fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { maxLength: 2 }),
  sourceRanges: fc.subarray(['203.0.113.0/25', '192.168.0.0/16', '10.0.0.0/8']),
  hcPort: fc.constantFrom(0, 30000, 30001),
  endpoints: fc.uniqueArray(
    fc.record({
      index: fc.integer({ min: 1, max: 30 }),
      local: fc.boolean(),
      ready: fc.boolean(),
      terminating: fc.boolean(),
    }),
    { maxLength: 4, selector: (e) => e.index },
  ),
});

function addr(family: 4 | 6, kind: 'cluster' | 'ext' | 'lb' | 'ep', i: number): string {
  const v4 = { cluster: '172.30.0.', ext: '192.168.99.', lb: '1.2.3.', ep: '10.180.0.' }[kind];
  const v6 = { cluster: 'fd00:172:30::', ext: 'fd00:192:168::', lb: '2001:db8:1::', ep: 'fd00:10:180::' }[
    kind
  ];
  return family === 4 ? `${v4}${i}` : `${v6}${i.toString(16)}`;
}

/** Turns generated services into API objects of one family. */
export function toObjects(
  gen: readonly GenService[],
  family: 4 | 6,
): { services: V1Service[]; slices: V1EndpointSlice[] } {
  const services: V1Service[] = [];
  const slices: V1EndpointSlice[] = [];
  const seen = new Set<string>();
  for (const g of gen) {
    const key = `${g.ns}/${g.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const external = g.type !== 'ClusterIP';
    const ranges: string[] =
      family === 4 ? [...g.sourceRanges] : g.sourceRanges.length > 0 ? ['2001:db8::/64'] : [];
    services.push({
      metadata: { namespace: g.ns, name: g.name },
      spec: {
        type: g.type,
        clusterIP: addr(family, 'cluster', g.ipIndex),
        clusterIPs: [addr(family, 'cluster', g.ipIndex)],
        ipFamilies: [family === 4 ? 'IPv4' : 'IPv6'],
        ports: g.ports.map((p, i) => ({
          name: `p${i}${g.name}`,
          port: p.port,
          protocol: p.protocol,
          targetPort: p.targetPort,
          ...(external ? { nodePort: p.nodePort } : {}),
        })),
        ...(external && g.eTPLocal ? { externalTrafficPolicy: 'Local' } : {}),
        ...(g.iTPLocal ? { internalTrafficPolicy: 'Local' } : {}),
        ...(g.affinity > 0
          ? {
              sessionAffinity: 'ClientIP',
              sessionAffinityConfig: { clientIP: { timeoutSeconds: g.affinity } },
            }
          : {}),
        externalIPs: g.externalIPs.map((i) => addr(family, 'ext', i)),
        ...(g.type === 'LoadBalancer' ? { loadBalancerSourceRanges: ranges } : {}),
        ...(g.type === 'LoadBalancer' && g.eTPLocal && g.hcPort ? { healthCheckNodePort: g.hcPort } : {}),
      },
      ...(g.type === 'LoadBalancer'
        ? { status: { loadBalancer: { ingress: g.lbIPs.map((i) => ({ ip: addr(family, 'lb', i) })) } } }
        : {}),
    });
    slices.push({
      metadata: {
        namespace: g.ns,
        name: `${g.name}-s`,
        labels: { 'kubernetes.io/service-name': g.name },
      },
      addressType: family === 4 ? 'IPv4' : 'IPv6',
      ports: g.ports.map((p, i) => ({ name: `p${i}${g.name}`, port: p.targetPort, protocol: p.protocol })),
      endpoints: g.endpoints.map((e) => ({
        addresses: [addr(family, 'ep', e.index)],
        nodeName: e.local ? NODE : 'other-node',
        conditions: { ready: e.ready, serving: e.ready || e.terminating, terminating: e.terminating },
      })),
    });
  }
  return { services, slices };
}

/** A snapshot of random services (objects proxy-state refuses are simply left out). */
export function randomSnapshot(gen: readonly GenService[], family: 4 | 6): ProxySnapshot {
  const { services, slices } = toObjects(gen, family);
  const built = buildProxySnapshots({
    nodeName: NODE,
    nodeIPs: [NODE_IP, NODE_IP6],
    services,
    endpointSlices: slices,
  });
  return family === 4 ? built.v4 : built.v6;
}

/** A list of random services. */
export const genCluster = fc.array(genService, { maxLength: 6 });

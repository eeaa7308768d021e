import { describe, expect, it } from 'vitest';
import {
  type CategorizeOptions,
  categorizeEndpoints,
  type Endpoint,
  topologyModeFromHints,
} from '../src/index.js';
import { ep } from './fixtures.js';

const CLUSTER = { usesClusterEndpoints: true, usesLocalEndpoints: false }; // iTP Cluster, no external access
const ITP_LOCAL = { usesClusterEndpoints: false, usesLocalEndpoints: true }; // iTP Local, ClusterIP only
const ETP_LOCAL = { usesClusterEndpoints: true, usesLocalEndpoints: true }; // eTP Local (or iTP Local) + external access
const NODE = { name: 'node-a', zone: 'zone-a' };

interface Case {
  name: string;
  svc: typeof CLUSTER;
  endpoints: Endpoint[];
  node?: { name: string; zone: string };
  options?: CategorizeOptions;
  cluster: string[];
  local: string[];
  all: string[];
  hasAny: boolean;
  mode?: string;
}

const cases: Case[] = [
  { name: 'no endpoints', svc: CLUSTER, endpoints: [], cluster: [], local: [], all: [], hasAny: false },
  {
    name: 'ready endpoints, no hints: all ready ones',
    svc: CLUSTER,
    endpoints: [ep('10.0.0.1:80'), ep('10.0.0.2:80', { ready: false, serving: false }), ep('10.0.0.3:80')],
    cluster: ['10.0.0.1:80', '10.0.0.3:80'],
    local: [],
    all: ['10.0.0.1:80', '10.0.0.3:80'],
    hasAny: true,
  },
  {
    name: 'zone hints on every ready endpoint and one for our zone → PreferSameZone',
    svc: CLUSTER,
    endpoints: [
      ep('10.0.0.1:80', { zoneHints: ['zone-a'] }),
      ep('10.0.0.2:80', { zoneHints: ['zone-b'] }),
      ep('10.0.0.3:80', { zoneHints: ['zone-a', 'zone-c'] }),
      ep('10.0.0.4:80', { ready: false, serving: false }), // not ready: its missing hints do not matter
    ],
    cluster: ['10.0.0.1:80', '10.0.0.3:80'],
    local: [],
    all: ['10.0.0.1:80', '10.0.0.3:80'],
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'a ready endpoint without zone hints → hints ignored',
    svc: CLUSTER,
    endpoints: [ep('10.0.0.1:80', { zoneHints: ['zone-a'] }), ep('10.0.0.2:80')],
    cluster: ['10.0.0.1:80', '10.0.0.2:80'],
    local: [],
    all: ['10.0.0.1:80', '10.0.0.2:80'],
    hasAny: true,
    mode: '',
  },
  {
    name: 'no hint for our zone → hints ignored',
    svc: CLUSTER,
    endpoints: [ep('10.0.0.1:80', { zoneHints: ['zone-b'] }), ep('10.0.0.2:80', { zoneHints: ['zone-c'] })],
    cluster: ['10.0.0.1:80', '10.0.0.2:80'],
    local: [],
    all: ['10.0.0.1:80', '10.0.0.2:80'],
    hasAny: true,
    mode: '',
  },
  {
    name: 'node without a zone label → zone hints ignored',
    svc: CLUSTER,
    node: { name: 'node-a', zone: '' },
    endpoints: [ep('10.0.0.1:80', { zoneHints: ['zone-a'] }), ep('10.0.0.2:80', { zoneHints: ['zone-b'] })],
    cluster: ['10.0.0.1:80', '10.0.0.2:80'],
    local: [],
    all: ['10.0.0.1:80', '10.0.0.2:80'],
    hasAny: true,
    mode: '',
  },
  {
    name: 'node hints on every ready endpoint, one for this node → PreferSameNode',
    svc: CLUSTER,
    endpoints: [
      ep('10.0.0.1:80', { nodeHints: ['node-a'], zoneHints: ['zone-a'] }),
      ep('10.0.0.2:80', { nodeHints: ['node-b'], zoneHints: ['zone-a'] }),
      ep('10.0.0.3:80', { nodeHints: ['node-c'], zoneHints: ['zone-b'] }),
    ],
    cluster: ['10.0.0.1:80'],
    local: [],
    all: ['10.0.0.1:80'],
    hasAny: true,
    mode: 'PreferSameNode',
  },
  {
    name: 'node hints with the PreferSameTrafficDistribution gate off → zone hints',
    svc: CLUSTER,
    options: { preferSameTrafficDistribution: false },
    endpoints: [
      ep('10.0.0.1:80', { nodeHints: ['node-a'], zoneHints: ['zone-a'] }),
      ep('10.0.0.2:80', { nodeHints: ['node-b'], zoneHints: ['zone-a'] }),
      ep('10.0.0.3:80', { nodeHints: ['node-c'], zoneHints: ['zone-b'] }),
    ],
    cluster: ['10.0.0.1:80', '10.0.0.2:80'],
    local: [],
    all: ['10.0.0.1:80', '10.0.0.2:80'],
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'node hints not naming this node → falls back to zone hints',
    svc: CLUSTER,
    endpoints: [
      ep('10.0.0.1:80', { nodeHints: ['node-b'], zoneHints: ['zone-a'] }),
      ep('10.0.0.2:80', { nodeHints: ['node-c'], zoneHints: ['zone-b'] }),
    ],
    cluster: ['10.0.0.1:80'],
    local: [],
    all: ['10.0.0.1:80'],
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'one ready endpoint lacks node hints → zone hints',
    svc: CLUSTER,
    endpoints: [
      ep('10.0.0.1:80', { nodeHints: ['node-a'], zoneHints: ['zone-b'] }),
      ep('10.0.0.2:80', { zoneHints: ['zone-a'] }),
    ],
    cluster: ['10.0.0.2:80'],
    local: [],
    all: ['10.0.0.2:80'],
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'no ready endpoints → serving+terminating ones, topology ignored',
    svc: CLUSTER,
    endpoints: [
      ep('10.0.0.1:80', { ready: false, serving: true, terminating: true, zoneHints: ['zone-b'] }),
      ep('10.0.0.2:80', { ready: false, serving: false, terminating: true }),
      ep('10.0.0.3:80', { ready: false, serving: true, terminating: false }),
    ],
    cluster: ['10.0.0.1:80'],
    local: [],
    all: ['10.0.0.1:80'],
    hasAny: true,
  },
  {
    name: 'terminating and not serving anywhere → nothing',
    svc: CLUSTER,
    endpoints: [ep('10.0.0.1:80', { ready: false, serving: false, terminating: true })],
    cluster: [],
    local: [],
    all: [],
    hasAny: false,
  },
  {
    name: 'ready endpoints win over serving+terminating ones',
    svc: CLUSTER,
    endpoints: [ep('10.0.0.1:80', { ready: false, serving: true, terminating: true }), ep('10.0.0.2:80')],
    cluster: ['10.0.0.2:80'],
    local: [],
    all: ['10.0.0.2:80'],
    hasAny: true,
  },
  {
    name: 'internalTrafficPolicy Local: local ready endpoints only',
    svc: ITP_LOCAL,
    endpoints: [
      ep('10.0.0.1:80', { isLocal: true }),
      ep('10.0.0.2:80'),
      ep('10.0.0.3:80', { isLocal: true, ready: false, serving: false }),
    ],
    cluster: [],
    local: ['10.0.0.1:80'],
    all: ['10.0.0.1:80'],
    hasAny: true,
  },
  {
    name: 'internalTrafficPolicy Local without local endpoints: none reachable but the service has endpoints',
    svc: ITP_LOCAL,
    endpoints: [ep('10.0.0.2:80')],
    cluster: [],
    local: [],
    all: [],
    hasAny: true,
  },
  {
    name: 'internalTrafficPolicy Local: local serving+terminating fallback even with remote ready ones',
    svc: ITP_LOCAL,
    endpoints: [
      ep('10.0.0.1:80', { isLocal: true, ready: false, serving: true, terminating: true }),
      ep('10.0.0.2:80'),
      ep('10.0.0.3:80', { isLocal: true, ready: false, serving: false, terminating: true }),
    ],
    cluster: [],
    local: ['10.0.0.1:80'],
    all: ['10.0.0.1:80'],
    hasAny: true,
  },
  {
    name: 'internalTrafficPolicy Local: only remote serving+terminating → hasAny, nothing local',
    svc: ITP_LOCAL,
    endpoints: [ep('10.0.0.2:80', { ready: false, serving: true, terminating: true })],
    cluster: [],
    local: [],
    all: [],
    hasAny: true,
  },
  {
    name: 'externalTrafficPolicy Local: cluster is every ready endpoint, local the local ones',
    svc: ETP_LOCAL,
    endpoints: [ep('10.0.0.1:80'), ep('10.0.0.2:80', { isLocal: true }), ep('10.0.0.3:80')],
    cluster: ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'],
    local: ['10.0.0.2:80'],
    all: ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'],
    hasAny: true,
  },
  {
    name: 'externalTrafficPolicy Local: local terminating fallback is merged with remote ready ones',
    svc: ETP_LOCAL,
    endpoints: [
      ep('10.0.0.1:80'),
      ep('10.0.0.2:80', { isLocal: true, ready: false, serving: true, terminating: true }),
      ep('10.0.0.3:80'),
    ],
    cluster: ['10.0.0.1:80', '10.0.0.3:80'],
    local: ['10.0.0.2:80'],
    all: ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'],
    hasAny: true,
  },
  {
    name: 'externalTrafficPolicy Local + topology: a local endpoint hinted elsewhere is still reachable',
    svc: ETP_LOCAL,
    endpoints: [
      ep('10.0.0.1:80', { zoneHints: ['zone-a'] }),
      ep('10.0.0.2:80', { isLocal: true, zoneHints: ['zone-b'] }),
      ep('10.0.0.3:80', { zoneHints: ['zone-b'] }),
    ],
    cluster: ['10.0.0.1:80'],
    local: ['10.0.0.2:80'],
    all: ['10.0.0.1:80', '10.0.0.2:80'],
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'externalTrafficPolicy Local, no local endpoints: cluster only',
    svc: ETP_LOCAL,
    endpoints: [ep('10.0.0.1:80'), ep('10.0.0.3:80')],
    cluster: ['10.0.0.1:80', '10.0.0.3:80'],
    local: [],
    all: ['10.0.0.1:80', '10.0.0.3:80'],
    hasAny: true,
  },
  {
    name: 'externalTrafficPolicy Local, no ready anywhere: both fall back independently',
    svc: ETP_LOCAL,
    endpoints: [
      ep('10.0.0.1:80', { ready: false, serving: true, terminating: true }),
      ep('10.0.0.2:80', { isLocal: true, ready: false, serving: true, terminating: true }),
    ],
    cluster: ['10.0.0.1:80', '10.0.0.2:80'],
    local: ['10.0.0.2:80'],
    all: ['10.0.0.1:80', '10.0.0.2:80'],
    hasAny: true,
  },
  {
    name: 'IPv6 endpoints sort by their bracketed string',
    svc: ETP_LOCAL,
    endpoints: [
      ep('[fd00::10]:80', { zoneHints: ['zone-a'] }),
      ep('[fd00::2]:80', { isLocal: true, zoneHints: ['zone-b'] }),
    ],
    cluster: ['[fd00::10]:80'],
    local: ['[fd00::2]:80'],
    all: ['[fd00::10]:80', '[fd00::2]:80'],
    hasAny: true,
  },
];

describe('categorizeEndpoints follows kube-proxy CategorizeEndpoints', () => {
  it.each(cases)('$name', (c) => {
    const result = categorizeEndpoints(c.endpoints, c.svc, c.node ?? NODE, c.options ?? {});
    const names = (list: readonly Endpoint[]) => list.map((e) => e.endpoint);
    expect({
      cluster: names(result.clusterEndpoints),
      local: names(result.localEndpoints),
      all: names(result.allReachableEndpoints),
      hasAny: result.hasAnyEndpoints,
    }).toEqual({ cluster: c.cluster, local: c.local, all: c.all, hasAny: c.hasAny });
    if (c.mode !== undefined) expect(result.topologyMode).toBe(c.mode);
  });

  it('uses only ready endpoints to decide the topology mode', () => {
    const eps = [
      ep('10.0.0.1:80', { zoneHints: ['zone-a'] }),
      ep('10.0.0.2:80', { ready: false, serving: false }),
    ];
    expect(topologyModeFromHints(eps, NODE)).toBe('PreferSameZone');
    expect(topologyModeFromHints([], NODE)).toBe('');
  });
});

/**
 * `nodeagent-proxy trace`: the outcome printed is the backend tracer's answer for the rendered
 * rules (endpoints, REJECT for no endpoints, DROP outside source ranges, masquerade flags), as
 * text and as `--json`.
 */
import { renderIptables, tracePacket as traceIptables } from '@nodeagent/iptables';
import { planIpvs, traceIpvs } from '@nodeagent/ipvs';
import { renderNftables, tracePacket as traceNftables } from '@nodeagent/nftables';
import { describe, expect, it } from 'vitest';
import {
  BASE_ARGS,
  CLUSTER_YAML,
  DETECTOR,
  LB_JSON,
  NODE_IP,
  referenceSnapshots,
  runCli,
} from './cli-fixtures.js';

const { v4 } = referenceSnapshots([CLUSTER_YAML, LB_JSON]);

interface Case {
  name: string;
  src: string;
  dst: string;
  port: number;
  proto?: 'udp' | 'tcp';
  outcome: string;
  endpoints: string[];
  masquerade: boolean;
  /** IPVS answers differently (one virtual server per address, no pod short-circuit). */
  ipvsEndpoints?: string[];
}

// kube-proxy's expectations (its packet-flow test conventions), the same for all three backends.
const CASES: Case[] = [
  {
    name: 'pod to ClusterIP: both endpoints, no masquerade',
    src: '10.100.1.5',
    dst: '172.30.0.10',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.100.1.2:8080', '10.100.2.2:8080'],
    masquerade: false,
  },
  {
    name: 'non-pod source to ClusterIP: masqueraded',
    src: '192.168.0.9',
    dst: '172.30.0.10',
    port: 80,
    outcome: 'endpoints',
    endpoints: ['10.100.1.2:8080', '10.100.2.2:8080'],
    masquerade: true,
  },
  {
    name: 'service without endpoints: REJECT',
    src: '10.100.1.5',
    dst: '172.30.0.11',
    port: 80,
    outcome: 'REJECT',
    endpoints: [],
    masquerade: false,
  },
  {
    name: 'external client to NodePort (Cluster policy): masqueraded',
    src: '203.0.113.2',
    dst: NODE_IP,
    port: 30080,
    outcome: 'endpoints',
    endpoints: ['10.100.2.2:8080'],
    masquerade: true,
  },
  {
    name: 'allowed client to LB IP (Local policy): only the local endpoint, source kept',
    src: '203.0.113.2',
    dst: '1.2.3.4',
    port: 443,
    outcome: 'endpoints',
    endpoints: ['10.100.1.3:8443'],
    masquerade: false,
  },
  {
    name: 'client outside loadBalancerSourceRanges: DROP',
    src: '203.0.113.130',
    dst: '1.2.3.4',
    port: 443,
    outcome: 'DROP',
    endpoints: [],
    masquerade: false,
  },
  {
    name: 'pod to LB IP outside its source ranges: DROP (ranges apply to pods too)',
    src: '10.100.1.5',
    dst: '1.2.3.4',
    port: 443,
    outcome: 'DROP',
    endpoints: [],
    masquerade: false,
  },
  {
    name: 'pod to the LB NodePort (Local policy): short-circuited to all cluster endpoints',
    src: '10.100.1.5',
    dst: NODE_IP,
    port: 30443,
    outcome: 'endpoints',
    endpoints: ['10.100.1.3:8443', '10.100.2.3:8443'],
    masquerade: false,
    ipvsEndpoints: ['10.100.1.3:8443'],
  },
];

function args(backend: string, c: Pick<Case, 'src' | 'dst' | 'port' | 'proto'>): string[] {
  return [
    'trace',
    '-b',
    backend,
    ...BASE_ARGS,
    '--src',
    c.src,
    '--dst',
    c.dst,
    '--port',
    String(c.port),
    ...(c.proto ? ['--proto', c.proto] : []),
  ];
}

function libraryTrace(backend: string, c: Case) {
  const pkt = {
    sourceIP: c.src,
    destIP: c.dst,
    destPort: c.port,
    protocol: 'TCP' as const,
    nodeIPs: [NODE_IP],
  };
  if (backend === 'iptables') return traceIptables(renderIptables(v4, { localDetector: DETECTOR }), pkt);
  if (backend === 'nftables') return traceNftables(renderNftables(v4, { localDetector: DETECTOR }), pkt);
  return traceIpvs(planIpvs(v4, { localDetector: DETECTOR }), pkt);
}

describe.each(['iptables', 'nftables', 'ipvs'])('trace --backend %s', (backend) => {
  it.each(CASES)('$name (--json)', async (c) => {
    const r = await runCli([...args(backend, c), '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.endsWith('\n')).toBe(true);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toEqual({
      backend,
      packet: { sourceIP: c.src, destIP: c.dst, destPort: c.port, protocol: 'TCP' },
      outcome: c.outcome,
      endpoints: backend === 'ipvs' ? (c.ipvsEndpoints ?? c.endpoints) : c.endpoints,
      masquerade: c.masquerade,
    });
    const lib = libraryTrace(backend, c);
    expect({ outcome: out.outcome, endpoints: out.endpoints, masquerade: out.masquerade }).toEqual({
      outcome: lib.outcome,
      endpoints: lib.endpoints,
      masquerade: lib.masquerade,
    });
  });
});

describe('trace text output', () => {
  it('prints packet, outcome, endpoints and masquerade on labelled lines', async () => {
    const r = await runCli(args('iptables', CASES[1]!));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        'packet:     tcp 192.168.0.9 -> 172.30.0.10:80 (iptables)',
        'outcome:    endpoints - DNAT to a service endpoint',
        'endpoints:  10.100.1.2:8080, 10.100.2.2:8080',
        'masquerade: yes',
        '',
      ].join('\n'),
    );
  });

  it('says REJECT and (none) for a service without endpoints', async () => {
    const r = await runCli(args('nftables', CASES[2]!));
    expect(r.stdout).toContain('outcome:    REJECT - rejected at once');
    expect(r.stdout).toContain('endpoints:  (none)');
    expect(r.stdout).toContain('masquerade: no');
  });

  it('-v lists the matched rules (iptables), in text and JSON', async () => {
    const r = await runCli([...args('iptables', CASES[0]!), '-v']);
    expect(r.stdout).toMatch(
      /matched rules:\n {2}-A KUBE-SERVICES -m comment --comment "ns1\/web:http cluster IP"/,
    );
    expect(r.stdout).toContain('-j DNAT --to-destination 10.100.2.2:8080');
    const j = JSON.parse((await runCli([...args('iptables', CASES[0]!), '-v', '--json'])).stdout) as {
      matchedRules: string[];
    };
    expect(j.matchedRules.length).toBeGreaterThan(2);
  });

  it('a packet no rule matches is untouched; UDP to a TCP service port too (iptables)', async () => {
    const other = await runCli(args('iptables', { src: '10.100.1.5', dst: '8.8.8.8', port: 53 }));
    expect(other.stdout).toContain('outcome:    untouched');
    const udp = await runCli([...args('iptables', { ...CASES[0]!, proto: 'udp' }), '--json']);
    expect(JSON.parse(udp.stdout)).toMatchObject({ outcome: 'untouched', packet: { protocol: 'UDP' } });
  });

  it('IPv6 packets trace through the IPv6 snapshot (family from --dst)', async () => {
    const yaml = `apiVersion: v1
kind: Service
metadata: { namespace: ns6, name: web6 }
spec: { ipFamilies: [IPv6], clusterIP: 'fd00:30::10', ports: [{ name: http, port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { namespace: ns6, name: web6-1, labels: { kubernetes.io/service-name: web6 } }
addressType: IPv6
ports: [{ name: http, port: 8080 }]
endpoints: [{ addresses: ['fd00:100::2'] }]
`;
    for (const backend of ['iptables', 'nftables', 'ipvs']) {
      const r = await runCli(
        [
          'trace',
          '-b',
          backend,
          '-f',
          'v6.yaml',
          '--node-name',
          'n',
          '--node-ip',
          `${NODE_IP},fd00::2`,
          '--src',
          'fd00:200::5',
          '--dst',
          'fd00:30::10',
          '--port',
          '80',
        ],
        { files: { 'v6.yaml': yaml } },
      );
      expect(r.stderr, backend).toBe('');
      expect(r.stdout, backend).toContain('packet:     tcp fd00:200::5 -> [fd00:30::10]:80');
      expect(r.stdout, backend).toContain('endpoints:  [fd00:100::2]:8080');
    }
  });
});

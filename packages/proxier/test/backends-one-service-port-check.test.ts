/**
 * The service port is checked once, in proxy-state: the three backends skip the same bad port
 * with the same `InvalidServicePortError` (same problems, every one listed) and keep the rest.
 */
import { InvalidIPError } from '@nodeagent/core';
import {
  renderIptablesRuleset,
  restoreText,
  SnapshotAdapter,
  tracePacket as traceIptables,
} from '@nodeagent/iptables';
import { planIpvs, traceIpvs } from '@nodeagent/ipvs';
import { renderNftables, renderNftablesRuleset, tracePacket as traceNftables } from '@nodeagent/nftables';
import { InvalidServicePortError, type ProxySnapshot, type ServicePortInfo } from '@nodeagent/proxy-state';
import { testCluster, testEndpointSlice, testService } from '@nodeagent/proxy-state/testing';
import { describe, expect, it } from 'vitest';

const p80 = [{ name: 'p80', port: 80 }];
const { v4: base } = testCluster(
  {
    services: [
      testService('ns1', 'good', { clusterIP: '172.30.0.41', ports: p80 }),
      testService('ns2', 'bad', { clusterIP: '172.30.0.42', ports: p80 }),
    ],
    slices: [
      testEndpointSlice('ns1', 'good', p80, [{ ip: '10.180.0.1' }]),
      testEndpointSlice('ns2', 'bad', p80, [{ ip: '10.180.0.2' }]),
    ],
  },
  { nodeName: 'node-a', nodeIPs: ['192.168.0.2'] },
);

/** A hand-built snapshot whose `ns2/bad:p80` carries fields proxy-state would never produce. */
function tampered(change: Partial<Record<keyof ServicePortInfo, unknown>>): ProxySnapshot {
  const services = new Map(base.services);
  services.set('ns2/bad:p80', { ...base.services.get('ns2/bad:p80')!, ...change } as ServicePortInfo);
  return { ...base, services, categorize: (k) => base.categorize(k) };
}

function portErrors(errors: readonly unknown[]): { name: string; problems: readonly string[] }[] {
  return errors
    .filter((e): e is InvalidServicePortError => e instanceof InvalidServicePortError)
    .map((e) => ({ name: e.servicePortName, problems: e.problems }));
}

describe('one service port check for every backend', () => {
  const cases: [string, Partial<Record<keyof ServicePortInfo, unknown>>][] = [
    ['invalid cluster IP and port', { clusterIP: '172.30.0.999', port: 70000 }],
    ['other-family external IP', { externalIPs: ['fd00::1'] }],
    ['unknown protocol', { protocol: 'ICMP' }],
    ['affinity timeout', { sessionAffinityClientIP: true, stickyMaxAgeSeconds: 86_401 }],
  ];
  it.each(cases)('%s: the same error from iptables, nftables and IPVS', (_n, change) => {
    const snap = tampered(change);
    const iptables = renderIptablesRuleset(new SnapshotAdapter().servicePorts(snap));
    const nft = renderNftablesRuleset(snap);
    const ipvs = planIpvs(snap);
    const expected = portErrors(iptables.errors);
    expect(expected).toHaveLength(1);
    expect(expected[0]!.name).toBe('ns2/bad:p80');
    expect(portErrors(nft.errors)).toEqual(expected);
    expect(portErrors(ipvs.errors)).toEqual(expected);
    // The good port is still programmed by each.
    expect(ipvs.virtualServers.map((v) => v.servicePort)).toContain('ns1/good:p80');
    expect(nft.errors.map((e) => e.servicePortName)).not.toContain('ns1/good:p80');
  });

  it('lists every problem, not just the first', () => {
    const snap = tampered({ clusterIP: '172.30.0.999', port: 70000 });
    expect(portErrors(planIpvs(snap).errors)[0]!.problems).toEqual([
      'port 70000 is out of range 1-65535',
      'cluster IP "172.30.0.999" is not an IP address',
    ]);
  });
});

describe('every tracer refuses a bad packet address with the one InvalidIPError', () => {
  const iptables = restoreText(renderIptablesRuleset(new SnapshotAdapter().servicePorts(base)));
  const nft = renderNftables(base);
  const ipvs = planIpvs(base);
  const tracers: [string, (p: { sourceIP: string; destIP: string; destPort: number }) => unknown][] = [
    ['iptables', (p) => traceIptables(iptables, p)],
    ['nftables', (p) => traceNftables(nft, p)],
    ['ipvs', (p) => traceIpvs(ipvs, p)],
  ];
  it.each(tracers)('%s', (_n, trace) => {
    expect(() => trace({ sourceIP: '10.0.0.1', destIP: '172.30.0.41', destPort: 80 })).not.toThrow();
    for (const [packet, field, input] of [
      [{ sourceIP: 'fe80::1%eth0', destIP: '172.30.0.41', destPort: 80 }, 'source', 'fe80::1%eth0'],
      [{ sourceIP: '10.0.0.1', destIP: '172.30.0.999', destPort: 80 }, 'destination', '172.30.0.999'],
    ] as const) {
      let error: unknown;
      try {
        trace(packet);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InvalidIPError);
      expect((error as InvalidIPError).field).toBe(field);
      expect((error as InvalidIPError).input).toBe(input);
    }
  });
});

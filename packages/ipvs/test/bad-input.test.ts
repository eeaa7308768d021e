import { InvalidOptionsError } from '@nodeagent/core';
/** Invalid objects in a snapshot are skipped with a typed error; everything else is planned. */
import {
  type Endpoint,
  InvalidServicePortError,
  type ProxySnapshot,
  type ServicePortInfo,
} from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import { InvalidEndpointError, planIpvs, VirtualServerConflictError } from '../src/index.js';
import { slice, snapshot, svc } from './helpers.js';

const p80 = [{ name: 'p80', port: 80 }];
const base = snapshot({
  services: [
    svc('ns1', 'good', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }),
    svc('ns2', 'bad', { clusterIP: '172.30.0.42', ports: [{ name: 'p80', port: 80 }] }),
    svc('ns3', 'twin', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }),
  ],
  slices: [
    slice('ns1', 'good', p80, [{ ip: '10.180.0.1' }]),
    slice('ns2', 'bad', p80, [{ ip: '10.180.0.2' }]),
    slice('ns3', 'twin', p80, [{ ip: '10.180.0.3' }]),
  ],
});

/** The snapshot with one service port or its endpoints replaced (as a hand-built snapshot could be). */
function tamper(
  key: string,
  change: Partial<Record<keyof ServicePortInfo, unknown>>,
  eps?: Partial<Endpoint>[],
): ProxySnapshot {
  const services = new Map(base.services);
  services.set(key, { ...base.services.get(key)!, ...change } as ServicePortInfo);
  const endpoints = new Map(base.endpoints);
  if (eps) endpoints.set(key, base.endpoints.get(key)!.map((e, i) => ({ ...e, ...eps[i] })) as Endpoint[]);
  return { ...base, services, endpoints, categorize: (k) => base.categorize(k) };
}

describe('bad input isolation', () => {
  const cases: [string, Partial<Record<keyof ServicePortInfo, unknown>>, RegExp][] = [
    ['invalid cluster IP', { clusterIP: '172.30.0.999' }, /cluster IP/],
    ['other-family cluster IP', { clusterIP: 'fd00::1' }, /IPv4/],
    ['port out of range', { port: 70000 }, /port 70000/],
    ['unknown protocol', { protocol: 'ICMP' }, /protocol "ICMP"/],
    ['bad external IP', { externalIPs: ['1.2.3.4\n-C'] }, /external IP/],
    [
      'bad source range',
      { loadBalancerVIPs: ['1.2.3.4'], loadBalancerSourceRanges: ['10.0.0.0/99'] },
      /source range/,
    ],
    ['bad node port', { nodePort: -1 }, /nodePort/],
    ['bad affinity timeout', { sessionAffinityClientIP: true, stickyMaxAgeSeconds: 0 }, /timeout/],
  ];
  for (const [name, change, message] of cases) {
    it(`${name}: that service port is skipped, the others are planned`, () => {
      const p = planIpvs(tamper('ns2/bad:p80', change));
      expect(p.errors.filter((e) => e instanceof InvalidServicePortError).map((e) => e.message)).toEqual([
        expect.stringMatching(message),
      ]);
      expect((p.errors[0] as InvalidServicePortError).servicePortName).toBe('ns2/bad:p80');
      expect(p.virtualServers.map((v) => v.servicePort)).toEqual(['ns1/good:p80']);
      expect(p.boundAddresses).toEqual(['172.30.0.41']);
    });
  }

  it('a bad endpoint is skipped; the service keeps its other endpoints', () => {
    const p = planIpvs(tamper('ns2/bad:p80', {}, [{ ip: '10.180.0.2 ; reboot' }]));
    expect(p.errors.map((e) => e.constructor)).toEqual([InvalidEndpointError, VirtualServerConflictError]);
    const bad = p.virtualServers.find((v) => v.servicePort === 'ns2/bad:p80')!;
    expect(bad.realServers).toEqual([]);
  });

  it('a virtual server claimed twice stays with the first service port', () => {
    const p = planIpvs(base);
    expect(p.errors).toEqual([expect.any(VirtualServerConflictError)]);
    const e = p.errors[0] as VirtualServerConflictError;
    expect([e.virtualServer, e.owner, e.servicePort]).toEqual([
      '172.30.0.41:80/TCP',
      'ns1/good:p80',
      'ns3/twin:p80',
    ]);
    expect(p.virtualServers.find((v) => v.address === '172.30.0.41')!.realServers).toEqual([
      { address: '10.180.0.1', port: 80, weight: 1 },
    ]);
  });

  it('unusable options are refused', () => {
    expect(() => planIpvs(base, { scheduler: 'rr -C' })).toThrow(InvalidOptionsError);
    expect(() => planIpvs(base, { masqueradeBit: 32 })).toThrow(InvalidOptionsError);
    expect(() => planIpvs(base, { nodePortIPs: ['fd00::1'] })).toThrow(InvalidOptionsError);
    expect(() =>
      planIpvs(base, { localDetector: { mode: 'BridgeInterface', interfaceName: 'br0 -j ACCEPT' } }),
    ).toThrow(InvalidOptionsError);
  });
});

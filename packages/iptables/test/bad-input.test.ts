import { InvalidOptionsError } from '@nodeagent/core';
import { InvalidServicePortError } from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import { IptablesRenderer, type IptablesServicePort, restoreText, tracePacket } from '../src/index.js';
import { FakeIptablesExecutor } from '../src/testing.js';

const good: IptablesServicePort = {
  namespace: 'ns1',
  name: 'good',
  portName: 'p80',
  protocol: 'TCP',
  clusterIP: '172.30.0.41',
  port: 80,
  clusterEndpoints: [{ ip: '10.0.1.1', port: 80 }],
  localEndpoints: [],
  hasEndpoints: true,
};

const bad: [string, Partial<IptablesServicePort> | Record<string, unknown>, RegExp][] = [
  ['invalid cluster IP', { clusterIP: '172.30.0.300' }, /cluster IP "172.30.0.300" is not an IP address/],
  ['wrong family cluster IP', { clusterIP: 'fd00::1' }, /cluster IP fd00::1 is not IPv4/],
  ['port out of range', { port: 70000 }, /port 70000 is out of range/],
  ['node port out of range', { nodePort: -1 }, /nodePort -1 is out of range/],
  ['unknown protocol', { protocol: 'ICMP' }, /unknown protocol "ICMP"/],
  ['invalid external IP', { externalIPs: ['not-an-ip'] }, /external IP "not-an-ip"/],
  [
    'invalid source range',
    { loadBalancerVIPs: ['1.2.3.4'], loadBalancerSourceRanges: ['1.2.3.4/99'] },
    /loadBalancerSourceRange/,
  ],
  ['invalid endpoint', { clusterEndpoints: [{ ip: '10.0.1.x', port: 80 }] }, /endpoint IP "10.0.1.x"/],
  [
    'endpoint port out of range',
    { clusterEndpoints: [{ ip: '10.0.1.1', port: 0 }] },
    /endpoint 10.0.1.1 port 0/,
  ],
  ['affinity timeout out of range', { sessionAffinityTimeoutSeconds: 0 }, /session affinity timeout/],
];

describe('bad input is isolated per service port', () => {
  it.each(bad)(
    '%s: that port is skipped with a typed error, the others are programmed',
    (_n, patch, message) => {
      const broken = { ...good, name: 'broken', clusterIP: '172.30.0.42', ...patch } as IptablesServicePort;
      const rs = new IptablesRenderer().render([broken, good]);
      expect(rs.errors).toHaveLength(1);
      expect(rs.errors[0]).toBeInstanceOf(InvalidServicePortError);
      expect(rs.errors[0]!.servicePortName).toBe('ns1/broken:p80');
      expect(rs.errors[0]!.message).toMatch(message);
      const text = restoreText(rs);
      expect(text).not.toContain('ns1/broken');
      expect(
        tracePacket(text, { sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80 }).endpoints,
      ).toEqual(['10.0.1.1:80']);
    },
  );

  it('normalises sloppy API addresses as kube-proxy does', () => {
    const rs = new IptablesRenderer().render([
      {
        ...good,
        clusterIP: '172.30.0.041',
        loadBalancerVIPs: ['1.2.3.4'],
        loadBalancerSourceRanges: [' 203.0.113.000/025 '],
      },
    ]);
    const text = restoreText(rs);
    expect(text).toContain('-d 172.30.0.41 --dport 80');
    expect(text).toContain('-s 203.0.113.0/25 -j KUBE-EXT-');
  });

  it('rejects unusable options with a typed error', () => {
    expect(() => new IptablesRenderer({ masqueradeBit: 40 })).toThrow(InvalidOptionsError);
    expect(() => new IptablesRenderer({ localDetector: { mode: 'ClusterCIDR', cidr: 'fd00::/64' } })).toThrow(
      /not an IPv4 CIDR/,
    );
    expect(
      () => new IptablesRenderer({ localDetector: { mode: 'BridgeInterface', interfaceName: 'a b' } }),
    ).toThrow(/interface name/);
  });

  it('the ruleset with a skipped port still applies cleanly', async () => {
    const ipt = new FakeIptablesExecutor();
    const rs = new IptablesRenderer().render([{ ...good, name: 'x', clusterIP: 'bogus' }, good]);
    await ipt.restore(restoreText(rs));
    expect(ipt.chains('nat').filter((c) => c.startsWith('KUBE-SVC-'))).toEqual(['KUBE-SVC-JERYVBCHMXIFBHVC']);
    expect(rs.errors.map((e) => e.servicePortName)).toEqual(['ns1/x:p80']);
  });
});

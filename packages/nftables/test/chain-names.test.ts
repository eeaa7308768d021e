import { describe, expect, it } from 'vitest';
import {
  affinitySetName,
  endpointChainName,
  endpointChainNameBase,
  externalChainName,
  hashAndTruncate,
  isServiceChainName,
  serviceChainName,
} from '../src/index.js';

const p80 = { namespace: 'ns1', name: 'svc1', port: 'p80', protocol: 'TCP' as const };

describe('kube-proxy nftables chain names', () => {
  it('matches the verified service and endpoint examples', () => {
    expect(serviceChainName(p80)).toBe('service-ULMVA6XW-ns1/svc1/tcp/p80');
    expect(endpointChainName(p80, '10.180.0.1:80')).toBe('endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80');
  });

  it('matches further upstream fixture names', () => {
    const p = (ns: string, name: string) => ({ namespace: ns, name, port: 'p80', protocol: 'TCP' as const });
    expect(serviceChainName(p('ns2', 'svc2'))).toBe('service-42NFTM6N-ns2/svc2/tcp/p80');
    expect(externalChainName(p('ns3', 'svc3'))).toBe('external-4AT6LBPK-ns3/svc3/tcp/p80');
    expect(endpointChainName(p('ns4', 'svc4'), '10.180.0.4:80')).toBe(
      'endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80',
    );
    expect(affinitySetName(p('ns5', 'svc5'), '10.180.0.3:80')).toBe(
      'affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80',
    );
  });

  it('replaces IPv6 colons with dots and drops the brackets', () => {
    expect(endpointChainNameBase(p80, '[fd00::1]:8080')).toBe('ns1/svc1/tcp/p80__fd00..1/8080');
    expect(endpointChainName(p80, '[fd00::1]:8080')).toMatch(
      /^endpoint-[A-Z2-7]{8}-ns1\/svc1\/tcp\/p80__fd00\.\.1\/8080$/,
    );
  });

  it('uses an empty port part for unnamed ports', () => {
    expect(serviceChainName({ ...p80, port: '' })).toMatch(/^service-[A-Z2-7]{8}-ns1\/svc1\/tcp\/$/);
  });

  it('truncates long names to 240 characters ending in ...', () => {
    const long = `ns/${'x'.repeat(300)}/tcp/p`;
    const h = hashAndTruncate(long);
    expect(h).toHaveLength(240);
    expect(h.endsWith('...')).toBe(true);
    expect(h.slice(0, 9)).toBe(hashAndTruncate(long).slice(0, 9));
    expect(hashAndTruncate('a'.repeat(231))).toHaveLength(240);
    expect(hashAndTruncate('a'.repeat(232)).endsWith('...')).toBe(true);
  });

  it('recognises service chains by the slash', () => {
    expect(isServiceChainName(serviceChainName(p80))).toBe(true);
    expect(isServiceChainName('services')).toBe(false);
  });
});

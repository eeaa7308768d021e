/**
 * The one IP/CIDR parser against Go's behaviour, which kube-proxy's text comes from:
 * `net.IP.String()` (dotted quad for IPv4 and IPv4-mapped IPv6, RFC 5952 otherwise),
 * `k8s.io/utils/net.ParseIPSloppy` / `ParseCIDRSloppy` (IPv4 leading zeros read as decimal),
 * `net.ParseIP` refusing zones, `net.ParseCIDR` masking to the network, `net.JoinHostPort`.
 */
import {
  cidrContains,
  InvalidIPError,
  ipFamilyOf,
  joinHostPort,
  mustParseCIDR,
  mustParseIP,
  parseCIDR,
  parseCIDROrHostValue,
  parseIP,
} from '@nodeagent/core';
import { describe, expect, it } from 'vitest';

describe('canonical text, as Go net.IP.String() prints it', () => {
  it.each([
    // RFC 5952 §4.2.1/§4.2.3: compress the longest run of zero groups, the first one on a tie.
    ['0:0:0:0:0:0:0:1', '::1'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['1:0:0:2:0:0:3:4', '1::2:0:0:3:4'],
    // §4.2.2: a single zero group is never shortened to '::'.
    ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
    ['1:0:2:3:4:5:6:7', '1:0:2:3:4:5:6:7'],
    // §4.1 leading zeros dropped, §4.3 lower case.
    ['FD00:0000::00A', 'fd00::a'],
    ['2001:DB8::1', '2001:db8::1'],
    // IPv4-mapped IPv6 prints (and counts) as IPv4, as Go's To4() and String().
    ['::ffff:1.2.3.4', '1.2.3.4'],
    ['::FFFF:0102:0304', '1.2.3.4'],
    // IPv4-compatible (not mapped) stays IPv6, its tail in hex as Go prints it.
    ['::1.2.3.4', '::102:304'],
    // ParseIPSloppy: leading zeros are decimal, not octal.
    ['010.000.000.001', '10.0.0.1'],
    ['172.30.0.041', '172.30.0.41'],
  ])('%s → %s', (input, canonical) => {
    expect(parseIP(input)?.ip).toBe(canonical);
  });

  it('reports the family (IPv4-mapped counts as 4)', () => {
    expect(ipFamilyOf('10.0.0.1')).toBe(4);
    expect(ipFamilyOf('::ffff:10.0.0.1')).toBe(4);
    expect(ipFamilyOf('fd00::1')).toBe(6);
    expect(ipFamilyOf('fd00::1%eth0')).toBeNull();
  });

  it.each([
    'fe80::1%eth0', // net.ParseIP refuses zones (only netip.ParseAddr keeps them)
    '10.0.0.1%eth0',
    '1::2::3', // two ellipses
    '1:2:3:4:5:6:7:8:9', // nine groups
    '::1:2:3:4:5:6:7:8', // '::' standing for no group
    '12345::', // a group of five digits
    '::1.2.3.4:5', // an IPv4 tail not at the end
    '::ffff:1.2.3.256',
    '1.2.3',
    '1.2.3.4.5',
    ' 10.0.0.1',
    '',
    '[::1]',
  ])('refuses %j', (input) => {
    expect(parseIP(input)).toBeNull();
    expect(() => mustParseIP(input, 'spec.clusterIP')).toThrow(InvalidIPError);
  });

  it('the typed error names the field and the input', () => {
    try {
      mustParseIP('fe80::1%eth0', 'spec.externalIPs[0]');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidIPError);
      expect(e).toBeInstanceOf(TypeError);
      const err = e as InvalidIPError;
      expect(err.name).toBe('InvalidIPError');
      expect(err.input).toBe('fe80::1%eth0');
      expect(err.field).toBe('spec.externalIPs[0]');
      expect(err.message).toBe('spec.externalIPs[0] "fe80::1%eth0" is not a valid IP address');
    }
    expect(() => mustParseCIDR('10.0.0.0/33', '--cluster-cidr')).toThrow(
      /^--cluster-cidr "10.0.0.0\/33" is not a valid CIDR/,
    );
    expect(mustParseIP('::ffff:1.2.3.4')).toEqual({ ip: '1.2.3.4', family: 4 });
  });
});

describe('CIDRs, as net.ParseCIDR / ParseCIDRSloppy', () => {
  it.each([
    ['10.0.0.5/8', '10.0.0.0/8'], // masked to the network, as IPNet
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['255.255.255.255/32', '255.255.255.255/32'],
    ['10.1.2.3/31', '10.1.2.2/31'],
    ['::/0', '::/0'],
    ['fd00::1/128', 'fd00::1/128'],
    ['FD00:0:0:1::5/64', 'fd00:0:0:1::/64'],
    ['2001:db8:0:0:1:0:0:1/127', '2001:db8:0:0:1::/127'], // the longer zero run wins
    ['203.0.113.000/025', '203.0.113.0/25'], // sloppy leading zeros in address and prefix
  ])('%s → %s', (input, canonical) => {
    expect(parseCIDR(input)?.cidr).toBe(canonical);
  });

  it.each([
    '10.0.0.0/33',
    'fd00::/129',
    '10.0.0.0/',
    '10.0.0.0/-1',
    '10.0.0.0/8/8',
    '10.0.0.0',
    'fe80::%eth0/64',
    '::ffff:1.2.3.0/120', // an IPv4-mapped prefix has no IPv4 meaning here
  ])('refuses %j', (input) => {
    expect(parseCIDR(input)).toBeNull();
  });

  it('contains: by prefix, never across families, false for invalid text', () => {
    expect(cidrContains('10.0.0.0/8', '10.255.255.255')).toBe(true);
    expect(cidrContains('10.0.0.0/8', '11.0.0.0')).toBe(false);
    expect(cidrContains('0.0.0.0/0', '::ffff:192.0.2.1')).toBe(true); // mapped counts as IPv4
    expect(cidrContains('::/0', '192.0.2.1')).toBe(false);
    expect(cidrContains('fd00::/64', 'fd00::ffff:1')).toBe(true);
    expect(cidrContains('fd00::/64', 'fd00:0:0:1::1')).toBe(false);
    expect(cidrContains('10.0.0.0/33', '10.0.0.1')).toBe(false);
    expect(cidrContains('10.0.0.0/8', 'nope')).toBe(false);
  });

  it('a bare address is its host network where tools accept one (ipset, nft, iptables -s)', () => {
    expect(parseCIDROrHostValue('10.0.0.1')).toEqual({ family: 4, base: 0x0a000001n, prefixLength: 32 });
    expect(parseCIDROrHostValue('fd00::1')?.prefixLength).toBe(128);
    expect(parseCIDROrHostValue('10.0.0.9/24')?.base).toBe(0x0a000000n);
    expect(parseCIDROrHostValue('10.0.0.1%eth0')).toBeNull();
  });
});

describe('joinHostPort, as net.JoinHostPort', () => {
  it('brackets any host with a colon', () => {
    expect(joinHostPort('10.0.0.1', 80)).toBe('10.0.0.1:80');
    expect(joinHostPort('fd00::1', 80)).toBe('[fd00::1]:80');
    expect(joinHostPort('::', '10256')).toBe('[::]:10256');
    expect(joinHostPort('fe80::1%eth0', 80)).toBe('[fe80::1%eth0]:80');
    expect(joinHostPort('localhost', 8080)).toBe('localhost:8080');
    expect(joinHostPort('', 10249)).toBe(':10249');
  });
});

import { parseCIDR, parseIP } from '@nodeagent/core';
import { describe, expect, it } from 'vitest';
import { endpointString, servicePortNameString } from '../src/index.js';

describe('parseIP normalises like Go ParseIPSloppy + String()', () => {
  it.each([
    ['10.0.0.1', '10.0.0.1', 4],
    ['172.30.0.041', '172.30.0.41', 4],
    ['010.000.000.001', '10.0.0.1', 4],
    ['FD00::0001', 'fd00::1', 6],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1', 6],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1', 6],
    ['::', '::', 6],
    ['::1', '::1', 6],
    ['1::', '1::', 6],
    ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0', 6],
    ['::ffff:10.1.2.3', '10.1.2.3', 4],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221', 6],
  ])('%s → %s (IPv%s)', (text, ip, family) => {
    expect(parseIP(text)).toEqual({ ip, family });
  });

  it.each([
    '',
    '10.0.0',
    '10.0.0.256',
    '10.0.0.1.2',
    '1.2.3.-1',
    'fd00::1%eth0',
    '1:2:3:4:5:6:7:8:9',
    '1::2::3',
    ':1:2:3:4:5:6:7',
    '12345::',
    'g::1',
    'None',
    ' 10.0.0.1',
  ])('refuses %j', (text) => {
    expect(parseIP(text)).toBeNull();
  });
});

describe('parseCIDR masks to the network', () => {
  it.each([
    ['203.0.113.000/025', '203.0.113.0/25', 4],
    ['10.0.0.5/8', '10.0.0.0/8', 4],
    ['0.0.0.0/0', '0.0.0.0/0', 4],
    ['192.168.1.1/32', '192.168.1.1/32', 4],
    ['fd00:1:2:3::5/64', 'fd00:1:2:3::/64', 6],
    ['2001:db8::/32', '2001:db8::/32', 6],
  ])('%s → %s', (text, cidr, family) => {
    expect(parseCIDR(text)).toEqual({ cidr, family });
  });

  it.each(['10.0.0.0', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/-1', '10.0.0.0/a', 'x/8'])(
    'refuses %j',
    (text) => {
      expect(parseCIDR(text)).toBeNull();
    },
  );
});

describe('names as kube-proxy prints them', () => {
  it('omits the colon for unnamed ports', () => {
    expect(servicePortNameString({ namespace: 'ns1', name: 'svc1', port: 'p80', protocol: 'TCP' })).toBe(
      'ns1/svc1:p80',
    );
    expect(servicePortNameString({ namespace: 'ns1', name: 'svc1', port: '', protocol: 'UDP' })).toBe(
      'ns1/svc1',
    );
  });

  it('brackets IPv6 endpoints', () => {
    expect(endpointString('10.180.0.1', 80)).toBe('10.180.0.1:80');
    expect(endpointString('fd00::1', 8080)).toBe('[fd00::1]:8080');
  });
});

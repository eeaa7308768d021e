import {
  cidrValueContains,
  formatIPValue,
  isLoopbackIP,
  parseCIDR,
  parseCIDRValue,
  parseIP,
  parseIPValue,
} from '@nodeagent/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

describe('parseIPValue', () => {
  it('reads addresses as numbers with parseIP rules', () => {
    expect(parseIPValue('10.0.0.1')).toEqual({ family: 4, value: 0x0a000001n });
    expect(parseIPValue('172.30.0.041')).toEqual({ family: 4, value: 0xac1e0029n });
    expect(parseIPValue('fd00::1')).toEqual({ family: 6, value: (0xfd00n << 112n) | 1n });
    expect(parseIPValue('::ffff:1.2.3.4')).toEqual({ family: 4, value: 0x01020304n });
    expect(parseIPValue('fd00::1%eth0')).toBeNull();
    expect(parseIPValue('10.0.0.256')).toBeNull();
  });

  it('keeps IPv4-mapped addresses as IPv6 when asked', () => {
    expect(parseIPValue('::ffff:1.2.3.4', { keepV4Mapped: true })).toEqual({
      family: 6,
      value: 0xffff01020304n,
    });
    expect(formatIPValue({ family: 6, value: 0xffff01020304n })).toBe('::ffff:102:304');
  });

  it('formats back to parseIP canonical text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (text) => {
        const p = parseIP(text);
        const v = parseIPValue(text);
        expect(v === null).toBe(p === null);
        if (p !== null && v !== null) expect(formatIPValue(v)).toBe(p.ip);
      }),
    );
  });
});

describe('parseCIDRValue', () => {
  it('masks to the network like parseCIDR', () => {
    expect(parseCIDRValue('10.1.2.3/8')).toEqual({ family: 4, base: 0x0a000000n, prefixLength: 8 });
    expect(parseCIDRValue('203.0.113.000/025')).toEqual({ family: 4, base: 0xcb007100n, prefixLength: 25 });
    expect(parseCIDRValue('fd00::5/64')).toEqual({ family: 6, base: 0xfd00n << 112n, prefixLength: 64 });
    expect(parseCIDRValue('10.0.0.0/33')).toBeNull();
    expect(parseCIDRValue('10.0.0.0')).toBeNull();
  });

  it('refuses IPv4-mapped CIDRs unless asked to keep them', () => {
    expect(parseCIDR('::ffff:1.2.3.0/120')).toBeNull();
    expect(parseCIDRValue('::ffff:1.2.3.0/120')).toBeNull();
    expect(parseCIDRValue('::ffff:1.2.3.9/120', { keepV4Mapped: true })).toEqual({
      family: 6,
      base: 0xffff01020300n,
      prefixLength: 120,
    });
  });

  it('agrees with parseCIDR text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), fc.nat(128), (ip, len) => {
        const text = `${ip}/${len}`;
        const c = parseCIDR(text);
        const v = parseCIDRValue(text);
        expect(v === null).toBe(c === null);
        if (c !== null && v !== null) {
          expect(`${formatIPValue({ family: v.family, value: v.base })}/${v.prefixLength}`).toBe(c.cidr);
        }
      }),
    );
  });
});

describe('cidrValueContains', () => {
  const net = (t: string) => parseCIDRValue(t)!;
  const ip = (t: string) => parseIPValue(t)!;
  it('checks the prefix and never matches across families', () => {
    expect(cidrValueContains(net('10.0.0.0/8'), ip('10.255.0.1'))).toBe(true);
    expect(cidrValueContains(net('10.0.0.0/8'), ip('11.0.0.1'))).toBe(false);
    expect(cidrValueContains(net('0.0.0.0/0'), ip('1.2.3.4'))).toBe(true);
    expect(cidrValueContains(net('0.0.0.0/0'), ip('::1'))).toBe(false);
    expect(cidrValueContains(net('::/0'), ip('::1'))).toBe(true);
    expect(cidrValueContains(net('fd00::/64'), ip('fd00::1:2'))).toBe(true);
    expect(cidrValueContains(net('fd00::/64'), ip('fd00:0:0:1::1'))).toBe(false);
  });
});

describe('isLoopbackIP (Go net.IP.IsLoopback)', () => {
  it('is true for 127.0.0.0/8, its IPv4-mapped form and ::1 only', () => {
    for (const ip of ['127.0.0.1', '127.255.255.254', '::ffff:127.0.0.1', '::1'])
      expect(isLoopbackIP(ip), ip).toBe(true);
    for (const ip of ['128.0.0.1', '10.0.0.1', '::2', '::', '0.0.0.0', 'fe80::1', 'not-an-ip', ''])
      expect(isLoopbackIP(ip), ip).toBe(false);
  });
});

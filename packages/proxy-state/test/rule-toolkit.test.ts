/**
 * The helpers every backend shares: kube-proxy's chain-name hash, the two comment quotings
 * (iptables-restore and nft differ) and the one service port check.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chainNameHash,
  checkEndpoint,
  checkServicePort,
  checkServicePortFields,
  InvalidServicePortError,
  iptablesCommentArg,
  isCleanIptablesComment,
  MAX_IPTABLES_COMMENT_BYTES,
  MAX_NFT_COMMENT_BYTES,
  quoteIptablesComment,
  quoteNftComment,
  type ServicePortInfo,
} from '../src/index.js';
import { testCluster, testService } from '../src/testing.js';

describe('chainNameHash: base32(sha256(input))[:n]', () => {
  // Chain names from kube-proxy's own tests (pkg/proxy/iptables and pkg/proxy/nftables proxier_test.go).
  it('gives the iptables names upstream expects (16 characters)', () => {
    expect(`KUBE-SVC-${chainNameHash('ns1/svc1:p80tcp', 16)}`).toBe('KUBE-SVC-XPGD46QRK7WJZT7O');
    expect(`KUBE-SEP-${chainNameHash('ns1/svc1:p80tcp10.180.0.1:80', 16)}`).toBe('KUBE-SEP-SXIVWICOYRO3J4NJ');
  });

  it('gives the nftables names upstream expects (8 characters)', () => {
    expect(chainNameHash('ns1/svc1/tcp/p80', 8)).toBe('ULMVA6XW');
    expect(chainNameHash('ns1/svc1/tcp/p80__10.180.0.1/80', 8)).toBe('5OJB2KTY');
  });

  it('is a prefix of the standard base32 of the digest', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(4, 8, 16, 32, 48), (input, n) => {
        const digest = new Uint8Array(createHash('sha256').update(input, 'utf8').digest());
        expect(chainNameHash(input, n)).toBe(base32(digest).slice(0, n));
      }),
      { numRuns: 200 },
    );
  });

  it('refuses lengths that are not a multiple of 4 in 4-48', () => {
    for (const n of [0, 3, 5, 52, 1.5]) expect(() => chainNameHash('x', n)).toThrow(RangeError);
  });
});

/** RFC 4648 base32 without padding, written out bit by bit (the reference for the table-driven one). */
function base32(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const b of bytes) bits += b.toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i + 5 <= bits.length; i += 5) out += alphabet[Number.parseInt(bits.slice(i, i + 5), 2)];
  return out;
}

describe('iptables comments', () => {
  it('keeps kube-proxy bytes for valid names', () => {
    expect(iptablesCommentArg('ns1/svc1:p80')).toBe('ns1/svc1:p80');
    expect(quoteIptablesComment('ns1/svc1:p80 cluster IP')).toBe('"ns1/svc1:p80 cluster IP"');
    expect(isCleanIptablesComment('ns1/svc1:p80 -> 10.180.0.1:80')).toBe(true);
  });

  it('escapes quotes and backslashes, blanks control characters, cuts at 255 bytes', () => {
    expect(quoteIptablesComment('a "b" \\ c\nCOMMIT')).toBe('"a \\"b\\" \\\\ c COMMIT"');
    expect(iptablesCommentArg('two words')).toBe('"two words"');
    const long = quoteIptablesComment('é'.repeat(300));
    expect(Buffer.byteLength(long.slice(1, -1))).toBeLessThanOrEqual(MAX_IPTABLES_COMMENT_BYTES);
    expect(long.slice(1, -1)).toBe('é'.repeat(127));
    expect(isCleanIptablesComment('é'.repeat(200))).toBe(false);
  });
});

describe('nft comments', () => {
  it('has no escapes: quotes become single quotes, control characters spaces, cut at 128 bytes', () => {
    expect(quoteNftComment('ns1/svc1:p80')).toBe('"ns1/svc1:p80"');
    expect(quoteNftComment('a "b"\nc\u0000d\u2028e')).toBe(`"a 'b' c d e"`);
    const long = quoteNftComment('é'.repeat(200));
    expect(Buffer.byteLength(long.slice(1, -1))).toBeLessThanOrEqual(MAX_NFT_COMMENT_BYTES);
    // A surrogate pair is never split.
    expect(quoteNftComment('😀'.repeat(40)).slice(1, -1)).toBe('😀'.repeat(32));
  });
});

describe('the one service port check', () => {
  const { v4 } = testCluster(
    {
      services: [
        testService('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }),
      ],
      slices: [],
    },
    { nodeName: 'node-a', nodeIPs: ['192.168.0.2'] },
  );
  const base = v4.services.get('ns1/svc1:p80')!;

  it('passes what proxy-state builds and returns canonical addresses', () => {
    expect(checkServicePort(base)).toEqual({
      clusterIP: '172.30.0.41',
      externalIPs: [],
      loadBalancerVIPs: [],
      loadBalancerSourceRanges: [],
    });
    expect(
      checkServicePortFields(
        'ns/s:p',
        {
          protocol: 'TCP',
          port: 80,
          clusterIP: '::ffff:10.0.0.1',
          loadBalancerVIPs: ['172.030.0.001'],
          loadBalancerSourceRanges: ['10.0.0.5/8', '192.0.2.7'],
        },
        4,
      ),
    ).toEqual({
      clusterIP: '10.0.0.1',
      externalIPs: [],
      loadBalancerVIPs: ['172.30.0.1'],
      loadBalancerSourceRanges: ['10.0.0.0/8', '192.0.2.7/32'],
    });
  });

  it('keeps IPv4-mapped addresses as IPv6 when asked (the iptables IPv6 ruleset)', () => {
    const c = checkServicePortFields(
      'ns/s:p',
      { protocol: 'TCP', port: 80, clusterIP: '::ffff:1.2.3.4' },
      6,
      {
        keepV4Mapped: true,
      },
    );
    expect(c.clusterIP).toBe('::ffff:102:304');
  });

  it('lists every problem in one typed error naming the service port', () => {
    const bad = {
      ...base,
      protocol: 'ICMP',
      port: 70000,
      nodePort: -1,
      sessionAffinityClientIP: true,
      stickyMaxAgeSeconds: 0,
      clusterIP: 'fd00::1',
      externalIPs: ['1.2.3.4\n-C'],
      loadBalancerSourceRanges: ['10.0.0.0/99', 'fd00::/64'],
    } as unknown as ServicePortInfo;
    let error: unknown;
    try {
      checkServicePort(bad);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidServicePortError);
    const e = error as InvalidServicePortError;
    expect(e.servicePortName).toBe('ns1/svc1:p80');
    expect(e.problems).toEqual([
      'unknown protocol "ICMP" (want TCP, UDP or SCTP)',
      'port 70000 is out of range 1-65535',
      'nodePort -1 is out of range 0-65535',
      'session affinity timeout 0 is out of range 1-86400 s',
      'cluster IP fd00::1 is not IPv4',
      'external IP "1.2.3.4\\n-C" is not an IP address',
      'loadBalancerSourceRange "10.0.0.0/99" is not a valid source range (a CIDR)',
      'loadBalancerSourceRange fd00::/64 is not IPv4',
    ]);
    // Memoised per object: the same error again, the good port unaffected.
    expect(() => checkServicePort(bad)).toThrow(e);
    expect(checkServicePort(base).clusterIP).toBe('172.30.0.41');
    // Checked against another family on request (a table of the other family).
    expect(() => checkServicePort(base, 6)).toThrow(/cluster IP 172.30.0.41 is not IPv6/);
  });

  it('checks endpoints one by one, leaving the decision to the backend', () => {
    expect(checkEndpoint('10.180.0.1', 80, 4)).toEqual({ ip: '10.180.0.1' });
    expect(checkEndpoint('fd00::0001', 80, 6)).toEqual({ ip: 'fd00::1' });
    expect(checkEndpoint('10.180.0.x', 80, 4)).toEqual({
      problem: 'endpoint IP "10.180.0.x" is not an IP address',
    });
    expect(checkEndpoint('fd00::1', 80, 4)).toEqual({ problem: 'endpoint IP fd00::1 is not IPv4' });
    expect(checkEndpoint('10.180.0.1', 0, 4)).toEqual({
      problem: 'endpoint 10.180.0.1 port 0 is out of range 1-65535',
    });
  });
});

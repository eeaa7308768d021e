import { describe, expect, it } from 'vitest';
import {
  computeProbability,
  endpointChainName,
  isServiceChainName,
  portProtoHash,
  serviceClusterChainName,
  serviceExternalChainName,
  serviceFirewallChainName,
  serviceLocalChainName,
} from '../src/index.js';

describe('chain-name hashing (facts §1.2, verified examples)', () => {
  it.each([
    ['ns1/svc1:p80', 'XPGD46QRK7WJZT7O'],
    ['ns2/svc2:p80', 'GNZBNJ2PO5MGZ6GT'],
    ['ns3/svc3:p80', 'X27LE4BHSL4DOUIK'],
    ['ns4/svc4:p80', '4SW47YFZTEDKD3PK'],
    ['ns5/svc5:p80', 'NUKIZ6OKUXPJNT4C'],
    ['ns1/svc1', 'AQI2S6QIMU7PVVRP'],
  ])('%s tcp → %s', (name, hash) => {
    expect(portProtoHash(name, 'tcp')).toBe(hash);
  });

  it('endpoint chains hash name + protocol + endpoint', () => {
    expect(endpointChainName('ns1/svc1:p80', 'tcp', '10.180.0.1:80')).toBe('KUBE-SEP-SXIVWICOYRO3J4NJ');
    expect(endpointChainName('ns2/svc2:p80', 'tcp', '10.180.0.2:80')).toBe('KUBE-SEP-RS4RBKLTHTF2IUXJ');
  });

  it('service chains share one hash under five prefixes, all within iptables’ name limit', () => {
    const names = [
      serviceClusterChainName('ns1/svc1:p80', 'tcp'),
      serviceLocalChainName('ns1/svc1:p80', 'tcp'),
      serviceExternalChainName('ns1/svc1:p80', 'tcp'),
      serviceFirewallChainName('ns1/svc1:p80', 'tcp'),
    ];
    expect(names).toEqual([
      'KUBE-SVC-XPGD46QRK7WJZT7O',
      'KUBE-SVL-XPGD46QRK7WJZT7O',
      'KUBE-EXT-XPGD46QRK7WJZT7O',
      'KUBE-FW-XPGD46QRK7WJZT7O',
    ]);
    for (const n of names) expect(n.length).toBeLessThanOrEqual(28);
    expect(names.every(isServiceChainName)).toBe(true);
    expect(isServiceChainName('KUBE-SERVICES')).toBe(false);
    expect(isServiceChainName('KUBE-SEP-X')).toBe(true);
  });

  it('protocol is part of the hash', () => {
    expect(portProtoHash('ns1/svc1:p80', 'udp')).not.toBe(portProtoHash('ns1/svc1:p80', 'tcp'));
  });
});

describe('computeProbability (Go %0.10f of 1/n)', () => {
  it.each([
    [1, '1.0000000000'],
    [2, '0.5000000000'],
    [3, '0.3333333333'],
    [6, '0.1666666667'],
    [10, '0.1000000000'],
    [1000, '0.0010000000'],
    [100001, '0.0000099999'],
    // An exact tie at the 11th digit: Go rounds half to even, toFixed would round up.
    [2048, '0.0004882812'],
    [4096, '0.0002441406'],
  ])('1/%i → %s', (n, s) => {
    expect(computeProbability(n)).toBe(s);
  });
});

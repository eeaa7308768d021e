import { describe, expect, it } from 'vitest';
import { parseRestoreText, parseRule, RestoreParseError, tracePacket } from '../src/index.js';
import { FakeIptablesExecutor } from '../src/testing.js';

// Lines as kube-proxy's IPVS mode writes them (`@nodeagent/ipvs` renderResidualIptables).
const IPVS_RESIDUAL = `*filter
:KUBE-FORWARD - [0:0]
:KUBE-NODE-PORT - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
:KUBE-SOURCE-RANGES-FIREWALL - [0:0]
:KUBE-IPVS-FILTER - [0:0]
:KUBE-IPVS-OUT-FILTER - [0:0]
-A KUBE-PROXY-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port for load balancer with sourceRange" -m set --match-set KUBE-LOAD-BALANCER-FW dst,dst -j KUBE-SOURCE-RANGES-FIREWALL
-A KUBE-SOURCE-RANGES-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port + source cidr for packet filter purpose" -m set --match-set KUBE-LOAD-BALANCER-SOURCE-CIDR dst,dst,src -j RETURN
-A KUBE-SOURCE-RANGES-FIREWALL -j DROP
-A KUBE-IPVS-OUT-FILTER -s 1.2.3.4 -m ipvs --vaddr 1.2.3.4 --vproto tcp --vport 80 -j DROP
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT
-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT
COMMIT
*nat
:KUBE-SERVICES - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN
-A KUBE-POSTROUTING -m comment --comment "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose" -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE
-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.100.0.0/16 -j KUBE-MARK-MASQ
-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port with externalTrafficPolicy=local" -m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
COMMIT
`;

describe('restore parser: the matches of kube-proxy’s IPVS residual rules', () => {
  it('reads -m set --match-set NAME FLAGS as one match with two values', () => {
    const r = parseRule(
      '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.100.0.0/16 -j KUBE-MARK-MASQ',
    );
    expect(r.modules).toEqual(['set']);
    expect(r.setMatches).toEqual([{ set: 'KUBE-CLUSTER-IP', flags: 'dst,dst', negated: false }]);
    expect(r.params.get('--match-set')).toEqual({ value: 'KUBE-CLUSTER-IP', negated: false });
    // The words after the flags are still parsed as options.
    expect(r.params.get('-s')).toEqual({ value: '10.100.0.0/16', negated: true });
    expect(r.params.get('-j')?.value).toBe('KUBE-MARK-MASQ');
  });

  it('keeps every set match of a rule, negation included', () => {
    const r = parseRule('-A X -m set ! --match-set A src -m set --match-set B dst,dst,src -j ACCEPT');
    expect(r.setMatches).toEqual([
      { set: 'A', flags: 'src', negated: true },
      { set: 'B', flags: 'dst,dst,src', negated: false },
    ]);
    expect(r.params.get('--match-set')).toEqual({ value: 'B', negated: false });
  });

  it('reads physdev flags without a value and the ipvs match', () => {
    const r = parseRule('-A X -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT');
    expect(r.params.get('--physdev-is-in')).toEqual({ value: '', negated: true });
    expect(r.params.get('--src-type')).toEqual({ value: 'LOCAL', negated: true });
    const v = parseRule('-A X -s 1.2.3.4 -m ipvs --vaddr 1.2.3.4 --vproto tcp --vport 80 -j DROP');
    expect([...v.params.keys()]).toEqual(['-s', '--vaddr', '--vproto', '--vport', '-j']);
  });

  it('rejects a set match without its name or direction flags', () => {
    expect(() => parseRule('-A X -m set --match-set KUBE-CLUSTER-IP -j ACCEPT')).toThrow(/--match-set needs/);
    expect(() => parseRule('-A X -m set --match-set KUBE-CLUSTER-IP')).toThrow(/--match-set needs/);
    expect(() => parseRule('-A X -m set --match-set A dst,any -j ACCEPT')).toThrow(/--match-set needs/);
    expect(() => parseRestoreText('*nat\n:X - [0:0]\n-A X -m set --match-set -j ACCEPT\nCOMMIT\n')).toThrow(
      RestoreParseError,
    );
  });

  it('the fake executor applies a whole IPVS residual payload and saves it back unchanged', async () => {
    const ipt = new FakeIptablesExecutor();
    await ipt.restore(IPVS_RESIDUAL, { noflush: true, counters: true });
    const snap = ipt.snapshot();
    expect(snap.filter?.['KUBE-IPVS-FILTER']).toEqual([
      '-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT',
    ]);
    const ruleLines = IPVS_RESIDUAL.split('\n').filter((l) => l.startsWith('-A '));
    const saved = (await ipt.save()).split('\n').filter((l) => l.startsWith('-A '));
    expect(saved.sort()).toEqual([...ruleLines].sort());
    // Applying the same payload again is a no-op (restore semantics: declared chains are rewritten).
    await ipt.restore(IPVS_RESIDUAL, { noflush: true, counters: true });
    expect(ipt.snapshot()).toEqual(snap);
  });

  it('the tracer says plainly that it cannot decide ipset matches', () => {
    expect(() =>
      tracePacket(IPVS_RESIDUAL, { sourceIP: '192.168.0.9', destIP: '172.30.0.10', destPort: 80 }),
    ).toThrow(/cannot evaluate -m set .*traceIpvs/);
  });
});

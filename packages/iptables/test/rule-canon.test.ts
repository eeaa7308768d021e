/**
 * The canonical rule form that lets a restarted process learn which existing chains already
 * hold what it writes: equal for our text and iptables-save's (captured from iptables 1.8.9,
 * nf_tables backend, and checked live in a namespace), different for any change in meaning.
 */
import { createNetns } from '@nodeagent/test-support/netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { describe, expect, it } from 'vitest';
import { canonicalChains, canonicalRule, isServiceChainName, renderIptables } from '../src/index.js';
import { snapshot, TEST_OPTIONS } from './helpers.js';
import { overallCluster } from './upstream-overall-nfacct.test.js';

// Ours, then what iptables-save printed for it.
const PAIRS: [string, string][] = [
  [
    '-A KUBE-SEP-I77PXRDZVX7PMWMN -m comment --comment ns5/svc5:p80 -s 10.180.0.3 -j KUBE-MARK-MASQ',
    '-A KUBE-SEP-I77PXRDZVX7PMWMN -s 10.180.0.3/32 -m comment --comment "ns5/svc5:p80" -j KUBE-MARK-MASQ',
  ],
  [
    '-A KUBE-SEP-I77PXRDZVX7PMWMN -m comment --comment ns5/svc5:p80 -m recent --name KUBE-SEP-I77PXRDZVX7PMWMN --set -m tcp -p tcp -j DNAT --to-destination 10.180.0.3:80',
    '-A KUBE-SEP-I77PXRDZVX7PMWMN -p tcp -m comment --comment "ns5/svc5:p80" -m recent --set --name KUBE-SEP-I77PXRDZVX7PMWMN --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.180.0.3:80',
  ],
  [
    '-A KUBE-SVC-4SW47YFZTEDKD3PK -m comment --comment "ns4/svc4:p80 -> 10.180.0.4:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-UKSFD7AGPMPPLUHC',
    '-A KUBE-SVC-4SW47YFZTEDKD3PK -m comment --comment "ns4/svc4:p80 -> 10.180.0.4:80" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-UKSFD7AGPMPPLUHC',
  ],
  [
    '-A KUBE-SVC-NUKIZ6OKUXPJNT4C -m comment --comment "ns5/svc5:p80 -> 10.180.0.3:80" -m recent --name KUBE-SEP-I77PXRDZVX7PMWMN --rcheck --seconds 10800 --reap -j KUBE-SEP-I77PXRDZVX7PMWMN',
    '-A KUBE-SVC-NUKIZ6OKUXPJNT4C -m comment --comment "ns5/svc5:p80 -> 10.180.0.3:80" -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-I77PXRDZVX7PMWMN --mask 255.255.255.255 --rsource -j KUBE-SEP-I77PXRDZVX7PMWMN',
  ],
];

describe('canonicalRule', () => {
  it("is equal for our text and iptables-save's", () => {
    for (const [ours, saved] of PAIRS) expect(canonicalRule(ours)).toBe(canonicalRule(saved));
  });

  it('differs for any change in meaning', () => {
    const base =
      '-A KUBE-SVC-X -m comment --comment "a cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ';
    for (const other of [
      base.replace('! -s', '-s'),
      base.replace('--dport 80', '--dport 81'),
      base.replace('172.30.0.41', '172.30.0.42'),
      base.replace('10.0.0.0/8', '10.0.0.0/16'),
      base.replace('KUBE-MARK-MASQ', 'KUBE-SEP-Y'),
      base.replace('-m tcp -p tcp', '-m udp -p udp'),
      base.replace('"a cluster IP"', '"b cluster IP"'),
      base.replace('-A KUBE-SVC-X', '-A KUBE-SVC-Z'),
    ])
      expect(canonicalRule(other)).not.toBe(canonicalRule(base));
    expect(canonicalRule('-A C -m statistic --mode random --probability 0.3333333333 -j X')).not.toBe(
      canonicalRule('-A C -m statistic --mode random --probability 0.5000000000 -j X'),
    );
  });
});

describeRealNode('canonical rules against a real iptables-save', ['root', 'netns', 'iptables'], () => {
  it('every per-service chain of a loaded ruleset reads back equal', async () => {
    const text = renderIptables(snapshot(overallCluster).snap, TEST_OPTIONS);
    const ns = await createNetns('canon');
    try {
      await ns.execChecked(['iptables-restore', '--noflush'], { input: text });
      const saved = await ns.execChecked(['iptables-save', '-t', 'nat']);
      const service = (l: string) => l.startsWith('-A ') && isServiceChainName(l.split(' ')[1]!);
      const ours = canonicalChains(text.split('\n').filter(service));
      const back = canonicalChains(saved.split('\n').filter(service));
      expect(ours.size).toBeGreaterThan(10);
      expect(back).toEqual(ours);
    } finally {
      await ns.stop();
    }
  }, 60_000);
});

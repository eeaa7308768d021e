/**
 * The service part of upstream's TestOverallNFTablesRules, line for line (as a set: our
 * write order differs from knftables' fake dump order, and we add `flush chain` lines).
 */
import { describe, expect, it } from 'vitest';
import { renderNftables } from '../src/index.js';
import { OVERALL } from './fixtures.js';
import { snapshot, TEST_OPTIONS } from './helpers.js';

const T = 'ip kube-proxy';
const EXPECTED_SERVICE_LINES = `
add chain ${T} service-ULMVA6XW-ns1/svc1/tcp/p80
add rule ${T} service-ULMVA6XW-ns1/svc1/tcp/p80 ip daddr 172.30.0.41 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
add rule ${T} service-ULMVA6XW-ns1/svc1/tcp/p80 numgen random mod 1 vmap { 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 }
add chain ${T} endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80
add rule ${T} endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 ip saddr 10.180.0.1 jump mark-for-masquerade
add rule ${T} endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 meta l4proto tcp dnat to 10.180.0.1:80
add element ${T} cluster-ips { 172.30.0.41 }
add element ${T} service-ips { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }
add chain ${T} service-42NFTM6N-ns2/svc2/tcp/p80
add rule ${T} service-42NFTM6N-ns2/svc2/tcp/p80 ip daddr 172.30.0.42 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
add rule ${T} service-42NFTM6N-ns2/svc2/tcp/p80 numgen random mod 1 vmap { 0 : goto endpoint-SGOXE6O3-ns2/svc2/tcp/p80__10.180.0.2/80 }
add chain ${T} external-42NFTM6N-ns2/svc2/tcp/p80
add rule ${T} external-42NFTM6N-ns2/svc2/tcp/p80 ip saddr 10.0.0.0/8 goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit pod traffic"
add rule ${T} external-42NFTM6N-ns2/svc2/tcp/p80 fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"
add rule ${T} external-42NFTM6N-ns2/svc2/tcp/p80 fib saddr type local goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit local traffic"
add chain ${T} endpoint-SGOXE6O3-ns2/svc2/tcp/p80__10.180.0.2/80
add rule ${T} endpoint-SGOXE6O3-ns2/svc2/tcp/p80__10.180.0.2/80 ip saddr 10.180.0.2 jump mark-for-masquerade
add rule ${T} endpoint-SGOXE6O3-ns2/svc2/tcp/p80__10.180.0.2/80 meta l4proto tcp dnat to 10.180.0.2:80
add element ${T} cluster-ips { 172.30.0.42 }
add element ${T} service-ips { 172.30.0.42 . tcp . 80 : goto service-42NFTM6N-ns2/svc2/tcp/p80 }
add element ${T} service-ips { 192.168.99.22 . tcp . 80 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
add element ${T} service-ips { 1.2.3.4 . tcp . 80 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
add element ${T} service-nodeports { tcp . 3001 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
add element ${T} no-endpoint-nodeports { tcp . 3001 comment "ns2/svc2:p80" : drop }
add element ${T} no-endpoint-services { 1.2.3.4 . tcp . 80 comment "ns2/svc2:p80" : drop }
add element ${T} no-endpoint-services { 192.168.99.22 . tcp . 80 comment "ns2/svc2:p80" : drop }
add chain ${T} service-4AT6LBPK-ns3/svc3/tcp/p80
add rule ${T} service-4AT6LBPK-ns3/svc3/tcp/p80 ip daddr 172.30.0.43 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
add rule ${T} service-4AT6LBPK-ns3/svc3/tcp/p80 numgen random mod 1 vmap { 0 : goto endpoint-UEIP74TE-ns3/svc3/tcp/p80__10.180.0.3/80 }
add chain ${T} external-4AT6LBPK-ns3/svc3/tcp/p80
add rule ${T} external-4AT6LBPK-ns3/svc3/tcp/p80 jump mark-for-masquerade
add rule ${T} external-4AT6LBPK-ns3/svc3/tcp/p80 goto service-4AT6LBPK-ns3/svc3/tcp/p80
add chain ${T} endpoint-UEIP74TE-ns3/svc3/tcp/p80__10.180.0.3/80
add rule ${T} endpoint-UEIP74TE-ns3/svc3/tcp/p80__10.180.0.3/80 ip saddr 10.180.0.3 jump mark-for-masquerade
add rule ${T} endpoint-UEIP74TE-ns3/svc3/tcp/p80__10.180.0.3/80 meta l4proto tcp dnat to 10.180.0.3:80
add element ${T} cluster-ips { 172.30.0.43 }
add element ${T} service-ips { 172.30.0.43 . tcp . 80 : goto service-4AT6LBPK-ns3/svc3/tcp/p80 }
add element ${T} service-nodeports { tcp . 3003 : goto external-4AT6LBPK-ns3/svc3/tcp/p80 }
add chain ${T} service-LAUZTJTB-ns4/svc4/tcp/p80
add rule ${T} service-LAUZTJTB-ns4/svc4/tcp/p80 ip daddr 172.30.0.44 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
add rule ${T} service-LAUZTJTB-ns4/svc4/tcp/p80 numgen random mod 2 vmap { 0 : goto endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80 , 1 : goto endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80 }
add chain ${T} external-LAUZTJTB-ns4/svc4/tcp/p80
add rule ${T} external-LAUZTJTB-ns4/svc4/tcp/p80 jump mark-for-masquerade
add rule ${T} external-LAUZTJTB-ns4/svc4/tcp/p80 goto service-LAUZTJTB-ns4/svc4/tcp/p80
add chain ${T} endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80
add rule ${T} endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80 ip saddr 10.180.0.5 jump mark-for-masquerade
add rule ${T} endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80 meta l4proto tcp dnat to 10.180.0.5:80
add chain ${T} endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80
add rule ${T} endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80 ip saddr 10.180.0.4 jump mark-for-masquerade
add rule ${T} endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80 meta l4proto tcp dnat to 10.180.0.4:80
add element ${T} cluster-ips { 172.30.0.44 }
add element ${T} service-ips { 172.30.0.44 . tcp . 80 : goto service-LAUZTJTB-ns4/svc4/tcp/p80 }
add element ${T} service-ips { 192.168.99.33 . tcp . 80 : goto external-LAUZTJTB-ns4/svc4/tcp/p80 }
add set ${T} affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }
add chain ${T} service-HVFWP5L3-ns5/svc5/tcp/p80
add rule ${T} service-HVFWP5L3-ns5/svc5/tcp/p80 ip daddr 172.30.0.45 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
add rule ${T} service-HVFWP5L3-ns5/svc5/tcp/p80 ip saddr @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80
add rule ${T} service-HVFWP5L3-ns5/svc5/tcp/p80 numgen random mod 1 vmap { 0 : goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 }
add chain ${T} external-HVFWP5L3-ns5/svc5/tcp/p80
add rule ${T} external-HVFWP5L3-ns5/svc5/tcp/p80 jump mark-for-masquerade
add rule ${T} external-HVFWP5L3-ns5/svc5/tcp/p80 goto service-HVFWP5L3-ns5/svc5/tcp/p80
add chain ${T} endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80
add rule ${T} endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 ip saddr 10.180.0.3 jump mark-for-masquerade
add rule ${T} endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 update @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 { ip saddr }
add rule ${T} endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 meta l4proto tcp dnat to 10.180.0.3:80
add chain ${T} firewall-HVFWP5L3-ns5/svc5/tcp/p80
add rule ${T} firewall-HVFWP5L3-ns5/svc5/tcp/p80 ip saddr != { 203.0.113.0/25 } drop
add element ${T} cluster-ips { 172.30.0.45 }
add element ${T} service-ips { 172.30.0.45 . tcp . 80 : goto service-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ${T} service-ips { 5.6.7.8 . tcp . 80 : goto external-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ${T} service-nodeports { tcp . 3002 : goto external-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ${T} firewall-ips { 5.6.7.8 . tcp . 80 : goto firewall-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ${T} cluster-ips { 172.30.0.46 }
add element ${T} no-endpoint-services { 172.30.0.46 . tcp . 80 comment "ns6/svc6:p80" : goto reject-chain }
`;

describe("upstream's overall nftables fixture", () => {
  it('renders the same service chains, rules, sets and elements', () => {
    const { snap, errors } = snapshot(OVERALL);
    expect(errors).toEqual([]);
    const text = renderNftables(snap, { ...TEST_OPTIONS, nodePortIPs: ['192.168.0.2'] });
    const isService = (l: string) =>
      /(service|external|endpoint|firewall|local|affinity)-[A-Z2-7]{8}-|add element/.test(l);
    // Our element commands are batched per set: expand them to one element per line.
    const expand = (l: string): string[] => {
      const m = /^(add element \S+ \S+ \S+) \{ (.*) \}$/.exec(l);
      return m ? m[2]!.split(', ').map((b) => `${m[1]} { ${b} }`) : [l];
    };
    const ours = text
      .split('\n')
      .flatMap(expand)
      .filter((l) => l.startsWith('add ') && isService(l) && !l.includes('nodeport-ips'));
    const expected = EXPECTED_SERVICE_LINES.trim().split('\n');
    expect([...ours].sort()).toEqual([...expected].sort());
  });
});

/**
 * Upstream's TestOverallNFTablesRules (current kube-proxy, with the `*-pre-dnat` base chains at
 * -110 and the filter chains at 0), line for line: its `baseRules` and the service part (as
 * sets: our write order differs from knftables' fake dump order, and we add `flush` lines).
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

// upstream's baseRules (pkg/proxy/nftables/proxier_test.go), for nodePortAddresses `primary`
// (node IP 192.168.0.2) and the service CIDR 172.30.0.0/16.
const EXPECTED_BASE_LINES = `
add table ${T} { comment "rules for kube-proxy" ; }
add set ${T} cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }
add set ${T} nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }
add map ${T} firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }
add map ${T} no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }
add map ${T} no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }
add map ${T} service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }
add map ${T} service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }
add chain ${T} cluster-ips-check
add chain ${T} filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }
add chain ${T} filter-output-pre-dnat { type filter hook output priority -110 ; }
add chain ${T} filter-forward { type filter hook forward priority 0 ; }
add chain ${T} filter-input { type filter hook input priority 0 ; }
add chain ${T} filter-output { type filter hook output priority 0 ; }
add chain ${T} firewall-check
add chain ${T} mark-for-masquerade
add chain ${T} masquerading
add chain ${T} nat-output { type nat hook output priority -100 ; }
add chain ${T} nat-postrouting { type nat hook postrouting priority 100 ; }
add chain ${T} nat-prerouting { type nat hook prerouting priority -100 ; }
add chain ${T} nodeport-endpoints-check
add chain ${T} reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }
add chain ${T} services
add chain ${T} service-endpoints-check
add rule ${T} cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
add rule ${T} cluster-ips-check ip daddr { 172.30.0.0/16 } drop comment "Drop traffic to unallocated ClusterIPs"
add rule ${T} filter-prerouting-pre-dnat ct state new jump firewall-check
add rule ${T} filter-forward ct state new jump service-endpoints-check
add rule ${T} filter-forward ct state new jump cluster-ips-check
add rule ${T} filter-input ct state new jump nodeport-endpoints-check
add rule ${T} filter-input ct state new jump service-endpoints-check
add rule ${T} filter-output ct state new jump service-endpoints-check
add rule ${T} filter-output-pre-dnat ct state new jump firewall-check
add rule ${T} filter-output ct state new jump cluster-ips-check
add rule ${T} firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips
add rule ${T} mark-for-masquerade mark set mark or 0x4000
add rule ${T} masquerading mark and 0x4000 == 0 return
add rule ${T} masquerading mark set mark xor 0x4000
add rule ${T} masquerading masquerade fully-random
add rule ${T} nat-output jump services
add rule ${T} nat-postrouting jump masquerading
add rule ${T} nat-prerouting jump services
add rule ${T} nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
add rule ${T} reject-chain reject
add rule ${T} services ip daddr . meta l4proto . th dport vmap @service-ips
add rule ${T} services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
add element ${T} nodeport-ips { 192.168.0.2 }
add rule ${T} service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services
`;

describe("upstream's overall nftables fixture", () => {
  it("renders upstream's current base chains, sets, maps and rules", () => {
    const { snap } = snapshot(OVERALL);
    const text = renderNftables(snap, { ...TEST_OPTIONS, nodePortIPs: ['192.168.0.2'] });
    const isService = (l: string) =>
      /(service|external|endpoint|firewall|local|affinity)-[A-Z2-7]{8}-|add element/.test(l);
    // Our first sync also re-creates the base chains (delete + add, so a table left by another
    // layout gets the right hooks): compare the distinct `add` lines.
    const ours = new Set(
      text.split('\n').filter((l) => l.startsWith('add ') && (!isService(l) || l.includes('nodeport-ips {'))),
    );
    const expected = EXPECTED_BASE_LINES.trim().split('\n');
    expect([...ours].sort()).toEqual([...expected].sort());
  });

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

import { IptablesBackend } from '@nodeagent/iptables';
import { FakeIptablesExecutor } from '@nodeagent/iptables/testing';
import { IpvsBackend } from '@nodeagent/ipvs';
import { FakeIpvsExecutor } from '@nodeagent/ipvs/testing';
import { NftablesBackend } from '@nodeagent/nftables';
import { FakeNftExecutor } from '@nodeagent/nftables/testing';
import { ProxyState } from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import { endpointSlice, service } from './fixtures.js';

function state(nodeIP = '192.168.0.2') {
  const s = new ProxyState({ nodeName: 'node-a', nodeIPs: [nodeIP] });
  s.onServiceAdd(service('web', { clusterIP: '172.30.0.41' }));
  s.onEndpointSliceAdd(endpointSlice('web', [{ ip: '10.180.0.1' }]));
  return s;
}

describe('backend adapters', () => {
  it('IpvsBackend leaves virtual servers in excludeCIDRs (another program’s) alone', async () => {
    const other = { address: '10.250.0.1', port: 53, protocol: 'UDP' as const };
    const ipvs = new FakeIpvsExecutor();
    await ipvs.apply([
      {
        kind: 'add-virtual-server',
        virtualServer: { ...other, scheduler: 'rr', flags: [], timeoutSeconds: 0 },
      },
    ]);
    const backend = new IpvsBackend({ ipv4: { executor: ipvs }, excludeCIDRs: ['10.250.0.0/16'] });
    await backend.sync(state().checkout(), { full: true });
    backend.close();
    expect(ipvs.state().virtualServers.map((v) => `${v.address}:${v.port}`)).toEqual([
      '10.250.0.1:53',
      '172.30.0.41:80',
    ]);
  });

  it('IpvsBackend cleanup flushes every virtual server, excluded CIDRs included (kube-proxy --cleanup)', async () => {
    const ipvs = new FakeIpvsExecutor();
    await ipvs.apply([
      {
        kind: 'add-virtual-server',
        virtualServer: {
          address: '10.250.0.1',
          port: 53,
          protocol: 'UDP',
          scheduler: 'rr',
          flags: [],
          timeoutSeconds: 0,
        },
      },
    ]);
    const backend = new IpvsBackend({ ipv4: { executor: ipvs }, excludeCIDRs: ['10.250.0.0/16'] });
    await backend.sync(state().checkout(), { full: true });
    await backend.cleanup();
    backend.close();
    expect(ipvs.state().virtualServers).toEqual([]);
  });

  it('IpvsBackend programs virtual servers and cleans them up', async () => {
    // The IPVS part alone (no iptables executor); the residual rules are tested below.
    const ipvs = new FakeIpvsExecutor();
    const backend = new IpvsBackend({ ipv4: { executor: ipvs } });
    const r = await backend.sync(state().checkout(), { full: true });
    expect(r.families).toMatchObject([{ family: 4, full: true }]);
    expect(r.families[0]?.error).toBeUndefined();
    const vs = ipvs.state().virtualServers;
    expect(vs.map((v) => `${v.address}:${v.port}`)).toEqual(['172.30.0.41:80']);
    expect(vs[0]?.realServers.map((rs) => `${rs.address}:${rs.port}`)).toEqual(['10.180.0.1:8080']);
    expect(ipvs.state().boundAddresses).toEqual(['172.30.0.41']);
    expect(ipvs.state().ipsets.length).toBeGreaterThan(0);
    await backend.cleanup();
    backend.close();
    expect(ipvs.state().virtualServers).toEqual([]);
    expect(ipvs.state().boundAddresses).toEqual([]);
    expect(ipvs.state().ipsets).toEqual([]);
  });

  it('IpvsBackend writes its residual iptables rules (ipset matches) through the fake executor', async () => {
    const ipvs = new FakeIpvsExecutor();
    const ipt = new FakeIptablesExecutor();
    await ipt.restore('*nat\n:MINE - [0:0]\n-A PREROUTING -j MINE\nCOMMIT\n'); // another owner
    const backend = new IpvsBackend({
      ipv4: { executor: ipvs, iptables: ipt },
      plan: { localDetector: { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } },
    });
    const s = state();
    s.onServiceAdd({
      ...service('lb', {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.42',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 30999,
        loadBalancerSourceRanges: ['10.0.0.0/8'],
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30080 }],
      }),
      status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
    });
    s.onEndpointSliceAdd(endpointSlice('lb', [{ ip: '10.180.0.2', nodeName: 'node-a' }]));
    const r1 = await backend.sync(s.checkout(), { full: false });
    expect(r1.families[0]?.error).toBeUndefined();
    expect(r1.families[0]).toMatchObject({ family: 4, full: true });
    expect(r1.families[0]?.bytes).toBeGreaterThan(0);
    expect(ipt.ensureJumpsCalls).toBe(1);

    const snap = ipt.snapshot();
    const nat = snap.nat!;
    const filter = snap.filter!;
    expect(nat.PREROUTING).toEqual([
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A PREROUTING -j MINE',
    ]);
    expect(nat['KUBE-SERVICES']).toContain(
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
    );
    expect(filter['KUBE-PROXY-FIREWALL']?.join('\n')).toContain(
      '-m set --match-set KUBE-LOAD-BALANCER-FW dst,dst -j KUBE-SOURCE-RANGES-FIREWALL',
    );
    expect(filter['KUBE-IPVS-FILTER']).toContain(
      '-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT',
    );
    // Every residual rule the backend rendered is held by the fake, and nothing else of ours.
    const written = ipt.restores
      .at(-1)!
      .text.split('\n')
      .filter((l) => l.startsWith('-A '));
    const held = Object.values(snap)
      .flatMap((t) => Object.entries(t))
      .filter(([c]) => c.startsWith('KUBE-'))
      .flatMap(([, rules]) => rules);
    expect([...held].sort()).toEqual([...written].sort());
    expect(written.length).toBe(
      (r1.families[0]?.iptablesRules?.filter ?? 0) + (r1.families[0]?.iptablesRules?.nat ?? 0),
    );

    // The load balancer goes away: its source-range rules go with it; jumps are not re-ensured.
    s.onServiceDelete(service('lb', {}));
    const r2 = await backend.sync(s.checkout(), { full: false });
    expect(r2.families[0]).toMatchObject({ family: 4, full: false });
    expect(r2.families[0]?.error).toBeUndefined();
    expect(ipt.ensureJumpsCalls).toBe(1);
    expect(ipt.snapshot().filter?.['KUBE-PROXY-FIREWALL']).toEqual([]);
    expect(ipvs.state().virtualServers.map((v) => `${v.address}:${v.port}`)).toEqual(['172.30.0.41:80']);

    await backend.cleanup();
    backend.close();
    expect(await ipt.save()).not.toContain('KUBE-');
    expect(ipt.snapshot().nat?.PREROUTING).toEqual(['-A PREROUTING -j MINE']);
  });

  it('IpvsBackend reports an executor failure for the family instead of throwing', async () => {
    const ipvs = new FakeIpvsExecutor();
    ipvs.failWhen(() => 'Memory allocation problem');
    const backend = new IpvsBackend({ ipv4: { executor: ipvs } });
    const r = await backend.sync(state().checkout(), { full: false });
    expect(r.families[0]).toMatchObject({ family: 4, failureKind: 'ipvs' });
    expect(String(r.families[0]?.error)).toContain('Memory allocation problem');
    backend.close();
  });

  it('IptablesBackend cleanup removes only kube-proxy chains and the jumps into them', async () => {
    const ipt = new FakeIptablesExecutor();
    await ipt.restore('*nat\n:MINE - [0:0]\n-A PREROUTING -j MINE\nCOMMIT\n');
    const backend = new IptablesBackend({ ipv4: { executor: ipt } });
    const r = await backend.sync(state().checkout(), { full: false });
    expect(r.families[0]).toMatchObject({ family: 4, full: true }); // the first sync is always full
    expect(r.families[0]?.iptablesRules?.nat).toBeGreaterThan(0);
    await backend.cleanup();
    const nat = await ipt.save('nat');
    expect(nat).not.toContain('KUBE-');
    expect(nat).toContain('-A PREROUTING -j MINE');
    expect(await ipt.save('filter')).not.toContain('KUBE-');
  });

  it('IptablesBackend and NftablesBackend rebuild their renderer when the node IP changes', async () => {
    const ipt = new FakeIptablesExecutor();
    const nft = new FakeNftExecutor();
    const a = new IptablesBackend({ ipv4: { executor: ipt } });
    const b = new NftablesBackend({ ipv4: { executor: nft } });
    const s1 = state('192.168.0.2');
    const c1 = s1.checkout();
    await a.sync(c1, { full: false });
    await b.sync(c1, { full: false });
    const first = [a.syncer(4), b.syncer(4)];
    s1.onNodeUpdate({
      metadata: { name: 'node-a' },
      status: { addresses: [{ type: 'InternalIP', address: '192.168.0.3' }] },
    });
    // nodeIPs were given explicitly, so the IP stays; a fresh state with another IP must rebuild.
    const c2 = state('192.168.0.3').checkout();
    const ra = await a.sync(c2, { full: false });
    const rb = await b.sync(c2, { full: false });
    expect(a.syncer(4)).not.toBe(first[0]);
    expect(b.syncer(4)).not.toBe(first[1]);
    expect(ra.families[0]).toMatchObject({ full: true });
    expect(rb.families[0]).toMatchObject({ full: true });
    a.close(); // the canary monitor's timer
  });

  it('NftablesBackend cleanup deletes its table whether or not it exists', async () => {
    const nft = new FakeNftExecutor();
    const backend = new NftablesBackend({ ipv4: { executor: nft }, ipv6: { executor: nft } });
    await backend.cleanup(); // nothing there yet
    const r = await backend.sync(state().checkout(), { full: true });
    expect(r.families.map((f) => [f.family, f.error])).toEqual([
      [4, undefined],
      [6, undefined],
    ]);
    expect(nft.state.table('ip', 'kube-proxy')).toBeDefined();
    expect(nft.state.table('ip6', 'kube-proxy')).toBeDefined();
    await backend.cleanup();
    expect(nft.state.table('ip', 'kube-proxy')).toBeUndefined();
    expect(nft.state.table('ip6', 'kube-proxy')).toBeUndefined();
  });

  it('needs at least one family', () => {
    expect(() => new IptablesBackend({})).toThrow(TypeError);
    expect(() => new NftablesBackend({})).toThrow(TypeError);
    expect(() => new IpvsBackend({})).toThrow(TypeError);
  });
});

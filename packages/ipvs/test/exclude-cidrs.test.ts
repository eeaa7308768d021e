/**
 * `--ipvs-exclude-cidrs`, with the cases of upstream's TestCleanLegacyService,
 * TestCleanLegacyService6 and TestCleanLegacyRealServersExcludeCIDRs: virtual servers of
 * other programs inside the excluded CIDRs survive a sync with their real servers; stale
 * ones outside are deleted; the other family is left alone.
 */
import { InvalidOptionsError } from '@nodeagent/core';
import { describe, expect, it } from 'vitest';
import { diffIpvs, IpvsReconciler, type IpvsState, type VirtualServer } from '../src/index.js';
import { FakeIpvsExecutor } from '../src/testing.js';

function vs(address: string, port: number, reals: string[] = []): VirtualServer {
  return {
    address,
    port,
    protocol: 'UDP',
    scheduler: 'rr',
    flags: [],
    timeoutSeconds: 0,
    realServers: reals.map((a) => ({ address: a, port, weight: 1 })),
  };
}

const state = (virtualServers: VirtualServer[], boundAddresses: string[] = []): IpvsState => ({
  virtualServers,
  boundAddresses,
  ipsets: [],
});

const keys = (s: IpvsState) => s.virtualServers.map((v) => `${v.address}:${v.port}`).sort();

describe('excludeCIDRs', () => {
  // ipvs0/1 are kube-proxy's and wanted; ipvs2/3 belong to someone else inside the excluded
  // CIDRs; ipvs4 is someone else's outside them; ipvs5 is kube-proxy's but stale.
  const current = state([
    vs('1.1.1.1', 53),
    vs('2.2.2.2', 54),
    vs('3.3.3.3', 55),
    vs('4.4.4.4', 56),
    vs('5.5.5.5', 57),
    vs('6.6.6.6', 58),
  ]);
  const desired = state([vs('1.1.1.1', 53), vs('2.2.2.2', 54)]);

  it('keeps the virtual servers inside the excluded CIDRs and deletes the rest (TestCleanLegacyService)', async () => {
    const kernel = new FakeIpvsExecutor(current);
    const r = new IpvsReconciler({
      executor: kernel,
      ipFamily: 4,
      excludeCIDRs: ['3.3.3.0/24', '4.4.4.0/24'],
    });
    await r.sync(desired);
    r.close();
    expect(keys(kernel.state())).toEqual(['1.1.1.1:53', '2.2.2.2:54', '3.3.3.3:55', '4.4.4.4:56']);
  });

  it('without excluded CIDRs every virtual server not in the plan goes', () => {
    const ops = diffIpvs(current, desired).operations;
    expect(ops.filter((o) => o.kind === 'delete-virtual-server')).toHaveLength(4);
  });

  it('leaves the real servers of an excluded virtual server alone (TestCleanLegacyRealServersExcludeCIDRs)', async () => {
    const kernel = new FakeIpvsExecutor(state([vs('4.4.4.4', 56, ['10.10.10.10', '11.11.11.11'])]));
    const r = new IpvsReconciler({ executor: kernel, excludeCIDRs: ['4.4.4.4/32'] });
    const result = await r.sync(state([]));
    r.close();
    expect(result.operations).toEqual([]);
    expect(kernel.state().virtualServers[0]!.realServers.map((x) => x.address)).toEqual([
      '10.10.10.10',
      '11.11.11.11',
    ]);
  });

  it('IPv6: excluded CIDRs of that family, the IPv4 servers untouched (TestCleanLegacyService6)', () => {
    const cur6 = state([
      vs('1000::1', 53),
      vs('1000::2', 54),
      vs('3000::1', 55),
      vs('4000::1', 56),
      vs('5000::1', 57),
      vs('1000::6', 58),
      vs('1.1.1.1', 53),
    ]);
    const ops = diffIpvs(cur6, state([vs('1000::1', 53), vs('1000::2', 54)]), {
      ipFamily: 6,
      excludeCIDRs: ['3000::/64', '4000::/64'],
    }).operations;
    expect(
      ops.flatMap((o) => (o.kind === 'delete-virtual-server' ? [o.virtualServer.address] : [])).sort(),
    ).toEqual(['1000::6', '5000::1']);
  });

  it('a virtual server the plan wants is managed even inside an excluded CIDR', () => {
    const cur = state([vs('3.3.3.3', 55, ['10.0.0.1'])]);
    const ops = diffIpvs(cur, state([vs('3.3.3.3', 55, ['10.0.0.2'])]), {
      excludeCIDRs: ['3.3.3.0/24'],
    }).operations;
    expect(ops.map((o) => o.kind)).toEqual(['add-real-server', 'delete-real-server']);
  });

  it('addresses on kube-ipvs0 are not protected: the dummy interface is kube-proxy’s own', () => {
    const ops = diffIpvs(state([], ['3.3.3.3']), state([]), { excludeCIDRs: ['3.3.3.0/24'] }).operations;
    expect(ops).toEqual([{ kind: 'unbind-address', address: '3.3.3.3' }]);
  });

  it('a CIDR that does not parse is refused by the reconciler with InvalidOptionsError naming it', () => {
    expect(
      () =>
        new IpvsReconciler({ executor: new FakeIpvsExecutor(), excludeCIDRs: ['3.3.3.0/24', '10.0.0.0/33'] }),
    ).toThrow(
      new InvalidOptionsError('IpvsReconciler', 'excludeCIDRs[1]: "10.0.0.0/33" must be a valid CIDR'),
    );
  });
});

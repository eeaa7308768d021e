/**
 * Dual-stack as kube-proxy runs it: one backend per IP family behind one Proxier, each with its
 * own sync loop and runner (kube-proxy's per-family proxiers behind the MetaProxier / the new
 * `proxy.Runner`'s per-family runners). A family syncs when its own Services or EndpointSlices
 * changed, fails and retries on its own; healthz is healthy only while every family is
 * (`proxy_health.go`: `health()` is false when any family's queued update is older than the
 * timeout). Timing through FakeClock; informers are FakeListerWatchers.
 */
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { FakeListerWatcher } from '@nodeagent/informer/testing';
import { NftablesBackend } from '@nodeagent/nftables';
import { FakeNftExecutor } from '@nodeagent/nftables/testing';
import type {
  BackendSyncOptions,
  BackendSyncResult,
  DataPlaneBackend,
  IPFamily,
  ProxyCheckout,
} from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import { Proxier, type ProxierOptions } from '../src/index.js';
import { endpointSlice, service } from './fixtures.js';
import { fakeListerWatchers, startFakeClockProxier } from './support/fake-proxier.js';

/** Records what its loop hands it (its family's changed services, full or not). */
class FamilyBackend implements DataPlaneBackend {
  readonly name: string;
  readonly families: readonly IPFamily[];
  readonly syncs: { full: boolean; changed: string[]; services: string[] }[] = [];
  failing = false;

  constructor(readonly family: IPFamily) {
    this.name = `recording-v${family}`;
    this.families = [family];
  }

  async sync(checkout: ProxyCheckout, options: BackendSyncOptions): Promise<BackendSyncResult> {
    const snap = this.family === 4 ? checkout.v4 : checkout.v6;
    this.syncs.push({
      full: options.full,
      changed: [...snap.changedServices],
      services: [...snap.services.values()].map((s) => s.clusterIP),
    });
    if (this.failing) {
      return { families: [{ family: this.family, full: options.full, error: new Error('injected') }] };
    }
    return { families: [{ family: this.family, full: options.full }] };
  }

  async cleanup(): Promise<void> {}
}

function v6Slice(svc: string, ip: string): V1EndpointSlice {
  const s = endpointSlice(svc, [{ ip }], { name: `${svc}-v6` });
  return { ...s, addressType: 'IPv6' };
}

const dualService = service('web', {
  clusterIP: '172.30.0.41',
  clusterIPs: ['172.30.0.41', 'fd00:30::41'],
  ipFamilies: ['IPv4', 'IPv6'],
  ipFamilyPolicy: 'RequireDualStack',
});

async function start(backend: ProxierOptions['backend'], extra: Partial<ProxierOptions> = {}) {
  const lws = fakeListerWatchers();
  lws.upsert('services', dualService);
  lws.upsert('endpointslices', endpointSlice('web', [{ ip: '10.180.0.1' }]));
  lws.upsert('endpointslices', v6Slice('web', 'fd00:180::1'));
  const { proxier, clock } = await startFakeClockProxier(backend, lws, {
    nodeIPs: ['192.168.0.2', 'fd00::2'],
    ...extra,
  });
  const settle = async (ms = 0) => {
    await clock.advance(ms);
    for (let i = 0; i < 40; i++) await clock.advance(0);
  };
  return { proxier, clock, lws, settle };
}

describe('dual-stack: one runner per family', () => {
  it('refuses two backends for one family, and no backend at all', () => {
    const lw = () => new FakeListerWatcher();
    expect(
      () =>
        new Proxier({
          nodeName: 'n',
          backend: [new FamilyBackend(4), new FamilyBackend(4)],
          listerWatcherFor: lw,
        }),
    ).toThrow('Proxier backends recording-v4 and recording-v4 both program IPv4');
    expect(() => new Proxier({ nodeName: 'n', backend: [], listerWatcherFor: lw })).toThrow(
      'Proxier needs at least one backend',
    );
  });

  it('each family syncs its own half of a dual-stack Service, and only when its own objects changed', async () => {
    const v4 = new FamilyBackend(4);
    const v6 = new FamilyBackend(6);
    const { proxier, lws, settle } = await start([v4, v6]);
    await settle();
    expect(proxier.backends).toEqual([v4, v6]);
    expect(proxier.runners).toHaveLength(2);
    expect(v4.syncs).toEqual([{ full: true, changed: ['ns1/web'], services: ['172.30.0.41'] }]);
    expect(v6.syncs).toEqual([{ full: true, changed: ['ns1/web'], services: ['fd00:30::41'] }]);
    // An IPv6 EndpointSlice change: only the IPv6 runner syncs (partially).
    lws.upsert('endpointslices', v6Slice('web', 'fd00:180::2'));
    await settle(1_000);
    expect(v4.syncs).toHaveLength(1);
    expect(v6.syncs.slice(1)).toEqual([{ full: false, changed: ['ns1/web'], services: ['fd00:30::41'] }]);
    // An IPv4 one: only the IPv4 runner.
    lws.upsert('endpointslices', endpointSlice('web', [{ ip: '10.180.0.2' }]));
    await settle(1_000);
    expect(v6.syncs).toHaveLength(2);
    expect(v4.syncs.slice(1)).toEqual([{ full: false, changed: ['ns1/web'], services: ['172.30.0.41'] }]);
    expect(proxier.syncCount).toBe(4);
  });

  it('a failing family retries on its own (full); the other keeps syncing partially', async () => {
    const v4 = new FamilyBackend(4);
    const v6 = new FamilyBackend(6);
    const { lws, settle } = await start([v4, v6]);
    await settle();
    v6.failing = true;
    lws.upsert(
      'services',
      service('web', {
        ...dualService.spec,
        ports: [{ name: 'p80', port: 81, protocol: 'TCP' }],
      }),
    );
    await settle(1_000);
    expect(v4.syncs.map((s) => s.full)).toEqual([true, false]);
    expect(v6.syncs.map((s) => s.full)).toEqual([true, false]);
    // IPv6's retry after syncPeriod is full; IPv4 has nothing to do meanwhile.
    v6.failing = false;
    await settle(30_000);
    expect(v6.syncs.map((s) => s.full)).toEqual([true, false, true]);
    expect(v4.syncs.map((s) => s.full)).toEqual([true, false]);
    lws.upsert('endpointslices', endpointSlice('web', [{ ip: '10.180.0.3' }]));
    await settle(1_000);
    expect(v4.syncs.map((s) => s.full)).toEqual([true, false, false]);
  });

  it('healthz is healthy only while every family is', async () => {
    const v4 = new FamilyBackend(4);
    const v6 = new FamilyBackend(6);
    const { proxier, lws, settle } = await start([v4, v6], { healthz: { bindAddress: '127.0.0.1:0' } });
    await settle();
    expect(proxier.healthz!.isHealthy()).toBe(true);
    v6.failing = true;
    lws.upsert('endpointslices', v6Slice('web', 'fd00:180::9'));
    // Past the health timeout (2 × syncPeriod) with IPv6 still failing: unhealthy, though IPv4 is fine.
    await settle(1_000);
    await settle(61_000);
    const body = proxier.healthz!.body(false);
    expect(body.healthy).toBe(false);
    expect(body.status?.IPv4?.healthy).toBe(true);
    expect(body.status?.IPv6?.healthy).toBe(false);
    v6.failing = false;
    await settle(30_000);
    expect(proxier.healthz!.isHealthy()).toBe(true);
  });

  it('a single backend stays single-stack: one runner, one family programmed', async () => {
    const v4 = new FamilyBackend(4);
    const { proxier, lws, settle } = await start(v4);
    await settle();
    expect(proxier.runners).toHaveLength(1);
    expect(proxier.backends).toEqual([v4]);
    lws.upsert('endpointslices', v6Slice('web', 'fd00:180::2'));
    await settle(1_000);
    // The IPv6 change is not this proxier's business: the IPv4 runner syncs nothing new.
    expect(v4.syncs.every((s) => s.services.join() === '172.30.0.41')).toBe(true);
    expect(v4.syncs.slice(1).every((s) => s.changed.length === 0)).toBe(true);
  });

  it('nftables: the IPv4 backend writes table ip kube-proxy, the IPv6 one ip6 kube-proxy', async () => {
    const nft4 = new FakeNftExecutor();
    const nft6 = new FakeNftExecutor();
    const render = { localDetector: { mode: 'None' } } as const;
    const { settle } = await start([
      new NftablesBackend({ ipv4: { executor: nft4 }, render }),
      new NftablesBackend({ ipv6: { executor: nft6 }, render }),
    ]);
    await settle();
    const t4 = nft4.transactions.join('\n');
    const t6 = nft6.transactions.join('\n');
    expect(t4).toContain('add table ip kube-proxy');
    expect(t4).toContain('172.30.0.41');
    expect(t4).not.toContain('fd00:30::41');
    expect(t6).toContain('add table ip6 kube-proxy');
    expect(t6).toContain('fd00:30::41');
    expect(t6).not.toContain('172.30.0.41');
  });
});

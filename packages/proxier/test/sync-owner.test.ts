/**
 * The proxier's sync loop is the one owner of "full or partial" (kube-proxy's
 * `doFullSync = needFullSync || time.Since(lastFullSync) > FullSyncPeriod`, with needFullSync set
 * at start, after a failed sync, on a node topology label change, and by `forceSyncProxyRules`):
 * the backends are asked `sync(checkout, { full })` and only plan partial syncs. Timing through
 * FakeClock; the informers are FakeListerWatchers.
 */
import { IptablesBackend } from '@nodeagent/iptables';
import { FakeIptablesExecutor } from '@nodeagent/iptables/testing';
import { NftablesBackend } from '@nodeagent/nftables';
import { FakeNftExecutor } from '@nodeagent/nftables/testing';
import {
  type BackendHost,
  type BackendSyncOptions,
  type BackendSyncResult,
  type DataPlaneBackend,
  FULL_SYNC_PERIOD_MS,
  type IPFamily,
  type ProxyCheckout,
} from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import type { ProxierOptions } from '../src/index.js';
import { endpointSlice, node, service } from './fixtures.js';
import { fakeListerWatchers, startFakeClockProxier } from './support/fake-proxier.js';

const DETECTOR = { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } as const;

/** Records what the loop asks; fails a family when told to. */
class RecordingBackend implements DataPlaneBackend {
  readonly name = 'recording';
  readonly families: readonly IPFamily[] = [4];
  readonly asked: boolean[] = [];
  host: BackendHost | undefined;
  failNext = false;

  attach(host: BackendHost): void {
    this.host = host;
  }

  async sync(_checkout: ProxyCheckout, options: BackendSyncOptions): Promise<BackendSyncResult> {
    this.asked.push(options.full);
    if (this.failNext) {
      this.failNext = false;
      return { families: [{ family: 4, full: options.full, error: new Error('injected') }] };
    }
    return { families: [{ family: 4, full: options.full }] };
  }

  async cleanup(): Promise<void> {}
}

async function start(backend: DataPlaneBackend, extra: Partial<ProxierOptions> = {}) {
  const lws = fakeListerWatchers();
  lws.upsert('services', service('web', { clusterIP: '172.30.0.41' }));
  lws.upsert('endpointslices', endpointSlice('web', [{ ip: '10.180.0.1' }]));
  lws.upsert('nodes', node('node-a', '192.168.0.2'));
  const { proxier, clock } = await startFakeClockProxier(backend, lws, extra);
  /** Advances the clock by `ms`, then lets the runner and informers catch up until `n` syncs ran. */
  const until = async (n: number, ms = 0) => {
    await clock.advance(ms);
    for (let i = 0; i < 100 && proxier.syncCount < n; i++) await clock.advance(i < 50 ? 0 : 100);
    expect(proxier.syncCount).toBe(n);
    return proxier.lastSyncResult!;
  };
  const setEndpoint = (ip: string) => lws.upsert('endpointslices', endpointSlice('web', [{ ip }]));
  return { proxier, clock, lws, until, setEndpoint };
}

describe('the sync loop owns full vs partial', () => {
  it('FULL_SYNC_PERIOD_MS is kube-proxy’s one hour and the proxier’s default', () => {
    expect(FULL_SYNC_PERIOD_MS).toBe(3_600_000);
  });

  it('full at start, partial on changes, full after a failure and on a backend’s request', async () => {
    const b = new RecordingBackend();
    const { until, setEndpoint } = await start(b);
    expect((await until(1)).full).toBe(true);
    setEndpoint('10.180.0.2');
    expect((await until(2, 1_000)).full).toBe(false);
    b.failNext = true;
    setEndpoint('10.180.0.3');
    expect((await until(3, 1_000)).failed).toBe(true);
    // The retry (after syncPeriodMs) is full.
    const retried = await until(4, 30_000);
    expect([retried.full, retried.failed]).toEqual([true, false]);
    setEndpoint('10.180.0.4');
    expect((await until(5, 1_000)).full).toBe(false);
    b.host!.requestFullSync('test');
    expect((await until(6, 1_000)).full).toBe(true);
    expect(b.asked).toEqual([true, false, false, true, false, true]);
  });

  it('a full sync once the last full one is FULL_SYNC_PERIOD_MS old, changes or not', async () => {
    const b = new RecordingBackend();
    const { until, setEndpoint } = await start(b);
    await until(1);
    setEndpoint('10.180.0.2');
    expect((await until(2, 1_000)).full).toBe(false);
    // Without changes the runner's longest interval (the same hour) brings the next sync, full.
    const hourly = await until(3, FULL_SYNC_PERIOD_MS);
    expect(hourly.full).toBe(true);
    setEndpoint('10.180.0.3');
    expect((await until(4, 1_000)).full).toBe(false);
    expect(b.asked).toEqual([true, false, true, false]);
  });

  it('fullSyncPeriodMs shortens the period for both the decision and the runner', async () => {
    const b = new RecordingBackend();
    const { until, setEndpoint } = await start(b, { fullSyncPeriodMs: 60_000 });
    await until(1);
    setEndpoint('10.180.0.2');
    expect((await until(2, 1_000)).full).toBe(false);
    expect((await until(3, 60_000)).full).toBe(true);
  });

  it('a node topology label or node IP change makes the next sync full', async () => {
    const b = new RecordingBackend();
    const { until, lws, setEndpoint } = await start(b);
    await until(1);
    lws.upsert('nodes', node('node-a', '192.168.0.2', 'zone-b'));
    expect((await until(2, 1_000)).full).toBe(true);
    setEndpoint('10.180.0.2');
    expect((await until(3, 1_000)).full).toBe(false);
    // The node's IP comes from its addresses (no nodeIPs option): proxy-state requires a full sync.
    lws.upsert('nodes', node('node-a', '192.168.0.9', 'zone-b'));
    expect((await until(4, 1_000)).full).toBe(true);
    expect(b.asked).toEqual([true, true, false, true]);
  });

  it('the real backends follow the loop: partial syncs until the hour, then a full one', async () => {
    const ipt = new FakeIptablesExecutor();
    const iptables = await start(
      new IptablesBackend({ ipv4: { executor: ipt, render: { localDetector: DETECTOR } }, canary: false }),
    );
    await iptables.until(1);
    iptables.setEndpoint('10.180.0.2');
    const partial = await iptables.until(2, 1_000);
    expect(partial.families[0]).toMatchObject({ family: 4, full: false });
    const jumps = ipt.ensureJumpsCalls;
    // Half an hour later a change: still partial.
    await iptables.clock.advance(FULL_SYNC_PERIOD_MS / 2);
    iptables.setEndpoint('10.180.0.3');
    expect((await iptables.until(3, 1_000)).families[0]?.full).toBe(false);
    expect(ipt.ensureJumpsCalls).toBe(jumps);
    // An hour after the first (full) sync, a change is synced fully: the loop decided it.
    await iptables.clock.advance(FULL_SYNC_PERIOD_MS / 2);
    iptables.setEndpoint('10.180.0.4');
    const hourly = await iptables.until(4, 1_000);
    expect(hourly.families[0]).toMatchObject({ family: 4, full: true });
    expect(ipt.ensureJumpsCalls).toBe(jumps + 1);

    const nft = new FakeNftExecutor();
    const nftables = await start(
      new NftablesBackend({ ipv4: { executor: nft }, render: { localDetector: DETECTOR } }),
    );
    await nftables.until(1);
    nftables.setEndpoint('10.180.0.2');
    expect((await nftables.until(2, 1_000)).families[0]).toMatchObject({ family: 4, full: false });
    await nftables.clock.advance(FULL_SYNC_PERIOD_MS / 2);
    nftables.setEndpoint('10.180.0.3');
    expect((await nftables.until(3, 1_000)).families[0]?.full).toBe(false);
    await nftables.clock.advance(FULL_SYNC_PERIOD_MS / 2);
    nftables.setEndpoint('10.180.0.4');
    expect((await nftables.until(4, 1_000)).families[0]).toMatchObject({ family: 4, full: true });
  });
});

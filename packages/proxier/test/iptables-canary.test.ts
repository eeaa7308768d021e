/**
 * The iptables backend's canary: when another program flushes iptables, the
 * `KUBE-PROXY-CANARY` chains vanish with our rules; the backend notices on its next poll and
 * asks for a full sync, which puts everything back (kube-proxy's behaviour). Timing through
 * FakeClock, rules through the fake executor.
 */
import { FakeClock } from '@nodeagent/core/testing';
import { IptablesBackend, KUBE_PROXY_CANARY, tracePacket } from '@nodeagent/iptables';
import { FakeIptablesExecutor } from '@nodeagent/iptables/testing';
import type { BackendHost } from '@nodeagent/proxy-state';
import { ProxyState } from '@nodeagent/proxy-state';
import { afterEach, describe, expect, it } from 'vitest';
import { endpointSlice, node, service } from './fixtures.js';
import { fakeListerWatchers, startFakeClockProxier, T0 } from './support/fake-proxier.js';

const DETECTOR = { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } as const;

function flushAll(ipt: FakeIptablesExecutor): void {
  // A firewall reload: every table emptied, our chains, jumps and canaries included.
  for (const t of ['filter', 'nat', 'mangle']) ipt.flushTable(t);
}

const traceWeb = (ipt: FakeIptablesExecutor) =>
  tracePacket(ipt.tables(), { sourceIP: '10.0.0.5', destIP: '172.30.0.41', destPort: 80 });

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('IptablesBackend canary', () => {
  it('a vanished canary makes the next sync full and asks the host for it', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const ipt = new FakeIptablesExecutor();
    const backend = new IptablesBackend({
      ipv4: { executor: ipt, render: { localDetector: DETECTOR } },
      canary: { intervalMs: 10_000 },
      clock,
    });
    cleanups.push(() => backend.close());
    const requests: string[] = [];
    const host: BackendHost = { requestFullSync: (reason) => requests.push(reason) };
    backend.attach(host);
    const state = new ProxyState({ nodeName: 'node-a', nodeIPs: ['192.168.0.2'] });
    state.onServiceAdd(service('web', { clusterIP: '172.30.0.41' }));
    state.onEndpointSliceAdd(endpointSlice('web', [{ ip: '10.180.0.1' }]));

    // No canary (no timer either) before the first sync.
    expect(clock.pendingTimers()).toBe(0);
    expect(await ipt.chainExists('mangle', KUBE_PROXY_CANARY)).toBe(false);
    await backend.sync(state.checkout(), { full: true });
    for (const t of ['mangle', 'nat', 'filter'])
      expect(await ipt.chainExists(t, KUBE_PROXY_CANARY)).toBe(true);
    const synced = ipt.snapshot();
    expect(traceWeb(ipt).endpoints).toEqual(['10.180.0.1:8080']);

    // Polls with the canary in place change nothing.
    await clock.advance(30_000);
    expect(requests).toEqual([]);
    const quiet = await backend.sync(state.checkout(), { full: false });
    expect(quiet.families[0]?.full).toBe(false);

    flushAll(ipt);
    expect(traceWeb(ipt).outcome).toBe('untouched');
    await clock.advance(9_999);
    expect(requests).toEqual([]); // not polled yet
    await clock.advance(1);
    expect(requests).toEqual(['iptables canary missing (IPv4)']);
    // The canaries are back at once; the rules come back with the full sync.
    expect(await ipt.chainExists('nat', KUBE_PROXY_CANARY)).toBe(true);
    const jumpsBefore = ipt.ensureJumpsCalls;
    const r = await backend.sync(state.checkout(), { full: false });
    expect(r.families[0]).toMatchObject({ family: 4, full: true });
    expect(ipt.ensureJumpsCalls).toBe(jumpsBefore + 1);
    expect(ipt.snapshot()).toEqual(synced);
    expect(traceWeb(ipt).endpoints).toEqual(['10.180.0.1:8080']);
    // Only once: the next sync is partial again.
    expect((await backend.sync(state.checkout(), { full: false })).families[0]?.full).toBe(false);
  });

  it('cleanup and close stop the monitor; `canary: false` never starts it', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const ipt = new FakeIptablesExecutor();
    const requests: string[] = [];
    const backend = new IptablesBackend({ ipv4: { executor: ipt }, clock });
    backend.attach({ requestFullSync: (r) => requests.push(r) });
    const state = new ProxyState({ nodeName: 'node-a', nodeIPs: ['192.168.0.2'] });
    await backend.sync(state.checkout(), { full: true });
    expect(clock.pendingTimers()).toBe(1);
    await backend.cleanup(); // removes the canaries with everything else: not a flush
    expect(await ipt.chainExists('filter', KUBE_PROXY_CANARY)).toBe(false);
    await clock.advance(60_000);
    expect(requests).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
    await backend.sync(state.checkout(), { full: true }); // monitor again after a new first sync
    expect(clock.pendingTimers()).toBe(1);
    backend.close();
    expect(clock.pendingTimers()).toBe(0);

    const off = new IptablesBackend({ ipv4: { executor: new FakeIptablesExecutor() }, canary: false, clock });
    await off.sync(state.checkout(), { full: true });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('under a Proxier: flushed tables are rewritten by a full sync after the next canary poll', async () => {
    const ipt = new FakeIptablesExecutor();
    const lws = fakeListerWatchers();
    lws.upsert('services', service('web', { clusterIP: '172.30.0.41' }));
    lws.upsert('endpointslices', endpointSlice('web', [{ ip: '10.180.0.1' }]));
    lws.upsert('nodes', node('node-a', '192.168.0.2'));
    const { proxier, clock } = await startFakeClockProxier(
      (clock) =>
        new IptablesBackend({
          ipv4: { executor: ipt, render: { localDetector: DETECTOR } },
          canary: { intervalMs: 30_000 },
          clock,
        }),
      lws,
    );
    for (let i = 0; i < 50 && proxier.syncCount === 0; i++) await clock.advance(0);
    expect(proxier.syncCount).toBe(1);
    expect(proxier.lastSyncResult?.full).toBe(true);
    const synced = ipt.snapshot();
    expect(traceWeb(ipt).endpoints).toEqual(['10.180.0.1:8080']);

    await clock.advance(5_000);
    flushAll(ipt);
    expect(traceWeb(ipt).outcome).toBe('untouched');
    await clock.advance(25_000); // the poll at 30 s after the first sync finds no canary
    for (let i = 0; i < 50 && proxier.syncCount < 2; i++) await clock.advance(0);
    expect(proxier.syncCount).toBe(2);
    expect(proxier.lastSyncResult).toMatchObject({ full: true, failed: false });
    expect(proxier.lastSyncResult?.families[0]).toMatchObject({ family: 4, full: true });
    expect(ipt.snapshot()).toEqual(synced);
    expect(traceWeb(ipt).endpoints).toEqual(['10.180.0.1:8080']);
  });
});

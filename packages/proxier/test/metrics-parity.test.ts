/**
 * The kube-proxy metrics added for current-upstream parity: `sync_proxy_rules_iptables_last{table}`
 * (rules written by the last sync), `sync_proxy_rules_nftables_cleanup_failures_total`, and the
 * nfacct-backed `kubeproxy_iptables_ct_state_invalid_dropped_packets_total` /
 * `kubeproxy_iptables_localhost_nodeports_accepted_packets_total`, read on each scrape.
 */
import {
  countWrittenRules,
  IptablesBackend,
  KUBE_PROXY_NFACCT_COUNTERS,
  type NfacctClient,
  type NfacctCounter,
} from '@nodeagent/iptables';
import { FakeIptablesExecutor } from '@nodeagent/iptables/testing';
import { NftablesBackend } from '@nodeagent/nftables';
import { FakeNftExecutor } from '@nodeagent/nftables/testing';
import type { DataPlaneBackend as Backend } from '@nodeagent/proxy-state';
import * as promClient from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { NFACCT_METRICS, Proxier, registerNfacctCollectors } from '../src/index.js';
import { FakeConntrackCleaner } from '../src/testing.js';
import { endpointSlice, eventually, node, service } from './fixtures.js';
import { fakeListerWatchers } from './support/fake-proxier.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

function start(backend: Backend, extra: { nfacct?: NfacctClient } = {}) {
  const { lw, listerWatcherFor } = fakeListerWatchers();
  lw('services').upsert(service('web', { clusterIP: '172.30.0.10' }) as never);
  lw('endpointslices').upsert(endpointSlice('web', [{ ip: '10.0.1.5' }]) as never);
  lw('nodes').upsert(node('node-a', '192.168.0.2') as never);
  const registry = new promClient.Registry();
  const proxier = new Proxier({
    nodeName: 'node-a',
    backend,
    listerWatcherFor,
    minSyncPeriodMs: 0,
    healthz: false,
    healthCheckNodePorts: false,
    conntrack: new FakeConntrackCleaner(),
    metrics: { registry, promClient },
    ...extra,
  });
  stops.push(() => proxier.stop());
  return { proxier, lw, registry, started: proxier.start() };
}

describe('kubeproxy_sync_proxy_rules_iptables_last{table}', () => {
  it('is the number of rules the last sync wrote: everything on a full sync, only the changed chains after', async () => {
    const ipt = new FakeIptablesExecutor();
    const h = start(new IptablesBackend({ ipv4: { executor: ipt } }));
    await h.started;
    await eventually(async () =>
      expect(await h.registry.metrics()).toContain('kubeproxy_sync_proxy_rules_iptables_last{'),
    );
    // Every payload of the first (full, possibly chunked) sync.
    const first = countWrittenRules(ipt.restores.map((r) => r.text));
    const text = await h.registry.metrics();
    expect(text).toContain(
      `kubeproxy_sync_proxy_rules_iptables_last{table="nat",ip_family="IPv4"} ${first.nat}`,
    );
    expect(text).toContain(
      `kubeproxy_sync_proxy_rules_iptables_last{table="filter",ip_family="IPv4"} ${first.filter}`,
    );
    expect(text).toContain(
      `kubeproxy_sync_proxy_rules_iptables_total{table="nat",ip_family="IPv4"} ${first.nat}`,
    );

    const before = ipt.restores.length;
    h.lw('services').upsert(service('other', { clusterIP: '172.30.0.11' }) as never);
    h.lw('endpointslices').upsert(endpointSlice('other', [{ ip: '10.0.1.6' }]) as never);
    await eventually(async () => {
      expect(ipt.restores.length).toBeGreaterThan(before);
      const now = await h.registry.metrics();
      const last = Number(/iptables_last\{table="nat",ip_family="IPv4"\} (\d+)/.exec(now)?.[1]);
      const total = Number(/iptables_total\{table="nat",ip_family="IPv4"\} (\d+)/.exec(now)?.[1]);
      // The partial sync that programmed the new endpoint (the service and its slice may arrive
      // in two syncs; the last one carries the endpoint) rewrote the dispatch and the new
      // service's chains, not web's. A partial sync this small is one payload.
      const latest = ipt.restores.at(-1)?.text ?? '';
      expect(latest).toContain('10.0.1.6');
      expect(last).toBe(countWrittenRules([latest]).nat);
      expect(last).toBeLessThan(total);
    });
  });
});

describe('kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total', () => {
  it('counts a failed deletion of stale chains; the run still syncs', async () => {
    const nft = new FakeNftExecutor();
    const h = start(
      new NftablesBackend({
        ipv4: { executor: nft },
        render: { localDetector: { mode: 'None' } },
        staleChainDelayMs: 20,
        idleCleanupDelayMs: 20,
      }),
    );
    await h.started;
    await eventually(() => expect(nft.transactions.length).toBeGreaterThan(0));
    h.lw('services').remove('ns1/web');
    // The chains of the deleted service are flushed now and deleted by a later run, which fails once.
    await eventually(() => expect(nft.transactions.length).toBeGreaterThan(1));
    nft.failNext = new Error('injected cleanup failure');
    await eventually(async () =>
      expect(await h.registry.metrics()).toContain(
        'kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total{ip_family="IPv4"} 1',
      ),
    );
    expect(await h.registry.metrics()).not.toMatch(/nftables_sync_failures_total\{ip_family="IPv4"\} [1-9]/);
  });
});

describe('nfacct counters (custom collectors read on scrape)', () => {
  const client = (counters: () => NfacctCounter[]): NfacctClient => ({
    ensure: async () => {},
    list: async () => counters(),
  });

  it('read the counters @nodeagent/iptables writes into its rules (the names are kept in both)', () => {
    expect(NFACCT_METRICS.map((m) => m.counter).sort()).toEqual([...KUBE_PROXY_NFACCT_COUNTERS].sort());
  });

  it('expose the packet counts of the two accounting objects as counters, live', async () => {
    let invalid = 42n;
    const registry = new promClient.Registry();
    const c = client(() => [{ name: 'ct_state_invalid_dropped_pkts', packets: invalid, bytes: 4200n }]);
    registerNfacctCollectors({ registry, promClient }, c);
    let text = await registry.metrics();
    expect(text).toContain('# TYPE kubeproxy_iptables_ct_state_invalid_dropped_packets_total counter');
    expect(text).toContain('kubeproxy_iptables_ct_state_invalid_dropped_packets_total 42');
    // An object that does not exist publishes no sample.
    expect(text).not.toMatch(/^kubeproxy_iptables_localhost_nodeports_accepted_packets_total \d/m);
    invalid = 43n;
    text = await registry.metrics();
    expect(text).toContain('kubeproxy_iptables_ct_state_invalid_dropped_packets_total 43');
    // Registering again (a second proxier on the registry) keeps the first collectors.
    registerNfacctCollectors({ registry, promClient }, c);
  });

  it('a failing read publishes nothing and does not break the scrape', async () => {
    const registry = new promClient.Registry();
    registerNfacctCollectors(
      { registry, promClient },
      client(() => {
        throw new Error('nfacct: Operation not supported');
      }),
    );
    const text = await registry.metrics();
    expect(text).toContain('# HELP kubeproxy_iptables_localhost_nodeports_accepted_packets_total');
    expect(text).not.toMatch(/^kubeproxy_iptables_\w+ \d/m);
  });

  it('the Proxier registers them with metrics and an nfacct client', async () => {
    const ipt = new FakeIptablesExecutor();
    const h = start(new IptablesBackend({ ipv4: { executor: ipt } }), {
      nfacct: client(() => [{ name: 'localhost_nps_accepted_pkts', packets: 7n, bytes: 420n }]),
    });
    await h.started;
    expect(await h.registry.metrics()).toContain(
      'kubeproxy_iptables_localhost_nodeports_accepted_packets_total 7',
    );
  });
});

/**
 * The Proxier watches `ServiceCIDR` objects (`networking.k8s.io/v1`) as current kube-proxy does
 * and hands the union of their `spec.cidrs` to the nftables backend: unallocated ClusterIPs of
 * the service CIDRs are dropped in `cluster-ips-check`, following the objects live; the watch
 * does not hold back the first sync.
 */
import type { V1ServiceCIDR } from '@kubernetes/client-node';
import type { KubeObject } from '@nodeagent/informer';
import { NftablesBackend, tracePacket } from '@nodeagent/nftables';
import { dumpTable, FakeNftExecutor } from '@nodeagent/nftables/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Proxier } from '../src/index.js';
import { FakeConntrackCleaner } from '../src/testing.js';
import { endpointSlice, eventually, node, service } from './fixtures.js';
import { fakeListerWatchers } from './support/fake-proxier.js';

const DROP_RULE = 'Drop traffic to unallocated ClusterIPs';

function serviceCIDR(name: string, cidrs: string[]): V1ServiceCIDR & KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'ServiceCIDR',
    metadata: { name },
    spec: { cidrs },
  } as V1ServiceCIDR & KubeObject;
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

function setup(opts: { serviceCIDRsNeverList?: boolean } = {}) {
  const { lw, listerWatcherFor } = fakeListerWatchers();
  lw('services').upsert(service('web', { clusterIP: '172.30.0.10' }) as never);
  lw('endpointslices').upsert(endpointSlice('web', [{ ip: '10.0.1.5' }]) as never);
  lw('nodes').upsert(node('node-a', '192.168.0.2') as never);
  if (opts.serviceCIDRsNeverList)
    lw('servicecidrs').failNextList(new Error('the server could not find the requested resource'));
  const nft = new FakeNftExecutor();
  const proxier = new Proxier({
    nodeName: 'node-a',
    backend: new NftablesBackend({ ipv4: { executor: nft }, render: { localDetector: { mode: 'None' } } }),
    listerWatcherFor,
    minSyncPeriodMs: 0,
    healthz: false,
    healthCheckNodePorts: false,
    conntrack: new FakeConntrackCleaner(),
    informer: { backoff: { initialMs: 10, capMs: 20 } },
  });
  stops.push(() => proxier.stop());
  const table = () => JSON.stringify(dumpTable(nft.state.table('ip', 'kube-proxy')));
  const outcome = (destIP: string) =>
    tracePacket(nft.state.table('ip', 'kube-proxy') ?? '', { sourceIP: '10.0.0.5', destIP, destPort: 80 })
      .outcome;
  return { proxier, lw, nft, table, outcome };
}

describe('ServiceCIDR informer → nftables cluster-ips-check', () => {
  it('adds, changes and removes the drop of unallocated ClusterIPs as the objects change', async () => {
    const h = setup();
    h.lw('servicecidrs').upsert(serviceCIDR('kubernetes', ['172.30.0.0/16', 'fd00:10:96::/112']) as never);
    await h.proxier.start();
    await eventually(() =>
      expect(h.table()).toContain(`ip daddr { 172.30.0.0/16 } drop comment \\"${DROP_RULE}\\"`),
    );
    expect(h.outcome('172.30.9.9')).toBe('DROP');
    expect(h.outcome('172.30.0.10')).toBe('endpoints');
    expect(h.outcome('10.96.0.9')).toBe('untouched');

    h.lw('servicecidrs').upsert(serviceCIDR('extra', ['10.96.0.0/24']) as never);
    await eventually(() =>
      expect(h.table()).toContain(`ip daddr { 10.96.0.0/24,172.30.0.0/16 } drop comment \\"${DROP_RULE}\\"`),
    );
    expect(h.outcome('10.96.0.9')).toBe('DROP');

    h.lw('servicecidrs').remove('extra');
    h.lw('servicecidrs').remove('kubernetes');
    await eventually(() => expect(h.table()).not.toContain(DROP_RULE));
    expect(h.outcome('172.30.9.9')).toBe('untouched');
    expect(h.outcome('172.30.0.10')).toBe('endpoints');
  });

  it('an API server without ServiceCIDRs does not hold back the first sync', async () => {
    const h = setup({ serviceCIDRsNeverList: true });
    await h.proxier.start();
    await eventually(() => expect(h.outcome('172.30.0.10')).toBe('endpoints'));
    expect(h.table()).not.toContain(DROP_RULE);
  });
});

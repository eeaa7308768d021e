/**
 * `informerFactory`: the proxier takes its informers from an agent's SharedInformerFactory, so
 * the proxier and another consumer of the same resources (the kubelet half of an agent) open
 * ONE watch per resource on the API server (counted in the mini-apiserver's request log).
 */
import { KubeConfig, type V1EndpointSlice, type V1Node, type V1Service } from '@kubernetes/client-node';
import { type KubeObject, SharedInformerFactory } from '@nodeagent/informer';
import { NftablesBackend } from '@nodeagent/nftables';
import { dumpTable, FakeNftExecutor } from '@nodeagent/nftables/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type MiniApiServer, startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { Proxier } from '../src/index.js';
import { endpointSlice, eventually, node, service } from './fixtures.js';

const NODE = 'node-a';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Watch requests the server received, per resource path (`/api/v1/services`, …). */
function watchesByPath(server: MiniApiServer): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of server.requests) if (r.watch) out[r.path] = (out[r.path] ?? 0) + 1;
  return out;
}

async function setup(): Promise<{ server: MiniApiServer; kc: KubeConfig; nft: FakeNftExecutor }> {
  const server = await startMiniApiServer({ bookmarkIntervalMs: 0, autoCreateNamespaces: true });
  cleanups.push(() => server.stop());
  server.store.create('nodes', node(NODE, '192.168.0.2') as never);
  server.store.create('services', service('web', { clusterIP: '172.30.0.41' }) as never);
  server.store.create('endpointslices', endpointSlice('web', [{ ip: '10.180.0.1' }]) as never);
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig);
  return { server, kc, nft: new FakeNftExecutor() };
}

function proxierOn(factory: SharedInformerFactory, nft: FakeNftExecutor): Proxier {
  const proxier = new Proxier({
    nodeName: NODE,
    informerFactory: factory,
    backend: new NftablesBackend({ ipv4: { executor: nft }, staleChainDelayMs: 30, idleCleanupDelayMs: 30 }),
    minSyncPeriodMs: 10,
    healthz: false,
    healthCheckNodePorts: false,
    conntrack: false,
  });
  cleanups.push(() => proxier.stop());
  return proxier;
}

describe('Proxier on a shared SharedInformerFactory', () => {
  it('shares one watch per resource with another consumer (started before the proxier)', async () => {
    const { server, kc, nft } = await setup();
    const factory = new SharedInformerFactory({ kubeConfig: kc });
    cleanups.push(() => factory.stop());
    // The other consumer: the same Services, EndpointSlices and own Node (same selector).
    const seen = { services: 0, slices: 0, nodes: 0 };
    factory.services<V1Service & KubeObject>().addEventHandler({ onAdd: () => void seen.services++ });
    factory
      .endpointSlices<V1EndpointSlice & KubeObject>()
      .addEventHandler({ onAdd: () => void seen.slices++ });
    factory
      .nodes<V1Node & KubeObject>({ fieldSelector: `metadata.name=${NODE}` })
      .addEventHandler({ onAdd: () => void seen.nodes++ });
    await factory.start(AbortSignal.timeout(10_000));

    const proxier = proxierOn(factory, nft);
    await proxier.start(AbortSignal.timeout(10_000));
    await eventually(() => proxier.syncCount >= 1 && nft.transactions.length > 0);
    // A change reaches both consumers through the one watch.
    server.store.create('services', service('api', { clusterIP: '172.30.0.42' }) as never);
    const table = () => JSON.stringify(dumpTable(nft.state.table('ip', 'kube-proxy')));
    await eventually(() => seen.services === 2 && table().includes('172.30.0.42'));

    await eventually(() =>
      expect(watchesByPath(server)).toMatchObject({
        '/api/v1/services': 1,
        '/apis/discovery.k8s.io/v1/endpointslices': 1,
        '/api/v1/nodes': 1,
      }),
    );
    const watches = watchesByPath(server);
    // The ServiceCIDR informer (the nftables backend drops unallocated ClusterIPs) is the proxier's own.
    expect(watches['/apis/networking.k8s.io/v1/servicecidrs'] ?? 0).toBeLessThanOrEqual(1);
    expect(seen).toEqual({ services: 2, slices: 1, nodes: 1 });

    // Stopping the proxier leaves the factory (and the other consumer) running.
    await proxier.stop();
    server.store.create('services', service('db', { clusterIP: '172.30.0.43' }) as never);
    await eventually(() => seen.services === 3);
    expect(watchesByPath(server)['/api/v1/services']).toBe(1);
  });

  it('contrast: without informerFactory the proxier opens watches of its own (the count sees them)', async () => {
    const { server, kc, nft } = await setup();
    const factory = new SharedInformerFactory({ kubeConfig: kc });
    cleanups.push(() => factory.stop());
    factory.services<V1Service & KubeObject>().addEventHandler({ onAdd: () => {} });
    await factory.start(AbortSignal.timeout(10_000));
    const proxier = new Proxier({
      nodeName: NODE,
      kubeConfig: kc,
      backend: new NftablesBackend({ ipv4: { executor: nft } }),
      healthz: false,
      healthCheckNodePorts: false,
      conntrack: false,
    });
    cleanups.push(() => proxier.stop());
    await proxier.start(AbortSignal.timeout(10_000));
    await eventually(() => expect(watchesByPath(server)['/api/v1/services']).toBe(2));
  });

  it('waits for a factory its owner starts later, and opens no watch of its own', async () => {
    const { server, kc, nft } = await setup();
    const factory = new SharedInformerFactory({ kubeConfig: kc });
    cleanups.push(() => factory.stop());
    const proxier = proxierOn(factory, nft);
    let started = false;
    const starting = proxier.start(AbortSignal.timeout(10_000)).then(() => {
      started = true;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toBe(false);
    expect(server.requests.filter((r) => r.watch || r.method === 'GET')).toEqual([]);
    await factory.start(AbortSignal.timeout(10_000));
    await starting;
    await eventually(() => proxier.syncCount >= 1);
    await eventually(() =>
      expect(watchesByPath(server)).toMatchObject({
        '/api/v1/services': 1,
        '/apis/discovery.k8s.io/v1/endpointslices': 1,
        '/api/v1/nodes': 1,
      }),
    );
  });

  it('a proxier stopped while waiting for an unstarted shared factory rejects its start', async () => {
    const { kc } = await setup();
    const factory = new SharedInformerFactory({ kubeConfig: kc });
    cleanups.push(() => factory.stop());
    const proxier = proxierOn(factory, new FakeNftExecutor());
    const starting = proxier.start();
    await proxier.stop();
    await expect(starting).rejects.toThrow(/stopped before its informers synced/);
  });

  it('needs informerFactory, kubeConfig or listerWatcherFor', () => {
    expect(
      () =>
        new Proxier({
          nodeName: NODE,
          backend: new NftablesBackend({ ipv4: { executor: new FakeNftExecutor() } }),
        }),
    ).toThrow('Proxier needs informerFactory, kubeConfig or listerWatcherFor');
  });
});

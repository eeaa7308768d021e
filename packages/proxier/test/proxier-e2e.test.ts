/**
 * End to end over real HTTP: mini-apiserver → informers → proxy-state → Proxier → the FAKE
 * iptables and FAKE nftables executors. "Converged" means the fake kernel holds exactly what a
 * fresh full sync of the server's current objects writes.
 */
import { createServer } from 'node:net';
import { KubeConfig, type V1Node } from '@kubernetes/client-node';
import {
  collectionPath,
  type InformerRequest,
  type ListerWatcher,
  RestListerWatcher,
} from '@nodeagent/informer';
import {
  IptablesBackend,
  IptablesSyncer,
  snapshotRenderOptions as iptRenderOptions,
  tracePacket as iptTrace,
  KUBE_PROXY_CANARY,
} from '@nodeagent/iptables';
import { FakeIptablesExecutor } from '@nodeagent/iptables/testing';
import {
  NftablesBackend,
  NftSyncer,
  snapshotRenderOptions as nftRenderOptions,
  tracePacket as nftTrace,
} from '@nodeagent/nftables';
import { dumpTable, FakeNftExecutor } from '@nodeagent/nftables/testing';
import {
  type DataPlaneBackend as Backend,
  buildProxySnapshots,
  InvalidServiceError,
  type ProxySnapshot,
} from '@nodeagent/proxy-state';
import { afterEach, describe, expect, it } from 'vitest';
import { type MiniApiServer, startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { Proxier, type ProxierOptions } from '../src/index.js';
import { FakeConntrackCleaner } from '../src/testing.js';
import { endpointSlice, eventually, node, service } from './fixtures.js';

const NODE = 'node-a';
const NODE_IP = '192.168.0.2';
const DETECTOR = { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } as const;

interface Harness {
  readonly backend: Backend;
  /** Anything written to the fake kernel so far. */
  writes(): number;
  /** The fake kernel's state, comparable with toEqual. */
  live(): unknown;
  /** What a fresh full sync of `snapshot` leaves in a fresh fake kernel. */
  fresh(snapshot: ProxySnapshot): Promise<unknown>;
  /** Where a TCP packet from a pod to dest:port goes. */
  trace(destIP: string, destPort: number): { outcome: string; endpoints: readonly string[] };
}

/** The server of the running test: its ServiceCIDRs are what the proxier's `cluster-ips-check` drops. */
let currentServer: MiniApiServer | undefined;
const serviceCIDRs = (): string[] =>
  (currentServer?.store.list('servicecidrs') ?? []).flatMap((o) =>
    ((o as { spec?: { cidrs?: string[] } }).spec?.cidrs ?? []).filter((c) => !c.includes(':')),
  );

const BACKENDS: Record<string, () => Harness> = {
  iptables: () => {
    const ipt = new FakeIptablesExecutor();
    return {
      backend: new IptablesBackend({ ipv4: { executor: ipt, render: { localDetector: DETECTOR } } }),
      writes: () => ipt.restores.length + ipt.ensureJumpsCalls,
      live: () => ipt.snapshot(),
      async fresh(snapshot) {
        const f = new FakeIptablesExecutor();
        await new IptablesSyncer({
          executor: f,
          render: iptRenderOptions(snapshot, { localDetector: DETECTOR }),
        }).syncSnapshot(snapshot);
        // The backend's canary monitor keeps kube-proxy's empty canary chains next to the rules.
        for (const t of ['mangle', 'nat', 'filter']) await f.ensureChain(t, KUBE_PROXY_CANARY);
        return f.snapshot();
      },
      trace: (destIP, destPort) => iptTrace(ipt.tables(), { sourceIP: '10.0.0.5', destIP, destPort }),
    };
  },
  nftables: () => {
    const nft = new FakeNftExecutor();
    return {
      backend: new NftablesBackend({
        ipv4: { executor: nft },
        render: { localDetector: DETECTOR },
        staleChainDelayMs: 30,
        idleCleanupDelayMs: 30,
      }),
      writes: () => nft.transactions.length,
      live: () => dumpTable(nft.state.table('ip', 'kube-proxy')),
      async fresh(snapshot) {
        const f = new FakeNftExecutor();
        await new NftSyncer({
          executor: f,
          render: nftRenderOptions(snapshot, { localDetector: DETECTOR, serviceCIDRs: serviceCIDRs() }),
        }).sync(snapshot);
        return dumpTable(f.state.table('ip', 'kube-proxy'));
      },
      trace: (destIP, destPort) =>
        nftTrace(nft.state.table('ip', 'kube-proxy') ?? '', { sourceIP: '10.0.0.5', destIP, destPort }),
    };
  },
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  backendName: string,
  extra: Partial<ProxierOptions> & { gateSlices?: Promise<void> } = {},
): Promise<{ server: MiniApiServer; proxier: Proxier; h: Harness; started: Promise<void> }> {
  const server = await startMiniApiServer({ bookmarkIntervalMs: 0, autoCreateNamespaces: true });
  currentServer = server;
  cleanups.push(() => server.stop());
  server.store.create('nodes', node(NODE, NODE_IP) as never);
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig);
  const h = BACKENDS[backendName]!();
  const gate = extra.gateSlices;
  const listerWatcherFor = (req: InformerRequest): ListerWatcher => {
    const lw = new RestListerWatcher({ kubeConfig: kc, path: collectionPath(req) });
    if (!gate || req.resource !== 'endpointslices') return lw;
    return {
      list: async (o, s) => {
        await gate;
        return lw.list(o, s);
      },
      watch: (o, s, a) => lw.watch(o, s, a),
    };
  };
  const proxier = new Proxier({
    nodeName: NODE,
    backend: h.backend,
    listerWatcherFor,
    minSyncPeriodMs: 10,
    syncPeriodMs: 100,
    healthz: { bindAddress: '127.0.0.1:0' },
    healthCheckNodePorts: { bindAddresses: ['127.0.0.1'] },
    conntrack: new FakeConntrackCleaner(),
    informer: { backoff: { initialMs: 20, capMs: 100 } },
    ...extra,
  });
  cleanups.push(() => proxier.stop());
  const started = proxier.start();
  started.catch(() => {});
  return { server, proxier, h, started };
}

/** Waits until the fake kernel equals a fresh full sync of the server's objects. */
async function converged(server: MiniApiServer, h: Harness): Promise<void> {
  await eventually(async () => {
    const { v4 } = buildProxySnapshots({
      nodeName: NODE,
      services: server.store.list('services') as never,
      endpointSlices: server.store.list('endpointslices') as never,
      node: server.store.get('nodes', undefined, NODE) as unknown as V1Node,
    });
    expect(h.live()).toEqual(await h.fresh(v4));
  });
}

describe.each(Object.keys(BACKENDS))('Proxier end to end with the fake %s executor', (backendName) => {
  it('writes no rule before the Service and EndpointSlice informers have synced', async () => {
    let open!: () => void;
    const gateSlices = new Promise<void>((r) => {
      open = r;
    });
    const { server, proxier, h, started } = await setup(backendName, { gateSlices });
    server.store.create('services', service('web', { clusterIP: '172.30.0.41' }) as never);
    // Services are listed and delivered; EndpointSlices are still held back.
    await eventually(() => proxier.state.changeCounts.serviceChangesTotal >= 1);
    server.store.create('services', service('api', { clusterIP: '172.30.0.42' }) as never);
    await eventually(() => proxier.state.changeCounts.serviceChangesTotal >= 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(proxier.initialized).toBe(false);
    expect(proxier.syncCount).toBe(0);
    expect(h.writes()).toBe(0);
    server.store.create('endpointslices', endpointSlice('web', [{ ip: '10.180.0.1' }]) as never);
    open();
    await started;
    expect(proxier.initialized).toBe(true);
    await converged(server, h);
    expect(h.trace('172.30.0.41', 80)).toMatchObject({
      outcome: 'endpoints',
      endpoints: ['10.180.0.1:8080'],
    });
    expect(h.trace('172.30.0.42', 80).outcome).toBe('REJECT');
  });

  it('converges after creates, updates and deletes', async () => {
    const { server, h, started } = await setup(backendName);
    await started;
    const s = server.store;
    s.create('services', service('web', { clusterIP: '172.30.0.41' }) as never);
    s.create('endpointslices', endpointSlice('web', [{ ip: '10.180.0.1' }]) as never);
    s.create(
      'services',
      service('np', {
        type: 'NodePort',
        clusterIP: '172.30.0.43',
        ports: [{ name: 'p80', port: 80, nodePort: 30080, protocol: 'TCP' }],
      }) as never,
    );
    s.create('endpointslices', endpointSlice('np', [{ ip: '10.180.0.3', nodeName: NODE }]) as never);
    await converged(server, h);
    expect(h.trace('172.30.0.41', 80).endpoints).toEqual(['10.180.0.1:8080']);

    s.update(
      'endpointslices',
      endpointSlice('web', [
        { ip: '10.180.0.1' },
        { ip: '10.180.0.2' },
        { ip: '10.180.0.9', ready: false },
      ]) as never,
    );
    s.patch('services', 'ns1', 'np', 'merge', { spec: { sessionAffinity: 'ClientIP' } });
    await converged(server, h);
    expect(h.trace('172.30.0.41', 80).endpoints).toEqual(['10.180.0.1:8080', '10.180.0.2:8080']);

    s.delete('services', 'ns1', 'np');
    s.delete('endpointslices', 'ns1', 'np-abc');
    s.delete('endpointslices', 'ns1', 'web-abc');
    await converged(server, h);
    expect(h.trace('172.30.0.41', 80).outcome).toBe('REJECT');
    expect(h.trace('172.30.0.43', 80).outcome).toBe('untouched');
  });

  it('reports a malformed Service as a typed event, skips it and programs the others', async () => {
    const { server, proxier, h, started } = await setup(backendName);
    const errors: unknown[] = [];
    proxier.on('objectError', (e) => errors.push(e));
    await started;
    server.store.create('services', service('bad', { clusterIP: '172.30.0.999' }) as never);
    server.store.create('services', service('good', { clusterIP: '172.30.0.50' }) as never);
    server.store.create('endpointslices', endpointSlice('good', [{ ip: '10.180.0.5' }]) as never);
    await converged(server, h);
    await eventually(() => errors.length >= 1);
    expect(errors[0]).toBeInstanceOf(InvalidServiceError);
    expect((errors[0] as InvalidServiceError).serviceName).toBe('bad');
    expect((errors[0] as Error).message).toContain('172.30.0.999');
    expect(h.trace('172.30.0.50', 80).endpoints).toEqual(['10.180.0.5:8080']);
  });

  it('loses no change across dropped watches, 410 Expired and failing requests', async () => {
    const { server, h, started } = await setup(backendName);
    await started;
    const s = server.store;
    s.create('services', service('a', { clusterIP: '172.30.1.1' }) as never);
    s.create('endpointslices', endpointSlice('a', [{ ip: '10.180.1.1' }]) as never);
    await converged(server, h);

    server.faults.dropWatches();
    s.create('services', service('b', { clusterIP: '172.30.1.2' }) as never);
    s.create('endpointslices', endpointSlice('b', [{ ip: '10.180.1.2' }]) as never);
    s.delete('endpointslices', 'ns1', 'a-abc');
    await converged(server, h);

    server.faults.expireWatches();
    s.update('endpointslices', endpointSlice('b', [{ ip: '10.180.1.3' }]) as never);
    s.delete('services', 'ns1', 'a');
    server.faults.failNext(2, { code: 500 });
    server.faults.dropWatches();
    s.create('services', service('c', { clusterIP: '172.30.1.4' }) as never);
    await converged(server, h);
    expect(h.trace('172.30.1.2', 80).endpoints).toEqual(['10.180.1.3:8080']);
    expect(h.trace('172.30.1.1', 80).outcome).toBe('untouched');
  });
});

describe('Proxier side channels: healthz, health-check node ports, conntrack, metrics', () => {
  it('serves healthz and health-check node ports, clears stale UDP conntrack and records kubeproxy_ metrics', async () => {
    const promClient = await import('prom-client');
    const registry = new promClient.Registry();
    const conntrack = new FakeConntrackCleaner();
    const hcPort = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const { server, proxier, h, started } = await setup('iptables', {
      conntrack,
      metrics: { registry, promClient },
    });
    await started;
    const s = server.store;
    s.create(
      'services',
      service('lb', {
        type: 'LoadBalancer',
        clusterIP: '172.30.2.1',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: hcPort,
        ports: [{ name: 'p80', port: 80, nodePort: 30090, protocol: 'TCP' }],
      }) as never,
    );
    s.create(
      'services',
      service('dns', {
        clusterIP: '172.30.2.10',
        ports: [{ name: 'p80', port: 53, protocol: 'UDP' }],
      }) as never,
    );
    const triggered = new Date().toISOString();
    const lbSlice = endpointSlice('lb', [
      { ip: '10.180.2.1', nodeName: NODE },
      { ip: '10.180.2.2', nodeName: 'other' },
    ]);
    lbSlice.metadata!.annotations = { 'endpoints.kubernetes.io/last-change-trigger-time': triggered };
    s.create('endpointslices', lbSlice as never);
    s.create(
      'endpointslices',
      endpointSlice('dns', [{ ip: '10.180.2.3' }], { port: 5353, protocol: 'UDP' }) as never,
    );
    await converged(server, h);

    const hc = await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${hcPort}/`);
      expect(res.status).toBe(200);
      return JSON.parse(await res.text()) as unknown;
    });
    expect(hc).toEqual({
      service: { namespace: 'ns1', name: 'lb' },
      localEndpoints: 1,
      serviceProxyHealthy: true,
    });
    const healthz = await fetch(`http://127.0.0.1:${proxier.healthz!.port}/healthz`);
    expect(healthz.status).toBe(200);
    expect(await healthz.json()).toMatchObject({
      healthy: true,
      nodeEligible: true,
      status: { IPv4: { healthy: true } },
    });

    // The UDP service went from no endpoints to one: its cluster IP's entries are cleared.
    await eventually(() =>
      expect(conntrack.cleared).toContainEqual({ kind: 'ip', family: 4, ip: '172.30.2.10' }),
    );
    s.update('endpointslices', endpointSlice('dns', [], { port: 5353, protocol: 'UDP' }) as never);
    await eventually(() =>
      expect(conntrack.cleared).toContainEqual({
        kind: 'nat',
        family: 4,
        origDst: '172.30.2.10',
        dstNat: '10.180.2.3',
      }),
    );

    // The local endpoint goes away: the health check turns 503, then the port closes with the service.
    s.update('endpointslices', endpointSlice('lb', [{ ip: '10.180.2.2', nodeName: 'other' }]) as never);
    await eventually(async () => expect((await fetch(`http://127.0.0.1:${hcPort}/`)).status).toBe(503));
    s.delete('services', 'ns1', 'lb');
    await eventually(async () => {
      await expect(fetch(`http://127.0.0.1:${hcPort}/`)).rejects.toThrow();
    });

    // Node tainted for deletion → /healthz 503, /livez 200.
    s.patch('nodes', undefined, NODE, 'merge', {
      spec: { taints: [{ key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' }] },
    });
    await eventually(async () =>
      expect((await fetch(`http://127.0.0.1:${proxier.healthz!.port}/healthz`)).status).toBe(503),
    );
    expect((await fetch(`http://127.0.0.1:${proxier.healthz!.port}/livez`)).status).toBe(200);

    const text = await registry.metrics();
    expect(text).toMatch(/kubeproxy_sync_proxy_rules_duration_seconds_count\{ip_family="IPv4"\} [1-9]/);
    expect(text).toMatch(/kubeproxy_sync_full_proxy_rules_duration_seconds_count\{ip_family="IPv4"\} [1-9]/);
    expect(text).toMatch(
      /kubeproxy_sync_partial_proxy_rules_duration_seconds_count\{ip_family="IPv4"\} [1-9]/,
    );
    expect(text).toMatch(/kubeproxy_sync_proxy_rules_endpoint_changes_total [1-9]/);
    expect(text).toMatch(/kubeproxy_sync_proxy_rules_service_changes_total [1-9]/);
    expect(text).toMatch(/kubeproxy_sync_proxy_rules_last_timestamp_seconds\{ip_family="IPv4"\} \d/);
    expect(text).toMatch(/kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds \d/);
    expect(text).toMatch(/kubeproxy_sync_proxy_rules_iptables_total\{table="nat",ip_family="IPv4"\} [1-9]/);
    expect(text).toMatch(/kubeproxy_network_programming_duration_seconds_count 1\n/);
    expect(text).toContain('kubeproxy_proxy_healthz_total{code="503"} 1');
  });

  it('a failed sync is retried as a full sync after syncPeriod, and healthz reports it', async () => {
    const ipt = new FakeIptablesExecutor();
    const backend = new IptablesBackend({ ipv4: { executor: ipt } });
    const { server, proxier, started } = await setup('iptables', { backend, syncPeriodMs: 150 });
    const syncErrors: unknown[] = [];
    proxier.on('syncError', (e) => syncErrors.push(e));
    await started;
    await eventually(() => proxier.syncCount >= 1);
    ipt.failNextRestore();
    server.store.create('services', service('web', { clusterIP: '172.30.3.1' }) as never);
    await eventually(() => syncErrors.length === 1);
    const failedAt = proxier.syncCount;
    await eventually(() => proxier.syncCount > failedAt && proxier.lastSyncResult?.failed === false);
    expect(proxier.lastSyncResult?.full).toBe(true);
    expect(iptTrace(ipt.tables(), { sourceIP: '10.0.0.5', destIP: '172.30.3.1', destPort: 80 }).outcome).toBe(
      'REJECT',
    );
    expect(proxier.healthz!.isHealthy()).toBe(true);
  });
});

describe('Proxier lifecycle', () => {
  it('the start signal bounds only readiness: aborting it later leaves the proxier running until stop()', async () => {
    const server = await startMiniApiServer({ bookmarkIntervalMs: 0, autoCreateNamespaces: true });
    currentServer = server;
    currentServer = server;
    cleanups.push(() => server.stop());
    server.store.create('nodes', node(NODE, NODE_IP) as never);
    const kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig);
    const h = BACKENDS.iptables!();
    const proxier = new Proxier({
      nodeName: NODE,
      backend: h.backend,
      listerWatcherFor: (req) => new RestListerWatcher({ kubeConfig: kc, path: collectionPath(req) }),
      minSyncPeriodMs: 10,
      syncPeriodMs: 100,
      healthz: { bindAddress: '127.0.0.1:0' },
      healthCheckNodePorts: false,
      conntrack: new FakeConntrackCleaner(),
    });
    cleanups.push(() => proxier.stop());
    const ac = new AbortController();
    await proxier.start(ac.signal);
    ac.abort();
    await expect(proxier.start()).rejects.toThrow(/already started/);
    server.store.create('services', service('web', { clusterIP: '172.30.0.41' }) as never);
    server.store.create('endpointslices', endpointSlice('web', [{ ip: '10.180.0.1' }]) as never);
    await converged(server, h);
    expect((await fetch(`http://127.0.0.1:${proxier.healthz!.port}/livez`)).status).toBe(200);
    await proxier.stop();
    await proxier.stop(); // idempotent
    await expect(fetch(`http://127.0.0.1:${proxier.healthz!.port}/livez`)).rejects.toThrow();
  });

  it('an already-aborted start signal rejects and leaves nothing running', async () => {
    const h = BACKENDS.iptables!();
    const proxier = new Proxier({
      nodeName: NODE,
      backend: h.backend,
      listerWatcherFor: () => {
        throw new Error('not reached');
      },
      healthz: { bindAddress: '127.0.0.1:0' },
      conntrack: false,
    });
    cleanups.push(() => proxier.stop());
    await expect(proxier.start(AbortSignal.abort(new Error('gave up')))).rejects.toThrow('gave up');
    expect(proxier.initialized).toBe(false);
    expect(h.writes()).toBe(0);
  });
});

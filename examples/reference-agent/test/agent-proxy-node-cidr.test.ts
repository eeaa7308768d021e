// kube-proxy in the agent with `--detect-local-mode NodeCIDR` (proxy-wiring.ts) waits as
// kube-proxy's NodeManager waits (pkg/proxy/node.go): no backend is built before this node's
// Node has spec.podCIDRs; the Node gets its CIDR after a while → the proxier starts with NodeCIDR
// detection (`! -s <podCIDR>` masquerade rule); shutdown during the wait rejects cleanly with the
// signal's reason; the timeout fails with kube-proxy's reason. And `--nodeport-addresses`
// resolved per family as `NewNodePortAddresses` + `GetNodeIPs` over the interface addresses.
// Informers over FakeListerWatchers; rules rendered in memory only.
import type { V1Node } from '@kubernetes/client-node';
import type { LogFn, Logger } from '@nodeagent/core';
import type { InformerRequest, KubeObject, ListerWatcher } from '@nodeagent/informer';
import { SharedInformerFactory } from '@nodeagent/informer';
import { FakeListerWatcher } from '@nodeagent/informer/testing';
import { NodeWaitTimeoutError } from '@nodeagent/proxier';
import promClient from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../src/agent.js';
import { runCli } from '../src/cli.js';
import { type AgentProxy, nodePortIPs, type ProxySettings, startAgentProxy } from '../src/proxy-wiring.js';
import { freePort } from './agent-process.js';
import { FAST_AGENT_TIMINGS, testLogger, waitFor } from './helpers.js';

const NODE = 'cidr-node';

function nodeObject(podCIDRs?: string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE },
    ...(podCIDRs ? { spec: { podCIDR: podCIDRs[0], podCIDRs } } : {}),
    status: { addresses: [{ type: 'InternalIP', address: '192.0.2.41' }] },
  } as unknown as KubeObject;
}

const running: { proxy?: AgentProxy; factory?: SharedInformerFactory }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.proxy?.stop();
    await r.factory?.stop();
  }
});

function harness(settings: Partial<ProxySettings>, opts: { timeoutMs?: number; signal?: AbortSignal } = {}) {
  const lws: Record<string, FakeListerWatcher> = {
    services: new FakeListerWatcher(),
    endpointslices: new FakeListerWatcher(),
    nodes: new FakeListerWatcher(),
    servicecidrs: new FakeListerWatcher(),
  };
  lws.nodes!.upsert(nodeObject());
  lws.services!.upsert({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: 'default', name: 'web' },
    spec: { clusterIP: '10.96.0.50', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  } as unknown as KubeObject);
  lws.endpointslices!.upsert({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace: 'default', name: 'web-1', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: [{ addresses: ['10.244.5.7'], conditions: { ready: true } }],
  } as unknown as KubeObject);
  const factory = new SharedInformerFactory({
    listerWatcherFor: (req: InformerRequest): ListerWatcher => lws[req.resource]!,
  });
  const node = factory.nodes<V1Node & KubeObject>({ fieldSelector: `metadata.name=${NODE}` });
  const registry = new promClient.Registry();
  const entry: { proxy?: AgentProxy; factory?: SharedInformerFactory } = { factory };
  running.push(entry);
  const lines: string[] = [];
  const base = testLogger();
  const record =
    (fn: LogFn): LogFn =>
    (o: Readonly<Record<string, unknown>> | string, m?: string) => {
      lines.push(typeof o === 'string' ? o : `${m ?? ''} ${JSON.stringify(o)}`);
      if (typeof o === 'string') fn(o);
      else fn(o, m);
    };
  const logger: Logger = {
    ...base,
    info: record(base.info),
    error: record(base.error),
    child: () => logger,
  };
  let built = false;
  const starting = factory.start(AbortSignal.timeout(10_000)).then(() =>
    startAgentProxy({
      settings: {
        mode: 'iptables',
        renderOnly: true,
        healthzBindAddress: '',
        metricsBindAddress: '',
        minSyncPeriodMs: 0,
        ...settings,
      },
      nodeName: NODE,
      nodeIPs: ['192.0.2.41'],
      node: () => node.lister.list()[0],
      nodePollIntervalMs: 20,
      ...(opts.timeoutMs !== undefined ? { nodeWaitTimeoutMs: opts.timeoutMs } : {}),
      interfaceAddresses: async () => {
        built = true;
        return ['192.0.2.41', '127.0.0.1'];
      },
      informers: factory,
      metrics: { registry, promClient },
      metricsText: registry,
      rootDir: undefined,
      embeddedRuntime: true,
      signal: opts.signal,
      logger,
    }),
  );
  void starting.then(
    (p) => {
      entry.proxy = p;
    },
    () => {},
  );
  return {
    starting,
    built: () => built,
    log: () => lines.join('\n'),
    setPodCIDRs: (cidrs: string[]) => lws.nodes!.upsert(nodeObject(cidrs)),
  };
}

describe('kube-proxy in the agent: --detect-local-mode NodeCIDR waits for the PodCIDRs', () => {
  it('the Node gets its CIDR after a while → the proxier starts with NodeCIDR detection', async () => {
    const h = harness({ detectLocalMode: 'NodeCIDR', nodePortAddresses: ['192.0.2.0/24'] });
    await waitFor(
      'the wait is logged',
      () => h.log().includes('does not have any PodCIDR allocated') || undefined,
    );
    await new Promise((r) => setTimeout(r, 150));
    // Still waiting: no backend built (the NodePort addresses are read while building them).
    expect(h.built()).toBe(false);
    h.setPodCIDRs(['10.244.5.0/24']);
    const proxy = await h.starting;
    expect(h.log()).toContain('Successfully retrieved the PodCIDRs of the node');
    const rules = await waitFor('rules rendered', async () => {
      const t = await proxy.rules();
      return t.includes('-d 10.96.0.50') ? t : undefined;
    });
    // kube-proxy's NodeCIDR detector: masquerade cluster-IP traffic not from this node's pods.
    expect(rules).toContain('! -s 10.244.5.0/24');
    // A later change is reported as kube-proxy reports it (the agent keeps running).
    h.setPodCIDRs(['10.244.6.0/24']);
    await waitFor(
      'the change is logged',
      () => h.log().includes('PodCIDRs changed for the node') || undefined,
    );
  });

  it('shutdown during the wait rejects with the signal reason and builds nothing', async () => {
    const ac = new AbortController();
    const h = harness({ detectLocalMode: 'NodeCIDR' }, { signal: ac.signal });
    await waitFor(
      'the wait is logged',
      () => h.log().includes('does not have any PodCIDR allocated') || undefined,
    );
    ac.abort(new Error('agent stopping'));
    await expect(h.starting).rejects.toThrow('agent stopping');
    expect(h.built()).toBe(false);
  });

  it("the timeout fails with kube-proxy's reason", async () => {
    const h = harness({ detectLocalMode: 'NodeCIDR' }, { timeoutMs: 150 });
    await expect(h.starting).rejects.toThrow(
      new NodeWaitTimeoutError(NODE, `node "${NODE}" does not have any PodCIDR allocated`),
    );
  });

  it('ClusterCIDR mode does not wait', async () => {
    const h = harness({ clusterCIDRs: ['10.244.0.0/16'] });
    const proxy = await h.starting;
    const rules = await waitFor('rules rendered', async () => {
      const t = await proxy.rules();
      return t.includes('-d 10.96.0.50') ? t : undefined;
    });
    expect(rules).toContain('! -s 10.244.0.0/16');
  });
});

describe('nodePortIPs (kube-proxy NewNodePortAddresses + GetNodeIPs per family)', () => {
  const addrs = async () => ['192.0.2.41', '192.0.2.99', '198.51.100.1', '127.0.0.1', '2001:db8::41', '::1'];
  it('CIDRs select the local interface addresses inside them, per family', async () => {
    expect(await nodePortIPs(['192.0.2.0/24'], 'iptables', ['192.0.2.41'], 4, addrs)).toEqual([
      '192.0.2.41',
      '192.0.2.99',
    ]);
    // No IPv6 CIDR: IPv6 gets every local address (the zero CIDR: undefined = addrtype LOCAL).
    expect(await nodePortIPs(['192.0.2.0/24'], 'iptables', ['192.0.2.41'], 6, addrs)).toBeUndefined();
  });

  it('primary is the node IP of each family; a family without one gets all addresses', async () => {
    expect(await nodePortIPs(['primary'], 'iptables', ['192.0.2.41'], 4, addrs)).toEqual(['192.0.2.41']);
    expect(await nodePortIPs(['primary'], 'iptables', ['192.0.2.41'], 6, addrs)).toBeUndefined();
    // A loopback node IP is no primary address.
    expect(await nodePortIPs(['primary'], 'iptables', ['127.0.0.1'], 4, addrs)).toBeUndefined();
  });

  it('nftables defaults to primary; iptables to all', async () => {
    expect(await nodePortIPs([], 'nftables', ['192.0.2.41', '2001:db8::41'], 6, addrs)).toEqual([
      '2001:db8::41',
    ]);
    expect(await nodePortIPs([], 'iptables', ['192.0.2.41'], 4, addrs)).toBeUndefined();
  });

  it('loopback addresses are left out (no localhost NodePorts in the agent); no match is none', async () => {
    expect(await nodePortIPs(['127.0.0.0/8', '192.0.2.41/32'], 'iptables', [], 4, addrs)).toEqual([
      '192.0.2.41',
    ]);
    expect(await nodePortIPs(['203.0.113.0/24'], 'iptables', [], 4, addrs)).toEqual([]);
  });
});

describe('the agent command line: SIGTERM during the NodeCIDR wait', () => {
  it('stops cleanly (exit 0) while the Node has no PodCIDR (embedded API server, no --pod-cidr)', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const stop = new AbortController();
    const code = runCli(
      [
        '--node-name=ncidr-cli',
        '--proxy-mode=iptables',
        '--detect-local-mode=NodeCIDR',
        '--proxy-healthz-bind-address=127.0.0.1:0',
        '--proxy-metrics-bind-address=',
        '--log-level=info',
      ],
      {
        stdout: { write: (t: string) => out.push(t) },
        stderr: { write: (t: string) => err.push(t) },
        signal: stop.signal,
        handleSignals: false,
      },
    );
    await waitFor(
      'the wait is logged',
      () => err.join('').includes('node \\"ncidr-cli\\" does not have any PodCIDR allocated') || undefined,
      30_000,
    );
    stop.abort();
    expect(await code).toBe(0);
    expect(out.join('')).toContain('stopping the node agent');
    expect(out.join('')).not.toContain('is running');
    expect(err.join('')).not.toContain('could not start');
  }, 60_000);
});

describe('runAgent: the standalone /healthz during the NodeCIDR wait', () => {
  it('answers while kube-proxy still waits for the PodCIDRs; the start then stops cleanly', async () => {
    const port = await freePort();
    const stop = new AbortController();
    const starting = runAgent({
      nodeName: 'ncidr-health',
      healthPort: port,
      startSignal: stop.signal,
      proxy: {
        mode: 'iptables',
        renderOnly: true,
        detectLocalMode: 'NodeCIDR',
        healthzBindAddress: '',
        metricsBindAddress: '',
      },
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
    });
    let started = false;
    void starting.then(
      () => {
        started = true;
      },
      () => {},
    );
    const res = await waitFor(
      '/healthz answers',
      async () => {
        try {
          return await fetch(`http://127.0.0.1:${port}/healthz`);
        } catch {
          return undefined;
        }
      },
      30_000,
    );
    expect([200, 500]).toContain(res.status);
    // The kubelet half answers; the start itself still waits for the Node's spec.podCIDRs.
    expect(started).toBe(false);
    stop.abort(new Error('test stop'));
    await expect(starting).rejects.toThrow('test stop');
    // Everything the start opened is closed again, the health server included.
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  }, 60_000);
});

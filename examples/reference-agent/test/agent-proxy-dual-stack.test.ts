// kube-proxy in the agent is dual-stack as kube-proxy (proxy-wiring.ts): rendering only, the
// in-memory tools support both families, so a node whose primary IP is IPv4 gets an IPv4 and an
// IPv6 backend, each with its own runner, and a RequireDualStack Service is rendered into both
// (iptables and ip6tables rules; IPVS virtual servers of both families). `--proxy-mode ipvs`
// renders too: the IPVS virtual servers, ipsets, kube-ipvs0 addresses and residual iptables
// rules, never applied. Informers over FakeListerWatchers; nothing reaches the kernel.
import type { InformerRequest, KubeObject, ListerWatcher } from '@nodeagent/informer';
import { SharedInformerFactory } from '@nodeagent/informer';
import { FakeListerWatcher } from '@nodeagent/informer/testing';
import promClient from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { type AgentProxy, type AgentProxyMode, startAgentProxy } from '../src/proxy-wiring.js';
import { testLogger, waitFor } from './helpers.js';

const NODE = 'dual-node';

function objects(): Record<string, FakeListerWatcher> {
  const lws: Record<string, FakeListerWatcher> = {
    services: new FakeListerWatcher(),
    endpointslices: new FakeListerWatcher(),
    nodes: new FakeListerWatcher(),
    servicecidrs: new FakeListerWatcher(),
  };
  lws.nodes!.upsert({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE },
    status: {
      addresses: [
        { type: 'InternalIP', address: '192.0.2.31' },
        { type: 'InternalIP', address: '2001:db8::31' },
      ],
    },
  } as unknown as KubeObject);
  lws.services!.upsert({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: 'default', name: 'dual' },
    spec: {
      clusterIP: '10.96.0.40',
      clusterIPs: ['10.96.0.40', 'fd00:96::40'],
      ipFamilies: ['IPv4', 'IPv6'],
      ipFamilyPolicy: 'RequireDualStack',
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  } as unknown as KubeObject);
  const slice = (name: string, addressType: string, ip: string) =>
    ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { namespace: 'default', name, labels: { 'kubernetes.io/service-name': 'dual' } },
      addressType,
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    }) as unknown as KubeObject;
  lws.endpointslices!.upsert(slice('dual-v4', 'IPv4', '10.244.0.7'));
  lws.endpointslices!.upsert(slice('dual-v6', 'IPv6', 'fd00:244::7'));
  return lws;
}

const running: { proxy?: AgentProxy; factory?: SharedInformerFactory }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.proxy?.stop();
    await r.factory?.stop();
  }
});

async function start(mode: Exclude<AgentProxyMode, 'none'>): Promise<AgentProxy> {
  const lws = objects();
  const factory = new SharedInformerFactory({
    listerWatcherFor: (req: InformerRequest): ListerWatcher => lws[req.resource]!,
  });
  const registry = new promClient.Registry();
  const entry: { proxy?: AgentProxy; factory?: SharedInformerFactory } = { factory };
  running.push(entry);
  const starting = startAgentProxy({
    settings: { mode, renderOnly: true, healthzBindAddress: '', metricsBindAddress: '', minSyncPeriodMs: 0 },
    nodeName: NODE,
    nodeIPs: ['192.0.2.31', '2001:db8::31'],
    informers: factory,
    metrics: { registry, promClient },
    metricsText: registry,
    rootDir: undefined,
    embeddedRuntime: true,
    logger: testLogger(),
  });
  await factory.start(AbortSignal.timeout(10_000));
  entry.proxy = await starting;
  return entry.proxy;
}

describe('kube-proxy in the agent: dual-stack, rendered only', () => {
  it('iptables: one backend and runner per family; the Service in iptables and ip6tables rules', async () => {
    const proxy = await start('iptables');
    expect(proxy.proxier.backends.map((b) => b.families)).toEqual([[4], [6]]);
    expect(proxy.proxier.runners).toHaveLength(2);
    const text = await waitFor('both families rendered', async () => {
      const t = await proxy.rules();
      return t.includes('-d 10.96.0.40') && t.includes('-d fd00:96::40') ? t : undefined;
    });
    expect(text).toContain('--to-destination 10.244.0.7:8080');
    expect(text).toContain('--to-destination [fd00:244::7]:8080');
    // The IPv4 rules come first (the primary family), then the IPv6 ones.
    expect(text.indexOf('-d 10.96.0.40')).toBeLessThan(text.indexOf('-d fd00:96::40'));
  });

  it('ipvs renders without applying: virtual servers of both families, ipsets and residual rules', async () => {
    const proxy = await start('ipvs');
    expect(proxy.renderOnly).toBe(true);
    const text = await waitFor('IPVS rendered', async () => {
      const t = await proxy.rules();
      return t.includes('10.96.0.40:80') && t.includes('[fd00:96::40]:80') ? t : undefined;
    });
    expect(text).toContain('# --- ipvsadm-restore: IPVS virtual and real servers ---');
    expect(text).toMatch(/^-A -t 10\.96\.0\.40:80 /m);
    expect(text).toMatch(/^-a -t 10\.96\.0\.40:80 -r 10\.244\.0\.7:8080 /m);
    expect(text).toMatch(/^-a -t \[fd00:96::40\]:80 -r \[fd00:244::7\]:8080 /m);
    expect(text).toContain('# --- ipset restore: kube-proxy ipsets ---');
    expect(text).toContain('KUBE-CLUSTER-IP');
    expect(text).toContain('# --- addresses on kube-ipvs0 ---\n10.96.0.40\n');
    expect(text).toContain('-A KUBE-SERVICES');
  });
});

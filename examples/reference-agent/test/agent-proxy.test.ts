// kube-proxy in the agent on the embedded defaults (proxy-wiring.ts): the proxier runs on the
// agent's informer factory (one watch per resource), renders its iptables rules in memory
// (nothing reaches the kernel), and the rendered rules follow a Service and its EndpointSlice
// created through the API — the endpoint's readiness flip (a readiness probe whose file
// appears, then disappears) moves the service from "has no endpoints" (REJECT) to a
// KUBE-SVC chain with a DNAT to the pod and back, as kube-proxy's iptables proxier renders it.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { parseFlags } from '../src/flags.js';
import { localTrafficDetector } from '../src/proxy-wiring.js';
import {
  embeddedStore,
  FAST_AGENT_TIMINGS,
  makePod,
  podNamed,
  shContainer,
  testLogger,
  waitFor,
} from './helpers.js';

const NODE = 'proxy-node';

describe('reference agent: kube-proxy in the agent (embedded, rendered only)', () => {
  let agent: RunningAgent;
  let rootDir: string;

  beforeAll(async () => {
    rootDir = await mkdtemp(join(os.tmpdir(), 'agent-proxy-test-'));
    agent = await runAgent({
      nodeName: NODE,
      podCidr: '127.79.0.0/24',
      nodeIp: '192.0.2.21',
      rootDir,
      volumeMemoryMedium: 'directory',
      proxy: {
        mode: 'iptables',
        healthzBindAddress: '127.0.0.1:0',
        metricsBindAddress: '127.0.0.1:0',
        minSyncPeriodMs: 100,
      },
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
    });
  });
  afterAll(async () => {
    await agent?.stop();
    if (rootDir) await rm(rootDir, { recursive: true, force: true });
  });

  it('runs render-only on the embedded runtime, with healthz and the metrics server', async () => {
    expect(agent.proxy?.mode).toBe('iptables');
    expect(agent.proxy?.renderOnly).toBe(true);
    const hz = await fetch(agent.proxy?.healthzUrl ?? 'missing');
    // kube-proxy's healthz body (200 once synced and the Node is known).
    const body = (await hz.json()) as { healthy: boolean; nodeEligible: boolean };
    expect(hz.status).toBe(200);
    expect(body).toMatchObject({ healthy: true, nodeEligible: true });
    const mode = await fetch(`${agent.proxy?.metricsUrl}/proxyMode`);
    expect(await mode.text()).toBe('iptables');
    const metrics = await (await fetch(`${agent.proxy?.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^kubeproxy_sync_proxy_rules_last_timestamp_seconds\{ip_family="IPv4"\} \d/m);
    // The same registry as the kubelet half's /metrics.
    expect(metrics).toContain('kubelet_node_name{node="proxy-node"} 1');
  });

  it('rendered rules follow a Service and the readiness of its endpoint', async () => {
    await agent.api.create('/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'flip', namespace: 'default' },
      spec: {
        selector: { app: 'flip' },
        ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
      },
    });
    const pod = makePod('flip', NODE, [
      {
        ...shContainer(
          'app',
          EMBEDDED_BUSYBOX_IMAGE,
          'sleep 2; touch /tmp/ready; sleep 4; rm /tmp/ready; while true; do sleep 10; done',
        ),
        readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1, failureThreshold: 1 },
      },
    ]);
    pod.metadata = { ...pod.metadata, labels: { app: 'flip' } };
    await agent.api.create('/api/v1/namespaces/default/pods', pod);
    const rules = () => agent.proxy?.rules() ?? Promise.resolve('');
    const svc = await waitFor('service has a ClusterIP', () => {
      const s = embeddedStore(agent).tryGet('services', 'default', 'flip') as
        | { spec?: { clusterIP?: string } }
        | undefined;
      return s?.spec?.clusterIP;
    });
    // No ready endpoint yet: kube-proxy's REJECT for the cluster IP.
    const noEndpoints = `-A KUBE-SERVICES -m comment --comment "default/flip:http has no endpoints" -m tcp -p tcp -d ${svc} --dport 80 -j REJECT`;
    await waitFor(
      'REJECT rule rendered',
      async () => (await rules()).includes(noEndpoints) || undefined,
      20_000,
    );

    const podIP = await waitFor('pod IP', () => podNamed(agent, 'flip')?.status?.podIP);
    const dnat = new RegExp(
      `^-A (KUBE-SEP-[A-Z2-7]{16}) -m comment --comment default/flip:http -m tcp -p tcp -j DNAT --to-destination ${podIP.replaceAll('.', '\\.')}:8080$`,
      'm',
    );
    const ready = await waitFor(
      'endpoint ready → DNAT rendered',
      async () => {
        const text = await rules();
        return dnat.test(text) ? text : undefined;
      },
      20_000,
    );
    expect(ready).not.toContain(noEndpoints);
    const svcChain =
      /^-A KUBE-SERVICES -m comment --comment "default\/flip:http cluster IP" -m tcp -p tcp -d [0-9.]+ --dport 80 -j (KUBE-SVC-[A-Z2-7]{16})$/m.exec(
        ready,
      )?.[1];
    expect(svcChain).toBeDefined();
    const sep = dnat.exec(ready)?.[1];
    expect(ready).toMatch(new RegExp(`^-A ${svcChain} .*-j ${sep}$`, 'm'));
    // Written under the agent's root dir too.
    await waitFor(
      'rules file',
      async () =>
        (await readFile(join(rootDir, 'proxy-rules.txt'), 'utf8').catch(() => '')).includes(sep ?? '?') ||
        undefined,
    );

    // The readiness file goes away: the endpoint turns unready and the rules go back.
    const unready = await waitFor(
      'endpoint unready → REJECT again',
      async () => {
        const text = await rules();
        return text.includes(noEndpoints) ? text : undefined;
      },
      20_000,
    );
    expect(unready).not.toMatch(dnat);
    const served = await (await fetch(`${agent.proxy?.metricsUrl}/proxyRules`)).text();
    expect(served).toContain(noEndpoints);
  }, 60_000);

  it('one watch per resource: the kubelet half and the proxier share the informer factory', () => {
    const server = agent.apiServer;
    if (!server) throw new Error('embedded API server expected');
    const watches: Record<string, number> = {};
    for (const r of server.requests) if (r.watch) watches[r.path] = (watches[r.path] ?? 0) + 1;
    expect(watches['/api/v1/pods']).toBe(1);
    expect(watches['/api/v1/nodes']).toBe(1);
    expect(watches['/api/v1/services']).toBe(1);
    expect(watches['/apis/discovery.k8s.io/v1/endpointslices']).toBe(1);
  });
});

describe('proxy flags', () => {
  it('parses kube-proxy names and rejects bad values naming the flag', () => {
    const f = parseFlags([
      '--proxy-mode',
      'nftables',
      '--cluster-cidr',
      '10.244.0.0/16',
      '--nodeport-addresses',
      'primary',
      '--masquerade-all',
      '--proxy-healthz-bind-address',
      '127.0.0.1:10256',
    ]);
    expect(f.proxy).toMatchObject({
      mode: 'nftables',
      clusterCIDRs: ['10.244.0.0/16'],
      nodePortAddresses: ['primary'],
      masqueradeAll: true,
      healthzBindAddress: '127.0.0.1:10256',
    });
    expect(parseFlags([]).proxy).toBeUndefined();
    expect(() => parseFlags(['--proxy-mode', 'userspace'])).toThrow(
      '--proxy-mode: expected iptables|nftables|ipvs|none, got "userspace"',
    );
    expect(() => parseFlags(['--cluster-cidr', '10.0.0.0/33'])).toThrow(
      '--cluster-cidr: "10.0.0.0/33" is not a CIDR',
    );
    expect(() => parseFlags(['--proxy-render-only', 'yes'])).toThrow('--proxy-render-only');
    expect(parseFlags(['--masquerade-all=false']).proxy?.masqueradeAll).toBe(false);
    expect(() => parseFlags(['--masquerade-all=maybe'])).toThrow('--masquerade-all: expected true|false');
  });
});

describe('--detect-local-mode (kube-proxy local traffic detection)', () => {
  it('parses the modes with their interface flags, and rejects what kube-proxy rejects', () => {
    expect(parseFlags(['--proxy-mode', 'iptables', '--detect-local-mode', 'NodeCIDR']).proxy).toMatchObject({
      detectLocalMode: 'NodeCIDR',
    });
    expect(
      parseFlags(['--detect-local-mode', 'BridgeInterface', '--pod-bridge-interface', 'cni0']).proxy,
    ).toMatchObject({ detectLocalMode: 'BridgeInterface', podBridgeInterface: 'cni0' });
    expect(() => parseFlags(['--detect-local-mode', 'PodCIDR'])).toThrow(
      '--detect-local-mode: Unsupported value: "PodCIDR": supported values: "ClusterCIDR", "NodeCIDR", "BridgeInterface", "InterfaceNamePrefix"',
    );
    expect(() => parseFlags(['--detect-local-mode', 'BridgeInterface'])).toThrow(
      '--pod-bridge-interface: Required value',
    );
    expect(() => parseFlags(['--detect-local-mode', 'InterfaceNamePrefix'])).toThrow(
      '--pod-interface-name-prefix: Required value',
    );
  });

  it('picks the CIDR of the family: the cluster CIDR by default, the node pod CIDR for NodeCIDR', () => {
    const clusterCIDRs = ['fd00:10::/56', '10.244.0.0/16'];
    expect(localTrafficDetector({ clusterCIDRs }, 4, ['10.244.3.0/24'])).toEqual({
      mode: 'ClusterCIDR',
      cidr: '10.244.0.0/16',
    });
    expect(localTrafficDetector({}, 4, ['10.244.3.0/24'])).toEqual({ mode: 'None' });
    expect(
      localTrafficDetector({ detectLocalMode: 'NodeCIDR', clusterCIDRs }, 4, [
        'fd00:10:0:3::/64',
        '10.244.3.0/24',
      ]),
    ).toEqual({ mode: 'NodeCIDR', cidr: '10.244.3.0/24' });
    expect(
      localTrafficDetector({ detectLocalMode: 'InterfaceNamePrefix', podInterfaceNamePrefix: 'veth' }, 4, []),
    ).toEqual({ mode: 'InterfaceNamePrefix', interfacePrefix: 'veth' });
    // No pod CIDR of the family: no detection for it (kube-proxy logs it and goes on).
    expect(localTrafficDetector({ detectLocalMode: 'NodeCIDR' }, 4, ['fd00:10:0:3::/64'])).toEqual({
      mode: 'None',
    });
    expect(localTrafficDetector({ detectLocalMode: 'NodeCIDR' }, 6, ['fd00:10:0:3::/64'])).toEqual({
      mode: 'NodeCIDR',
      cidr: 'fd00:10:0:3::/64',
    });
  });
});

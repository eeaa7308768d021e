// kube-proxy in the agent with real rules (root): the agent (embedded API server and runtime)
// runs its proxy with `--proxy-render-only=false --proxy-netns <ns>`, and the real
// iptables-restore / nft program a network namespace this test creates. A Service and a pod
// created through the API end up as kube-proxy's rules in that namespace's kernel tables
// (KUBE-SVC → KUBE-SEP → DNAT to the pod); the host's tables are untouched. Fails under
// CI=true when root, netns, iptables or nft are missing.
import { createNetns, type Netns } from '@nodeagent/test-support/netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterEach, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import type { AgentProxyMode } from '../src/proxy-wiring.js';
import { FAST_AGENT_TIMINGS, makePod, podNamed, shContainer, testLogger, waitFor } from './helpers.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function agentWithProxyIn(
  mode: AgentProxyMode,
  node: string,
  extra: { nodePortAddresses?: string[]; before?: (ns: Netns) => Promise<void> } = {},
): Promise<{ agent: RunningAgent; ns: Netns }> {
  const ns = await createNetns('agentproxy');
  cleanups.push(() => ns.stop());
  await extra.before?.(ns);
  const agent = await runAgent({
    nodeName: node,
    podCidr: '127.80.0.0/24',
    nodeIp: '192.0.2.31',
    volumeMemoryMedium: 'directory',
    proxy: {
      mode,
      renderOnly: false,
      netns: ns.name,
      healthzBindAddress: '127.0.0.1:0',
      metricsBindAddress: '',
      minSyncPeriodMs: 100,
      ...(extra.nodePortAddresses ? { nodePortAddresses: extra.nodePortAddresses } : {}),
    },
    ...FAST_AGENT_TIMINGS,
    logger: testLogger(),
  });
  cleanups.push(() => agent.stop());
  return { agent, ns };
}

async function createServiceAndPod(agent: RunningAgent, node: string): Promise<string> {
  await agent.api.create('/api/v1/namespaces/default/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'real', namespace: 'default' },
    spec: {
      selector: { app: 'real' },
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  });
  const pod = makePod('real', node, [
    shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'while true; do sleep 10; done'),
  ]);
  pod.metadata = { ...pod.metadata, labels: { app: 'real' } };
  await agent.api.create('/api/v1/namespaces/default/pods', pod);
  return waitFor('pod IP', () => podNamed(agent, 'real')?.status?.podIP, 20_000);
}

describeRealNode(
  'reference agent: kube-proxy in the agent programs a netns',
  ['root', 'netns', 'iptables', 'nft'],
  () => {
    it('iptables: real iptables-restore into the namespace', async () => {
      const { agent, ns } = await agentWithProxyIn('iptables', 'proxy-real-ipt');
      expect(agent.proxy?.renderOnly).toBe(false);
      const podIP = await createServiceAndPod(agent, 'proxy-real-ipt');
      const saved = await waitFor(
        'DNAT in the namespace',
        async () => {
          const text = await ns.execChecked(['iptables-save', '-t', 'nat']);
          return text.includes(`--to-destination ${podIP}:8080`) ? text : undefined;
        },
        20_000,
      );
      expect(saved).toMatch(
        /^-A KUBE-SERVICES .*--comment "default\/real:http cluster IP".*-j KUBE-SVC-[A-Z2-7]{16}$/m,
      );
      expect(saved).toMatch(/^-A PREROUTING .*-j KUBE-SERVICES$/m);
      // What the agent reports is what the kernel holds.
      expect(await agent.proxy?.rules()).toContain(`--to-destination ${podIP}:8080`);
    }, 60_000);

    it('--nodeport-addresses: the addresses of the namespace interfaces inside the CIDR (GetNodeIPs)', async () => {
      // Two addresses inside the CIDR and one outside on a veth inside the namespace (gone with it); the
      // node IP (192.0.2.31) is on none of them and outside the CIDR.
      const { ns } = await agentWithProxyIn('iptables', 'proxy-real-npa', {
        nodePortAddresses: ['198.51.100.0/24'],
        before: async (n) => {
          await n.execChecked(['ip', 'link', 'add', 'npa0', 'type', 'veth', 'peer', 'name', 'npa1']);
          for (const a of ['198.51.100.7/24', '198.51.100.8/24', '203.0.113.9/24'])
            await n.execChecked(['ip', 'addr', 'add', a, 'dev', 'npa0']);
          await n.execChecked(['ip', 'link', 'set', 'npa0', 'up']);
        },
      });
      const saved = await waitFor(
        'the KUBE-NODEPORTS jumps in the namespace',
        async () => {
          const text = await ns.execChecked(['iptables-save', '-t', 'nat']);
          return text.includes('-j KUBE-NODEPORTS') ? text : undefined;
        },
        20_000,
      );
      const jumps = saved
        .split('\n')
        .filter((l) => l.startsWith('-A KUBE-SERVICES') && l.endsWith('-j KUBE-NODEPORTS'));
      expect(jumps.some((l) => l.includes('-d 198.51.100.7'))).toBe(true);
      expect(jumps.some((l) => l.includes('-d 198.51.100.8'))).toBe(true);
      expect(jumps).toHaveLength(2);
      expect(saved).not.toContain('-d 203.0.113.9');
      expect(saved).not.toContain('-d 192.0.2.31');
    }, 60_000);

    it('nftables: real nft into the namespace', async () => {
      const { agent, ns } = await agentWithProxyIn('nftables', 'proxy-real-nft');
      const podIP = await createServiceAndPod(agent, 'proxy-real-nft');
      const listed = await waitFor(
        'dnat in the namespace',
        async () => {
          const r = await ns.exec(['nft', 'list', 'table', 'ip', 'kube-proxy']);
          return r.stdout.includes(`dnat to ${podIP}:8080`) ? r.stdout : undefined;
        },
        20_000,
      );
      expect(listed).toMatch(/chain service-[A-Z2-7]{8}-default\/real\/tcp\/http \{/);
    }, 60_000);
  },
);

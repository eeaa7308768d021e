// Pod DNS through the agent's flags (`--cluster-dns`, `--cluster-domain`, `--resolv-conf`): the
// sandbox the runtime is asked for carries the kubelet's resolver config (pkg/kubelet/network/dns):
// ClusterFirst pods get the cluster DNS servers, `<ns>.svc.<domain>`, `svc.<domain>`, `<domain>`
// then the node's searches, and `ndots:5`; Default pods get the node's resolv.conf. A
// `--cluster-dns` entry that is not an IP is skipped, as the kubelet skips it ("Invalid clusterDNS IP").
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { DNSConfig } from '@nodeagent/cri';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { parseFlags } from '../src/flags.js';
import { FAST_AGENT_TIMINGS, makePod, podNamed, shContainer, testLogger, waitFor } from './helpers.js';

const NODE = 'dns-node';

describe('reference agent: pod DNS from --cluster-dns, --cluster-domain, --resolv-conf', () => {
  let agent: RunningAgent;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(os.tmpdir(), 'agent-dns-'));
    const resolvConf = join(dir, 'resolv.conf');
    await writeFile(resolvConf, 'nameserver 192.0.2.53\nsearch corp.example\noptions edns0\n');
    const flags = parseFlags(
      [
        '--cluster-dns',
        '10.96.0.10,not-an-ip',
        '--cluster-domain',
        'example.internal',
        '--resolv-conf',
        resolvConf,
      ],
      'host',
    );
    agent = await runAgent({
      nodeName: NODE,
      podCidr: '10.78.0.0/24',
      nodeIp: '192.0.2.11',
      dns: flags.dns,
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
    });
  });
  afterAll(async () => {
    await agent?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function sandboxDns(pod: V1Pod): Promise<DNSConfig | undefined> {
    const name = pod.metadata?.name ?? '';
    await agent.api.create('/api/v1/namespaces/default/pods', pod);
    await waitFor(`${name} Running`, () => podNamed(agent, name)?.status?.phase === 'Running');
    const call = agent.fakeRuntime
      ?.calls('RunPodSandbox')
      .find(
        (c) => (c.request as { config?: { metadata?: { name?: string } } }).config?.metadata?.name === name,
      );
    return (call?.request as { config?: { dnsConfig?: DNSConfig } } | undefined)?.config?.dnsConfig;
  }

  it('ClusterFirst (the default policy): the cluster server, cluster searches then the node ones, ndots:5', async () => {
    const dns = await sandboxDns(
      makePod('cf', NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600')]),
    );
    expect(dns).toEqual({
      servers: ['10.96.0.10'],
      searches: ['default.svc.example.internal', 'svc.example.internal', 'example.internal', 'corp.example'],
      options: ['ndots:5'],
    });
  });

  it("Default: the node's resolv.conf", async () => {
    const pod = makePod('df', NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600')]);
    pod.spec = { ...pod.spec, containers: pod.spec?.containers ?? [], dnsPolicy: 'Default' };
    expect(await sandboxDns(pod)).toEqual({
      servers: ['192.0.2.53'],
      searches: ['corp.example'],
      options: ['edns0'],
    });
  });
});

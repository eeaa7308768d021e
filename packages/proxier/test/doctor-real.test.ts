/**
 * `nodeagent-proxy doctor --netns` against real kernels' rules, inside network namespaces
 * this test creates (never the host's): rules are programmed with `apply`, doctor finds them
 * healthy and drift-free and traces a Service through the LIVE rules; then the test breaks
 * them the ways an operator meets - a service's dispatch rule deleted, a stale chain added,
 * iptables-mode chains mixed into the legacy backend and next to the nftables table, an
 * old-layout base chain, ip_forward turned off - and checks doctor reports each one.
 */
import { readFileSync } from 'node:fs';
import { tokenizeRule } from '@nodeagent/iptables';
import { createNetns, createVethPair, listLeakedNetns, type Netns } from '@nodeagent/test-support/netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLUSTER_YAML, NODE, NODE_IP, POD_CIDR, runCli } from './cli-fixtures.js';

const PREFIX = 'kpdoc';
const FILES = { 'cluster.yaml': CLUSTER_YAML };
const NODE_FLAGS = ['--node-name', NODE, '--node-ip', NODE_IP, '--cluster-cidr', POD_CIDR];

interface Report {
  modes: string[];
  findings: { id: string; severity: string; message: string; remedy?: string }[];
  traces: { kind: string; destIP: string; outcome: string; endpoints: string[]; mode: string }[];
  summary: { errors: number; warnings: number };
}

/** Findings that depend on the host (br_netfilter loaded or not, conntrack installed). */
const HOST_DEPENDENT = new Set(['br-netfilter', 'conntrack-missing']);

async function doctor(ns: Netns, extra: string[] = []): Promise<{ code: number; report: Report }> {
  const r = await runCli(['doctor', '--netns', ns.name, '--json', ...extra], { files: FILES });
  expect(r.stderr).toBe('');
  return { code: r.code, report: JSON.parse(r.stdout) as Report };
}

const problems = (r: Report) =>
  r.findings.filter((f) => f.severity !== 'info' && !HOST_DEPENDENT.has(f.id)).map((f) => f.id);

async function nodeNs(): Promise<{ node: Netns; peer: Netns }> {
  const node = await createNetns(PREFIX);
  const peer = await createNetns(PREFIX);
  await createVethPair(node, peer, { addressA: `${NODE_IP}/24`, addressB: '192.168.0.3/24' });
  await node.execChecked(['sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
  await node.execChecked(['sysctl', '-q', '-w', 'net.ipv4.conf.all.route_localnet=1']);
  return { node, peer };
}

describeRealNode('nodeagent-proxy doctor --netns (real kernel)', ['root', 'netns', 'iptables', 'nft'], () => {
  const all: Netns[] = [];
  afterAll(async () => {
    for (const ns of all) await ns.stop();
    expect(await listLeakedNetns(PREFIX)).toEqual([]);
  });

  /** A node namespace (and its peer) with cluster.yaml applied in `mode`. */
  const appliedNode = async (mode: 'iptables' | 'nftables'): Promise<Netns> => {
    const n = await nodeNs();
    all.push(n.node, n.peer);
    const a = await runCli(
      ['apply', '-b', mode, '--netns', n.node.name, '-f', 'cluster.yaml', ...NODE_FLAGS],
      {
        files: FILES,
      },
    );
    expect(a.code, a.stderr).toBe(0);
    return n.node;
  };

  describe('iptables mode', () => {
    let node: Netns;
    beforeAll(async () => {
      node = await appliedNode('iptables');
    }, 60_000);

    it('healthy: the mode, no drift, a trace through the live rules', async () => {
      const { report } = await doctor(node, ['-f', 'cluster.yaml', ...NODE_FLAGS, '--service', 'ns1/web']);
      expect(report.modes).toEqual(['iptables']);
      expect(problems(report)).toEqual([]);
      expect(report.findings.find((f) => f.id === 'drift')?.severity).toBe('info');
      expect(report.traces).toEqual([
        expect.objectContaining({
          mode: 'iptables',
          kind: 'ClusterIP',
          destIP: '172.30.0.10',
          outcome: 'endpoints',
          endpoints: ['10.100.1.2:8080', '10.100.2.2:8080'],
        }),
      ]);
    });

    it('a deleted dispatch rule, a stale chain, legacy-backend leftovers, ip_forward off', async () => {
      const save = await node.execChecked(['iptables-save', '-t', 'nat']);
      const line = save
        .split('\n')
        .find((l) => l.startsWith('-A KUBE-SERVICES') && l.includes('ns1/web:http cluster IP'))!;
      const tokens = tokenizeRule(line);
      await node.execChecked(['iptables', '-t', 'nat', '-D', ...tokens.slice(1)]);
      await node.execChecked(['iptables', '-t', 'nat', '-N', 'KUBE-SVC-STALESTALESTALE1']);
      await node.execChecked(['iptables-legacy', '-t', 'nat', '-N', 'KUBE-SERVICES']);
      await node.execChecked(['iptables-legacy', '-t', 'nat', '-N', 'KUBE-SVC-LEGACYLEGACYLEGA']);
      await node.execChecked([
        'iptables-legacy',
        '-t',
        'nat',
        '-A',
        'KUBE-SERVICES',
        '-j',
        'KUBE-SVC-LEGACYLEGACYLEGA',
      ]);
      await node.execChecked(['sysctl', '-q', '-w', 'net.ipv4.ip_forward=0']);
      const { code, report } = await doctor(node, [
        '-f',
        'cluster.yaml',
        ...NODE_FLAGS,
        '--service',
        'ns1/web',
      ]);
      expect(code).toBe(1);
      const by = (id: string) => report.findings.filter((f) => f.id === id).map((f) => f.message);
      expect(by('stale-chain')).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/iptables \(nft backend\) table nat: chain KUBE-SVC-\w+ is not referenced/),
          expect.stringMatching(/chain KUBE-SVC-STALESTALESTALE1 is not referenced/),
        ]),
      );
      expect(by('drift').join('\n')).toMatch(/rule missing in the kernel: .*172\.30\.0\.10/);
      expect(by('drift').join('\n')).toMatch(/KUBE-SVC-STALESTALESTALE1: in the kernel, not implied/);
      expect(by('iptables-both-backends')).toHaveLength(1);
      expect(by('ip-forward')).toHaveLength(1);
      expect(by('service-not-programmed')).toHaveLength(1);
      expect(report.traces).toEqual([]);
    });
  });

  describe('nftables mode', () => {
    let node: Netns;
    beforeAll(async () => {
      node = await appliedNode('nftables');
    }, 60_000);

    it('healthy: no drift; ClusterIP and NodePort traced on the live table; text output exits 0', async () => {
      const { report } = await doctor(node, ['-f', 'cluster.yaml', ...NODE_FLAGS, '--service', 'ns1/np']);
      expect(report.modes).toEqual(['nftables']);
      expect(problems(report)).toEqual([]);
      expect(report.traces.map((t) => [t.kind, t.destIP, t.outcome, t.endpoints])).toEqual([
        ['ClusterIP', '172.30.0.20', 'endpoints', ['10.100.2.2:8080']],
        ['NodePort', NODE_IP, 'endpoints', ['10.100.2.2:8080']],
      ]);
      const text = await runCli(['doctor', '--netns', node.name], { files: FILES });
      expect(text.stdout).toMatch(/proxy modes with rules: nftables/);
      expect(text.code).toBe(report.findings.some((f) => f.severity !== 'info') ? 1 : 0);
    });

    it('a removed map element, an old-layout base chain, iptables-mode leftovers', async () => {
      await node.execChecked([
        'nft',
        'delete',
        'element',
        'ip',
        'kube-proxy',
        'service-ips',
        '{ 172.30.0.10 . tcp . 80 }',
      ]);
      await node.execChecked([
        'nft',
        'add chain ip kube-proxy filter-output-post-dnat { type filter hook output priority -90 ; }',
      ]);
      await node.execChecked(['iptables-nft', '-t', 'nat', '-N', 'KUBE-SERVICES']);
      await node.execChecked(['iptables-nft', '-t', 'nat', '-N', 'KUBE-SVC-OLDOLDOLDOLDOLD1']);
      await node.execChecked([
        'iptables-nft',
        '-t',
        'nat',
        '-A',
        'KUBE-SERVICES',
        '-j',
        'KUBE-SVC-OLDOLDOLDOLDOLD1',
      ]);
      const { code, report } = await doctor(node, ['-f', 'cluster.yaml', ...NODE_FLAGS, '-b', 'nftables']);
      expect(code).toBe(1);
      const ids = problems(report);
      expect(ids).toEqual(
        expect.arrayContaining([
          'mixed-modes',
          'leftover-iptables-rules',
          'old-nft-layout',
          'stale-chain',
          'drift',
        ]),
      );
      const by = (id: string) =>
        report.findings
          .filter((f) => f.id === id)
          .map((f) => f.message)
          .join('\n');
      expect(by('stale-chain')).toMatch(/chain service-DK7ABAZC-ns1\/web\/tcp\/http is not referenced/);
      expect(by('old-nft-layout')).toMatch(/filter-output-post-dnat/);
      expect(by('drift')).toMatch(
        /map service-ips: element 172\.30\.0\.10 \. tcp \. 80 : goto service-DK7ABAZC-ns1\/web\/tcp\/http missing/,
      );
    });
  });

  it('the README example runs as written (namespace name and versions line aside)', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const shop = /All examples use this `shop\.yaml`[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)![1]!;
    const section = readme.slice(readme.indexOf('### `nodeagent-proxy doctor`'));
    const block = /```console\n([\s\S]*?)```/.exec(section)![1]!;
    const n = await nodeNs();
    all.push(n.node, n.peer);
    // The README's namespace has no forwarding yet (a fresh namespace's default).
    await n.node.execChecked(['sysctl', '-q', '-w', 'net.ipv4.ip_forward=0']);
    const rename = (t: string) => t.replaceAll('node1', n.node.name);
    const steps: { cmd: string; out: string[] }[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('$ ')) steps.push({ cmd: rename(line.slice(2)), out: [] });
      else if (line !== '') steps.at(-1)!.out.push(rename(line));
    }
    expect(steps.map((s) => s.cmd.split(' ')[0])).toEqual(['nodeagent-proxy', 'ip', 'nodeagent-proxy']);
    const words = (cmd: string) => [...cmd.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
    const hostDependent = (l: string) => l.startsWith('info  [versions] ');
    for (const step of steps) {
      const argv = words(step.cmd);
      let out: string;
      if (argv[0] === 'nodeagent-proxy') {
        const r = await runCli(argv.slice(1), { files: { 'shop.yaml': shop } });
        expect(r.stderr).toBe('');
        out = r.stdout;
      } else {
        out = (await n.node.execChecked(argv.slice(4))).trim();
      }
      const lines = out.split('\n').filter((l) => l !== '');
      expect(lines.filter((l) => !hostDependent(l))).toEqual(step.out.filter((l) => !hostDependent(l)));
      expect(lines.filter(hostDependent)).toHaveLength(step.out.filter(hostDependent).length);
    }
  }, 60_000);
});

/**
 * `nodeagent-proxy apply --netns` against real network namespaces the test creates: the rules
 * land in the kernel (checked with iptables-save / nft list table), a TCP connection through a
 * ClusterIP reaches a server in a second namespace over a veth, a service without endpoints is
 * refused at once, a second apply removes the chains of a service that is gone, and the ipvs
 * backend explains a kernel without IPVS. Nothing leaves the namespaces.
 */
import { renderIptables, SpawnNfacctClient } from '@nodeagent/iptables';
import { findBinary } from '@nodeagent/test-support/command';
import { createNetns, createVethPair, listLeakedNetns, type Netns } from '@nodeagent/test-support/netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NODE, referenceSnapshots, runCli } from './cli-fixtures.js';

const PREFIX = 'npcli';
const NODE_IP = '10.100.1.1';

const WEB = `apiVersion: v1
kind: Service
metadata: { namespace: ns1, name: web }
spec: { clusterIP: 172.30.0.10, ports: [{ name: http, port: 80, targetPort: 8080 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { namespace: ns1, name: web-1, labels: { kubernetes.io/service-name: web } }
addressType: IPv4
ports: [{ name: http, port: 8080 }]
endpoints: [{ addresses: [10.100.1.2], nodeName: node-a }]
`;
const EMPTY = `apiVersion: v1
kind: Service
metadata: { namespace: ns1, name: empty }
spec: { clusterIP: 172.30.0.11, ports: [{ name: http, port: 80 }] }
`;
const FILES = { 'web.yaml': WEB, 'empty.yaml': EMPTY };

// Answers every connection with its name, then closes.
const SERVER = `const n=require('net');n.createServer(c=>c.end(process.argv[1]))
.listen(Number(process.argv[2]),'0.0.0.0',()=>process.stdout.write('ready\\n'));`;
// One connection: prints {ok} with the answer or {err} with the error code, and the time taken.
const CLIENT = `const n=require('net');const t0=Date.now();let d='';
const s=n.connect({host:process.argv[1],port:Number(process.argv[2]),timeout:3000});s.setEncoding('utf8');
s.on('data',x=>d+=x);s.on('end',()=>console.log(JSON.stringify({ok:d,ms:Date.now()-t0})));
s.on('timeout',()=>{console.log(JSON.stringify({err:'TIMEOUT',ms:Date.now()-t0}));s.destroy();});
s.on('error',e=>console.log(JSON.stringify({err:e.code,ms:Date.now()-t0})));`;

async function startServer(ns: Netns, name: string, port: number): Promise<void> {
  const child = ns.spawn([process.execPath, '-e', SERVER, name, String(port)]);
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      buf += d;
      if (buf.includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server ${name} exited ${code}`)));
  });
}

async function connect(
  ns: Netns,
  host: string,
  port: number,
): Promise<{ ok?: string; err?: string; ms: number }> {
  const r = await ns.exec([process.execPath, '-e', CLIENT, host, String(port)], { timeoutMs: 20_000 });
  if (r.code !== 0) throw new Error(`client failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim()) as { ok?: string; err?: string; ms: number };
}

/** A node namespace wired to a pod namespace running a TCP server on 10.100.1.2:8080. */
async function nodeWithPod(): Promise<{ node: Netns; pod: Netns }> {
  const node = await createNetns(PREFIX);
  const pod = await createNetns(PREFIX);
  await createVethPair(node, pod, { addressA: `${NODE_IP}/24`, addressB: '10.100.1.2/24' });
  await pod.execChecked(['ip', 'route', 'add', 'default', 'via', NODE_IP]);
  // Locally generated packets need a route to the cluster IP before nat OUTPUT rewrites it.
  await node.execChecked(['ip', 'route', 'add', '172.30.0.0/16', 'via', '10.100.1.2']);
  await startServer(pod, 'pod1', 8080);
  return { node, pod };
}

function applyArgs(backend: string, netns: string, files: string[]): string[] {
  return [
    'apply',
    '-b',
    backend,
    '--netns',
    netns,
    ...files.flatMap((f) => ['-f', f]),
    '--node-name',
    NODE,
    '--node-ip',
    NODE_IP,
    '--cluster-cidr',
    '10.100.0.0/16',
  ];
}

describeRealNode(
  'nodeagent-proxy apply --netns (real kernel)',
  ['root', 'netns', 'iptables', 'nft', 'nfacct'],
  () => {
    const all: Netns[] = [];

    afterAll(async () => {
      for (const ns of all) await ns.stop();
      expect(await listLeakedNetns(PREFIX)).toEqual([]);
    });

    let ipt: { node: Netns; pod: Netns };
    let nft: { node: Netns; pod: Netns };
    beforeAll(async () => {
      ipt = await nodeWithPod();
      all.push(ipt.node, ipt.pod);
      nft = await nodeWithPod();
      all.push(nft.node, nft.pod);
    }, 60_000);

    it('iptables --nfacct on: the counters are ensured in the namespace and the rules use them; ClusterIP connects', async () => {
      const node = await nodeWithPod();
      all.push(node.node, node.pod);
      const client = new SpawnNfacctClient({ netns: node.node.name });
      const r = await runCli([...applyArgs('iptables', node.node.name, ['web.yaml']), '--nfacct', 'on'], {
        files: FILES,
        nfacct: client,
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect((await client.list()).map((c) => c.name).sort()).toEqual([
        'ct_state_invalid_dropped_pkts',
        'localhost_nps_accepted_pkts',
      ]);
      const save = await node.node.execChecked(['iptables-save', '-t', 'filter']);
      expect(save).toMatch(
        /-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name +ct_state_invalid_dropped_pkts -j DROP/,
      );
      expect(await connect(node.node, '172.30.0.10', 80)).toMatchObject({ ok: 'pod1' });
    }, 60_000);

    it('iptables: rules and jump rules land in the namespace; ClusterIP connects, no endpoints is refused', async () => {
      const r = await runCli(applyArgs('iptables', ipt.node.name, ['web.yaml', 'empty.yaml']), {
        files: FILES,
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(
        new RegExp(
          `^iptables: applied 2 service port\\(s\\) to netns ${ipt.node.name}: jump rules ensured, `,
        ),
      );
      // Every chain the library renders exists in the kernel.
      const rendered = renderIptables(referenceSnapshots([WEB, EMPTY], [NODE_IP]).v4, {
        localDetector: { mode: 'ClusterCIDR', cidr: '10.100.0.0/16' },
      });
      const svcChain = /KUBE-SVC-\w+/.exec(rendered)![0];
      const save = await ipt.node.execChecked(['iptables-save']);
      for (const c of rendered.split('\n').filter((l) => l.startsWith(':'))) {
        expect(save).toContain(`${c.split(' ')[0]} - [`);
      }
      expect(save).toMatch(/-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES/);
      expect(save).toMatch(
        /-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES/,
      );
      expect(save).toMatch(new RegExp(`-A KUBE-SERVICES -d 172\\.30\\.0\\.10/32 .*-j ${svcChain}`));
      expect(save).toMatch(
        /-A KUBE-SERVICES -d 172\.30\.0\.11\/32 .*"ns1\/empty:http has no endpoints".* -j REJECT/,
      );

      expect(await connect(ipt.node, '172.30.0.10', 80)).toMatchObject({ ok: 'pod1' });
      const refused = await connect(ipt.node, '172.30.0.11', 80);
      expect(refused.err).toBe('ECONNREFUSED');
      expect(refused.ms).toBeLessThan(1000);

      // Apply again without web: its chains are deleted, the rest stays.
      const again = await runCli(applyArgs('iptables', ipt.node.name, ['empty.yaml']), { files: FILES });
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(/[1-9]\d* stale chain\(s\) deleted/);
      const after = await ipt.node.execChecked(['iptables-save']);
      expect(after).not.toContain(svcChain);
      expect(after).not.toContain('KUBE-SEP-');
      expect(after).toContain('"ns1/empty:http has no endpoints"');
    }, 60_000);

    it('nftables: one transaction creates table ip kube-proxy; ClusterIP connects; a re-apply drops stale chains', async () => {
      const r = await runCli(applyArgs('nftables', nft.node.name, ['web.yaml', 'empty.yaml']), {
        files: FILES,
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(
        /^nftables: applied 2 service port\(s\) to netns \S+ as one nft -f transaction: table ip kube-proxy/,
      );
      const table = await nft.node.execChecked(['nft', 'list', 'table', 'ip', 'kube-proxy']);
      expect(table).toMatch(/chain service-\w{8}-ns1\/web\/tcp\/http \{/);
      expect(table).toMatch(/chain endpoint-\w{8}-ns1\/web\/tcp\/http__10\.100\.1\.2\/8080 \{/);
      expect(table).toMatch(/172\.30\.0\.10 \. tcp \. 80 : goto service-\w{8}-ns1\/web\/tcp\/http/);
      expect(table).toMatch(/172\.30\.0\.11 \. tcp \. 80 .*: goto reject-chain/);

      expect(await connect(nft.node, '172.30.0.10', 80)).toMatchObject({ ok: 'pod1' });
      const refused = await connect(nft.node, '172.30.0.11', 80);
      expect(refused.err).toBe('ECONNREFUSED');
      expect(refused.ms).toBeLessThan(1000);

      const again = await runCli([...applyArgs('nftables', nft.node.name, ['empty.yaml'])], { files: FILES });
      expect(again.stderr).toBe('');
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(/ 2 stale chain\(s\) deleted$/m);
      const after = await nft.node.execChecked(['nft', 'list', 'table', 'ip', 'kube-proxy']);
      expect(after).not.toContain('ns1/web');
      expect(after).toContain('goto reject-chain');
    }, 60_000);

    it('nftables --nftables-layout optimized replaces the kube-proxy layout in place and still connects', async () => {
      const r = await runCli(
        [...applyArgs('nftables', nft.node.name, ['web.yaml']), '--nftables-layout', 'optimized'],
        { files: FILES },
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const table = await nft.node.execChecked(['nft', 'list', 'table', 'ip', 'kube-proxy']);
      expect(table).not.toMatch(/chain (service|endpoint)-\w{8}-/);
      expect(table).toMatch(/chain lb-vip-cluster-1 \{/);
      expect(await connect(nft.node, '172.30.0.10', 80)).toMatchObject({ ok: 'pod1' });
    }, 60_000);

    it('ipvs: explains a kernel without IPVS and changes nothing (or programs IPVS where it exists)', async () => {
      const ns = await createNetns(PREFIX);
      all.push(ns);
      const r = await runCli(applyArgs('ipvs', ns.name, ['web.yaml']), { files: FILES });
      if (!findBinary('ipvsadm')) {
        expect(r.code).toBe(1);
        expect(r.stderr).toContain('ipvsadm is not installed');
        return;
      }
      const probe = await ns.exec(['ipvsadm', '-S', '-n']);
      if (probe.code !== 0) {
        expect(r.code).toBe(1);
        expect(r.stdout).toBe('');
        // kube-proxy's deprecation message first (IPVS mode is deprecated since 1.35), then the failure.
        expect(r.stderr).toMatch(
          /^nodeagent-proxy: note: The ipvs proxier is now deprecated and may be removed in a future release\. Please use 'nftables' instead\.\nnodeagent-proxy: error: ipvs: this kernel has no IPVS support \(CONFIG_IP_VS is not set or the ip_vs module is not loaded\); nothing was changed in netns /,
        );
        expect(r.stderr).toContain('ipvsadm: ');
        expect(r.stderr).toContain('use --backend iptables or --backend nftables here');
        expect(await ns.execChecked(['iptables-save'])).not.toContain('KUBE-');
      } else {
        expect(r.code).toBe(0);
        expect(await ns.execChecked(['ipvsadm', '-S', '-n'])).toContain('172.30.0.10:80');
      }
    }, 60_000);

    it('a namespace that does not exist is a clear failure (exit 1)', async () => {
      const r = await runCli(applyArgs('iptables', 'npcli-does-not-exist', ['web.yaml']), { files: FILES });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('network namespace "npcli-does-not-exist" does not exist');
    });
  },
);

/**
 * `nodeagent-proxy run` as a user deploys it, inside network namespaces this test creates (no
 * route to the host's network): a mini-apiserver and `run` both live in a "node" namespace;
 * TCP servers in a "pod" namespace behind a veth. Services and EndpointSlices are created,
 * scaled and deleted through the API and real connections to the ClusterIP follow; the
 * healthz and metrics servers answer; kill -9 leaves the rules working and a restart
 * reconciles them without a moment of broken traffic; SIGTERM leaves the rules; `--cleanup`
 * removes them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNetns, createVethPair, listLeakedNetns, type Netns } from '@nodeagent/test-support/netns';
import { type RunningSnippet, startSnippet } from '@nodeagent/test-support/readme-snippets';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './fixtures.js';

const PREFIX = 'proxrun';
const NODE = 'node-run';
const NODE_IP = '10.102.1.1';
const POD_A = '10.102.1.2';
const POD_B = '10.102.1.3';
const CLUSTER_IP = '172.29.0.10';
// Dual-stack: IPv6 on the same veth, a second Service with a ClusterIP of each family.
const NODE_IP6 = 'fd00:102::1';
const POD_A6 = 'fd00:102::2';
const DUAL_IP4 = '172.29.0.20';
const DUAL_IP6 = 'fd00:29::20';
const API_PORT = 16443;

// Answers every TCP connection with the address it was reached on, then closes.
const SERVER = `require('net').createServer(c=>c.end(c.localAddress)).listen(8080,'0.0.0.0',()=>console.log('ready'))`;
const SERVER6 = `require('net').createServer(c=>c.end(c.localAddress)).listen({port:8080,host:'::',ipv6Only:true},()=>console.log('ready'))`;
// One TCP connection attempt: prints the answer or the error code.
const CLIENT = `const s=require('net').connect({host:process.argv[1],port:Number(process.argv[2]),timeout:2000});
let d='';s.setEncoding('utf8');s.on('data',x=>d+=x);s.on('end',()=>console.log('ok:'+d));
s.on('timeout',()=>{console.log('err:TIMEOUT');s.destroy()});s.on('error',e=>console.log('err:'+e.code));`;
// One API request: method, path, JSON body; prints the status.
const API = `const [m,p,b]=process.argv.slice(1);fetch('http://127.0.0.1:${API_PORT}'+p,{method:m,headers:{'content-type':m==='PATCH'?'application/merge-patch+json':'application/json'},body:b||undefined}).then(r=>r.text().then(t=>console.log(r.status+' '+t.slice(0,200))),e=>console.log('error '+e.message));`;
// One HTTP GET: prints status and body.
const GET = `fetch(process.argv[1]).then(r=>r.text().then(t=>console.log(r.status+' '+t)),e=>console.log('error '+e.message));`;

const apiServerCode = (kubeconfigPath: string) => `
import { startMiniApiServer } from '@nodeagent/mini-apiserver';
const server = await startMiniApiServer({
  host: '127.0.0.1', port: ${API_PORT}, kubeconfigPath: ${JSON.stringify(kubeconfigPath)},
  autoCreateNamespaces: true, endpointSliceController: false, serviceClusterIpRange: '172.29.0.0/16',
});
console.log('api ready ' + server.url);
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
`;

// The snippet is bundled from source; the backends' dynamic import would need built dist files,
// so it hands run the same packages (from source) through its loader.
const runCode = (args: readonly string[]) => `
import { runProxyCli } from './packages/proxier/src/cli/run-proxy-cli.ts';
import * as iptables from '@nodeagent/iptables';
import * as nftables from '@nodeagent/nftables';
import * as ipvs from '@nodeagent/ipvs';
const pkgs = { '@nodeagent/iptables': iptables, '@nodeagent/nftables': nftables, '@nodeagent/ipvs': ipvs };
process.exitCode = await runProxyCli(${JSON.stringify(args)}, { stdout: process.stdout, stderr: process.stderr, env: process.env, load: async (s) => pkgs[s] });
`;

describeRealNode('nodeagent-proxy run in network namespaces', ['root', 'netns', 'nft', 'iptables'], () => {
  let nodeNs: Netns;
  let podNs: Netns;
  let dir: string;
  let api: RunningSnippet;
  const procs: RunningSnippet[] = [];

  const apiCall = async (method: string, path: string, body?: unknown) => {
    const out = await nodeNs.execChecked([
      process.execPath,
      '-e',
      API,
      method,
      path,
      body === undefined ? '' : JSON.stringify(body),
    ]);
    const status = Number(out.split(' ')[0]);
    if (!(status >= 200 && status < 300)) throw new Error(`${method} ${path}: ${out}`);
  };
  const connect = async (ip = CLUSTER_IP) =>
    (await nodeNs.execChecked([process.execPath, '-e', CLIENT, ip, '80'])).trim();
  const get = async (url: string) => (await nodeNs.execChecked([process.execPath, '-e', GET, url])).trim();
  const slice = (ips: string[], svc = 'web', addressType = 'IPv4', name = `${svc}-1`) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
    addressType,
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  });
  const startRun = async (mode: string, extra: string[] = []) => {
    const p = await startSnippet(
      runCode([
        'run',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--proxy-mode',
        mode,
        '--hostname-override',
        NODE,
        '--cluster-cidr',
        '10.102.0.0/16',
        '--healthz-bind-address',
        '127.0.0.1:10256',
        '--metrics-bind-address',
        '127.0.0.1:10249',
        '--iptables-min-sync-period',
        '0s',
        ...extra,
      ]),
      { netns: nodeNs.name, name: 'proxy-run' },
    );
    procs.push(p);
    await p.waitForOutput(/running; rules follow/, 30_000);
    return p;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nodeagent-proxy-run-'));
    nodeNs = await createNetns(PREFIX);
    podNs = await createNetns(PREFIX);
    const veth = await createVethPair(nodeNs, podNs, { addressA: `${NODE_IP}/24`, addressB: `${POD_A}/24` });
    // IPv6 without duplicate address detection, so the addresses are usable at once.
    await nodeNs.execChecked(['ip', '-6', 'addr', 'add', `${NODE_IP6}/64`, 'dev', veth.a.name, 'nodad']);
    await podNs.execChecked(['ip', '-6', 'addr', 'add', `${POD_A6}/64`, 'dev', veth.b.name, 'nodad']);
    await nodeNs.execChecked(['ip', '-6', 'route', 'add', 'fd00:29::/112', 'via', POD_A6]);
    await podNs.execChecked(['ip', 'addr', 'add', `${POD_B}/24`, 'dev', 'eth0']).catch(async () => {
      // The veth end's name is the helper's choice: add the address to whichever link holds POD_A.
      const link = (await podNs.execChecked(['ip', '-o', 'addr', 'show', 'to', `${POD_A}/32`])).split(
        /\s+/,
      )[1]!;
      await podNs.execChecked(['ip', 'addr', 'add', `${POD_B}/24`, 'dev', link]);
    });
    await nodeNs.execChecked(['ip', 'route', 'add', '172.29.0.0/16', 'via', POD_A]);
    await nodeNs.execChecked(['ip', 'link', 'set', 'lo', 'up']);
    for (const code of [SERVER, SERVER6]) {
      const srv = podNs.spawn([process.execPath, '-e', code]);
      await new Promise<void>((resolve, reject) => {
        srv.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
        srv.once('exit', (c) => reject(new Error(`server exited ${c}`)));
      });
    }
    api = await startSnippet(apiServerCode(join(dir, 'kubeconfig')), {
      netns: nodeNs.name,
      name: 'proxy-run-api',
    });
    await api.waitForOutput(/api ready/, 30_000);
    await apiCall('POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: NODE },
      status: {
        addresses: [
          { type: 'InternalIP', address: NODE_IP },
          { type: 'InternalIP', address: NODE_IP6 },
        ],
      },
    });
  }, 90_000);

  afterAll(async () => {
    for (const p of procs) await p.stop();
    await api?.stop();
    await Promise.all([nodeNs, podNs].filter(Boolean).map((n) => n.stop()));
    if (dir) rmSync(dir, { recursive: true, force: true });
    expect(await listLeakedNetns(PREFIX)).toEqual([]);
  }, 60_000);

  describe.each(['nftables', 'iptables'])('--proxy-mode %s', (mode) => {
    it('follows Services and EndpointSlices, survives kill -9, stops on SIGTERM, cleans up', async () => {
      let proxy = await startRun(mode);
      // healthz and the metrics server, on the addresses given.
      await eventually(async () => expect(await get('http://127.0.0.1:10256/healthz')).toMatch(/^200 /));
      expect(await get('http://127.0.0.1:10249/proxyMode')).toBe(`200 ${mode}`);
      expect(await get('http://127.0.0.1:10249/metrics')).toContain(
        'kubeproxy_sync_proxy_rules_duration_seconds',
      );

      // Create: the ClusterIP answers from the one endpoint.
      await apiCall('POST', '/api/v1/namespaces/default/services', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          type: 'ClusterIP',
          clusterIP: CLUSTER_IP,
          clusterIPs: [CLUSTER_IP],
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
        },
      });
      await apiCall('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', slice([POD_A]));
      await eventually(async () => expect(await connect()).toBe(`ok:${POD_A}`), 15_000);

      // Scale: the endpoint moves to another pod IP.
      await apiCall(
        'PUT',
        '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/web-1',
        slice([POD_B]),
      );
      await eventually(async () => expect(await connect()).toBe(`ok:${POD_B}`), 15_000);

      // kill -9: the rules stay and keep working.
      process.kill(proxy.pid, 'SIGKILL');
      await proxy.exited();
      expect(await connect()).toBe(`ok:${POD_B}`);
      // A change while it is down is reconciled after the restart, with no broken connection meanwhile.
      await apiCall(
        'PUT',
        '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/web-1',
        slice([POD_A]),
      );
      const restarting = startRun(mode);
      const during: string[] = [];
      let started = false;
      void restarting.then(() => {
        started = true;
      });
      while (!started) during.push(await connect());
      proxy = await restarting;
      await eventually(async () => expect(await connect()).toBe(`ok:${POD_A}`), 15_000);
      expect(during.length).toBeGreaterThan(0);
      for (const d of during) expect(d).toMatch(new RegExp(`^ok:(${POD_A}|${POD_B})$`));

      // Delete: no rule for the ClusterIP is left.
      await apiCall('DELETE', '/api/v1/namespaces/default/services/web');
      await apiCall('DELETE', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/web-1');
      await eventually(async () => expect(await connect()).toMatch(/^err:/), 15_000);

      // SIGTERM: exit 0, rules left in place.
      process.kill(proxy.pid, 'SIGTERM');
      expect(await proxy.exited()).toBe(0);
      if (mode === 'nftables') await nodeNs.execChecked(['nft', 'list', 'table', 'ip', 'kube-proxy']);
      else expect(await nodeNs.execChecked(['iptables-save', '-t', 'nat'])).toContain(':KUBE-SERVICES');

      // --cleanup removes every mode's rules and exits 0.
      const cleanup = await startSnippet(runCode(['run', '--cleanup']), {
        netns: nodeNs.name,
        name: 'proxy-cleanup',
      });
      procs.push(cleanup);
      expect(await cleanup.exited(), cleanup.output()).toBe(0);
      expect((await nodeNs.exec(['nft', 'list', 'table', 'ip', 'kube-proxy'])).code).not.toBe(0);
      expect(await nodeNs.execChecked(['iptables-save', '-t', 'nat'])).not.toContain('KUBE-SERVICES');
    }, 120_000);

    it('dual-stack: a RequireDualStack Service answers on both ClusterIPs; --cleanup removes both families', async () => {
      const proxy = await startRun(mode);
      expect(proxy.output()).toContain('kube-proxy running in dual-stack mode');
      await apiCall('POST', '/api/v1/namespaces/default/services', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'dual', namespace: 'default' },
        spec: {
          type: 'ClusterIP',
          clusterIP: DUAL_IP4,
          clusterIPs: [DUAL_IP4, DUAL_IP6],
          ipFamilies: ['IPv4', 'IPv6'],
          ipFamilyPolicy: 'RequireDualStack',
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
        },
      });
      const slices = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
      await apiCall('POST', slices, slice([POD_A], 'dual', 'IPv4', 'dual-v4'));
      await apiCall('POST', slices, slice([POD_A6], 'dual', 'IPv6', 'dual-v6'));
      // Real connections over each family, each reaching the pod on its own family's address.
      await eventually(async () => expect(await connect(DUAL_IP4)).toBe(`ok:${POD_A}`), 15_000);
      await eventually(async () => expect(await connect(DUAL_IP6)).toBe(`ok:${POD_A6}`), 15_000);
      // Each family's rules hold its own ClusterIP only.
      if (mode === 'nftables') {
        const v4 = await nodeNs.execChecked(['nft', 'list', 'table', 'ip', 'kube-proxy']);
        const v6 = await nodeNs.execChecked(['nft', 'list', 'table', 'ip6', 'kube-proxy']);
        expect(v4).toContain(DUAL_IP4);
        expect(v4).not.toContain(DUAL_IP6);
        expect(v6).toContain(DUAL_IP6);
        expect(v6).not.toContain(DUAL_IP4);
      } else {
        const v4 = await nodeNs.execChecked(['iptables-save', '-t', 'nat']);
        const v6 = await nodeNs.execChecked(['ip6tables-save', '-t', 'nat']);
        expect(v4).toContain(`${DUAL_IP4}/32`);
        expect(v6).toContain(`${DUAL_IP6}/128`);
        expect(v6).not.toContain(DUAL_IP4);
      }
      // Both families report to healthz.
      const health = await get('http://127.0.0.1:10256/healthz');
      expect(health).toMatch(/^200 /);
      expect(health).toContain('"IPv4"');
      expect(health).toContain('"IPv6"');
      await apiCall('DELETE', '/api/v1/namespaces/default/services/dual');
      await apiCall('DELETE', `${slices}/dual-v4`);
      await apiCall('DELETE', `${slices}/dual-v6`);
      await eventually(async () => expect(await connect(DUAL_IP6)).toMatch(/^err:/), 15_000);
      process.kill(proxy.pid, 'SIGTERM');
      expect(await proxy.exited()).toBe(0);
      const cleanup = await startSnippet(runCode(['run', '--cleanup']), {
        netns: nodeNs.name,
        name: 'proxy-cleanup',
      });
      procs.push(cleanup);
      expect(await cleanup.exited(), cleanup.output()).toBe(0);
      expect((await nodeNs.exec(['nft', 'list', 'table', 'ip', 'kube-proxy'])).code).not.toBe(0);
      expect((await nodeNs.exec(['nft', 'list', 'table', 'ip6', 'kube-proxy'])).code).not.toBe(0);
      expect(await nodeNs.execChecked(['iptables-save', '-t', 'nat'])).not.toContain('KUBE-SERVICES');
      expect(await nodeNs.execChecked(['ip6tables-save', '-t', 'nat'])).not.toContain('KUBE-SERVICES');
    }, 120_000);
  });
});

/**
 * Real kernel, inside network namespaces this test creates (no route to the host's network):
 * the Proxier drives the REAL nftables executor in a "node" namespace from a mini-apiserver;
 * a ClusterIP connection from the node reaches a TCP server in a "pod" namespace behind a
 * veth; a service without endpoints is refused; a removed UDP endpoint's conntrack entries are
 * deleted by the real `conntrack` tool.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { NftablesBackend, SpawnNftExecutor } from '@nodeagent/nftables';
import { createNetns, createVethPair, listLeakedNetns, type Netns } from '@nodeagent/test-support/netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type MiniApiServer, startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { Proxier, SpawnConntrackCleaner } from '../src/index.js';
import { endpointSlice, eventually, node, service } from './fixtures.js';

const PREFIX = 'proxk';
const NODE = 'node-k';
const NODE_IP = '10.100.1.1';
const POD_IP = '10.100.1.2';

// Answers every TCP connection with "pod", then closes.
const SERVER = `require('net').createServer(c=>c.end('pod')).listen(8080,'0.0.0.0',()=>console.log('ready'))`;
// One TCP connection attempt: prints the answer or the error code.
const CLIENT = `const s=require('net').connect({host:process.argv[1],port:Number(process.argv[2]),timeout:3000});
let d='';s.setEncoding('utf8');s.on('data',x=>d+=x);s.on('end',()=>console.log('ok:'+d));
s.on('timeout',()=>{console.log('err:TIMEOUT');s.destroy()});s.on('error',e=>console.log('err:'+e.code));`;
// Sends one UDP datagram.
const UDP = `const s=require('dgram').createSocket('udp4');s.send('x',Number(process.argv[2]),process.argv[1],()=>s.close());`;

describeRealNode(
  'Proxier with the real nftables executor in network namespaces',
  ['root', 'netns', 'nft', 'conntrack'],
  () => {
    let nodeNs: Netns;
    let podNs: Netns;
    let server: MiniApiServer;
    let proxier: Proxier;

    beforeAll(async () => {
      nodeNs = await createNetns(PREFIX);
      podNs = await createNetns(PREFIX);
      await createVethPair(nodeNs, podNs, { addressA: `${NODE_IP}/24`, addressB: `${POD_IP}/24` });
      // Service IPs need a route before DNAT can apply; it stays inside the namespaces.
      await nodeNs.execChecked(['ip', 'route', 'add', '172.30.0.0/16', 'via', POD_IP]);
      await nodeNs.execChecked(['sysctl', '-q', '-w', 'net.ipv4.icmp_ratelimit=0']);
      await podNs.execChecked(['sysctl', '-q', '-w', 'net.ipv4.icmp_ratelimit=0']);
      const srv = podNs.spawn([process.execPath, '-e', SERVER]);
      await new Promise<void>((resolve, reject) => {
        srv.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
        srv.once('exit', (code) => reject(new Error(`server exited ${code}`)));
      });
      server = await startMiniApiServer({ bookmarkIntervalMs: 0, autoCreateNamespaces: true });
      server.store.create('nodes', node(NODE, NODE_IP) as never);
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromString(server.kubeconfig);
      proxier = new Proxier({
        kubeConfig,
        nodeName: NODE,
        backend: new NftablesBackend({
          ipv4: { executor: new SpawnNftExecutor({ netns: nodeNs.name }) },
          render: { localDetector: { mode: 'ClusterCIDR', cidr: '10.100.0.0/16' } },
        }),
        minSyncPeriodMs: 10,
        syncPeriodMs: 500,
        healthz: { bindAddress: '127.0.0.1:0' },
        healthCheckNodePorts: false,
        conntrack: new SpawnConntrackCleaner({ netns: nodeNs.name }),
        informer: { backoff: { initialMs: 20, capMs: 200 } },
      });
      await proxier.start();
    }, 60_000);

    afterAll(async () => {
      await proxier?.stop();
      await server?.stop();
      await Promise.all([nodeNs, podNs].filter(Boolean).map((n) => n.stop()));
      expect(await listLeakedNetns(PREFIX)).toEqual([]);
    }, 60_000);

    const connect = async (ip: string, port: number) =>
      (await nodeNs.execChecked([process.execPath, '-e', CLIENT, ip, String(port)])).trim();

    it('a connection to the ClusterIP from the node reaches the pod; no endpoints → refused', async () => {
      server.store.create('services', service('web', { clusterIP: '172.30.0.41' }) as never);
      server.store.create('endpointslices', endpointSlice('web', [{ ip: POD_IP }]) as never);
      server.store.create('services', service('empty', { clusterIP: '172.30.0.42' }) as never);
      await eventually(async () => expect(await connect('172.30.0.41', 80)).toBe('ok:pod'), 15_000, 100);
      expect(await connect('172.30.0.42', 80)).toBe('err:ECONNREFUSED');
      // The endpoint goes away: refused at once.
      server.store.update('endpointslices', endpointSlice('web', []) as never);
      await eventually(
        async () => expect(await connect('172.30.0.41', 80)).toBe('err:ECONNREFUSED'),
        15_000,
        100,
      );
    }, 60_000);

    it('deletes the conntrack entries of a removed UDP endpoint with the real conntrack tool', async () => {
      const udpPort = { name: 'dns', port: 53, protocol: 'UDP' };
      server.store.create(
        'services',
        service('dns', { clusterIP: '172.30.0.10', ports: [udpPort] }) as never,
      );
      server.store.create(
        'endpointslices',
        endpointSlice('dns', [{ ip: POD_IP }], { portName: 'dns', port: 5353, protocol: 'UDP' }) as never,
      );
      const entries = async () =>
        (await nodeNs.exec(['conntrack', '-L', '-p', 'udp', '--orig-dst', '172.30.0.10'])).stdout
          .split('\n')
          .filter((l) => l.includes('dport=53'));
      await eventually(
        async () => {
          await nodeNs.execChecked([process.execPath, '-e', UDP, '172.30.0.10', '53']);
          const e = await entries();
          expect(e.length).toBeGreaterThan(0);
          expect(e[0]).toContain(`src=${POD_IP}`); // the reply direction shows the DNAT
        },
        15_000,
        100,
      );
      server.store.update(
        'endpointslices',
        endpointSlice('dns', [], { portName: 'dns', port: 5353, protocol: 'UDP' }) as never,
      );
      await eventually(async () => expect(await entries()).toEqual([]), 15_000, 100);
      // Nothing left to delete is not an error.
      await new SpawnConntrackCleaner({ netns: nodeNs.name }).clear([
        { kind: 'ip', family: 4, ip: '172.30.0.10' },
      ]);
    }, 60_000);
  },
);

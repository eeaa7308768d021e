/**
 * Real-kernel tests, each inside network namespaces the test creates (no route to the host's
 * network): the rendered rules are accepted by iptables-restore, carry real TCP connections
 * from a ClusterIP / NodePort to servers behind veths, and partial syncs converge to the same
 * kernel state as a fresh full sync.
 */
import { ProxyState } from '@nodeagent/proxy-state';
import { createNetns, listLeakedNetns, type Netns } from '@nodeagent/test-support/netns';
import {
  createProxyNetns,
  PROXY_NODE_IP as NODE_IP,
  PROXY_POD_CIDR as POD_CIDR,
  proxyKernelServices,
} from '@nodeagent/test-support/proxy-netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  CanaryMonitor,
  IptablesRenderer,
  type IptablesServicePort,
  IptablesSyncer,
  kubeProxyJumpRules,
  restoreText,
  SpawnIptablesExecutor,
} from '../src/index.js';
import { slice, svc } from './helpers.js';
import { connectFrom, saveMeaning, startNameServer } from './kernel-support.js';

const PREFIX = 'iptk';

describeRealNode(
  'iptables rules in a real kernel (network namespaces)',
  ['root', 'netns', 'iptables'],
  () => {
    let node: Netns;
    let pod1: Netns;
    let pod2: Netns;
    let ext: Netns;
    const spare: Netns[] = [];

    beforeAll(async () => {
      ({ node, pod1, pod2, ext } = await createProxyNetns(PREFIX));
      await startNameServer(pod1, 'pod1', 8080);
      await startNameServer(pod2, 'pod2', 8080);

      const state = new ProxyState({ nodeName: 'test-node', nodeIPs: [NODE_IP] });
      const eps = [
        { ip: '10.100.1.2', node: 'test-node' },
        { ip: '10.100.2.2', node: 'other' },
      ];
      const port = [{ name: 'http', port: 8080 }];
      const add = (name: string, spec: Parameters<typeof svc>[2], endpoints = eps) => {
        state.onServiceAdd(svc('ns', name, spec));
        if (endpoints.length > 0) state.onEndpointSliceAdd(slice('ns', name, port, endpoints));
      };
      for (const s of proxyKernelServices()) add(s.name, s.spec, s.endpoints);
      const syncer = new IptablesSyncer({
        executor: new SpawnIptablesExecutor({ netns: node.name }),
        render: { localDetector: { mode: 'ClusterCIDR', cidr: POD_CIDR }, nodeIP: NODE_IP },
      });
      const r = await syncer.syncSnapshot(state.checkout().v4);
      expect(r.full).toBe(true);
    }, 120_000);

    afterAll(async () => {
      for (const ns of [node, pod1, pod2, ext, ...spare]) await ns?.stop();
      expect(await listLeakedNetns(PREFIX)).toEqual([]);
    });

    it('a ClusterIP reaches TCP servers behind veths, spread over both endpoints', async () => {
      const res = await connectFrom(node, '172.30.0.10', 80, 30);
      expect(res.every((r) => r.ok !== undefined)).toBe(true);
      expect(new Set(res.map((r) => r.ok))).toEqual(new Set(['pod1', 'pod2']));
    });

    it('a NodePort (externalTrafficPolicy Cluster) serves an external client', async () => {
      const res = await connectFrom(ext, NODE_IP, 30081, 3);
      expect(res.map((r) => r.ok)).toEqual(['pod2', 'pod2', 'pod2']);
    });

    it('externalTrafficPolicy Local sends external clients only to the local endpoint', async () => {
      const res = await connectFrom(ext, NODE_IP, 30080, 12);
      expect(res.map((r) => r.ok)).toEqual(new Array(12).fill('pod1'));
    });

    it('ClientIP session affinity keeps one client on one endpoint', async () => {
      const res = await connectFrom(node, '172.30.0.12', 80, 12);
      expect(res.every((r) => r.ok !== undefined)).toBe(true);
      expect(new Set(res.map((r) => r.ok)).size).toBe(1);
    });

    it('a service without endpoints is refused at once', async () => {
      const [r] = await connectFrom(node, '172.30.0.13', 80, 1);
      expect(r!.err).toBe('ECONNREFUSED');
      expect(r!.ms).toBeLessThan(1000);
    });

    it('jump rules are ensured once (-C then -I) and the canary reveals a flush by someone else', async () => {
      const exec = new SpawnIptablesExecutor({ netns: node.name });
      await exec.ensureJumps(kubeProxyJumpRules());
      await exec.ensureJumps(kubeProxyJumpRules());
      const input = (await node.execChecked(['iptables', '-S', 'INPUT'])).trim().split('\n');
      expect(input.filter((l) => l.includes('KUBE-'))).toHaveLength(4);
      let flushes = 0;
      const mon = new CanaryMonitor({ executor: exec, onFlush: () => flushes++ });
      await mon.start();
      mon.stop();
      expect(await mon.check()).toBe(false);
      await node.execChecked(['iptables', '-t', 'mangle', '-X', 'KUBE-PROXY-CANARY']);
      expect(await mon.check()).toBe(true);
      expect(flushes).toBe(1);
      expect(await exec.chainExists('mangle', 'KUBE-PROXY-CANARY')).toBe(true);
    });

    it('partial syncs (add, change, delete) leave the same kernel state as a fresh full sync', async () => {
      const a = await createNetns(PREFIX);
      const b = await createNetns(PREFIX);
      spare.push(a, b);
      const state = new ProxyState({ nodeName: 'test-node', nodeIPs: [NODE_IP] });
      const render = { localDetector: { mode: 'ClusterCIDR', cidr: POD_CIDR }, nodeIP: NODE_IP } as const;
      const syncA = new IptablesSyncer({ executor: new SpawnIptablesExecutor({ netns: a.name }), render });
      const port = [{ name: 'p', port: 80 }];
      state.onServiceAdd(svc('ns', 's1', { clusterIP: '172.30.0.21', ports: [{ name: 'p', port: 80 }] }));
      state.onEndpointSliceAdd(slice('ns', 's1', port, [{ ip: '10.100.9.1' }, { ip: '10.100.9.2' }]));
      state.onServiceAdd(svc('ns', 's2', { clusterIP: '172.30.0.22', ports: [{ name: 'p', port: 80 }] }));
      state.onEndpointSliceAdd(slice('ns', 's2', port, [{ ip: '10.100.9.3' }]));
      expect((await syncA.syncSnapshot(state.checkout().v4)).full).toBe(true);
      // add
      state.onServiceAdd(
        svc('ns', 's3', {
          type: 'LoadBalancer',
          clusterIP: '172.30.0.23',
          externalTrafficPolicy: 'Local',
          healthCheckNodePort: 31000,
          loadBalancerSourceRanges: ['203.0.113.0/25'],
          ports: [{ name: 'p', port: 80, nodePort: 30003 }],
        }),
      );
      state.onEndpointSliceAdd(slice('ns', 's3', port, [{ ip: '10.100.9.4', node: 'test-node' }]));
      expect((await syncA.syncSnapshot(state.checkout().v4)).full).toBe(false);
      // change: endpoints of s1 move, s2 gets affinity
      state.onEndpointSliceUpdate(undefined, slice('ns', 's1', port, [{ ip: '10.100.9.5' }]));
      state.onServiceUpdate(
        undefined,
        svc('ns', 's2', {
          clusterIP: '172.30.0.22',
          sessionAffinity: 'ClientIP',
          ports: [{ name: 'p', port: 80 }],
        }),
      );
      expect((await syncA.syncSnapshot(state.checkout().v4)).deletedChains).toBe(2);
      // delete
      state.onServiceDelete(svc('ns', 's2', { clusterIP: '172.30.0.22', ports: [{ name: 'p', port: 80 }] }));
      expect((await syncA.syncSnapshot(state.checkout().v4)).full).toBe(false);

      const fresh = new ProxyState({ nodeName: 'test-node', nodeIPs: [NODE_IP] });
      const syncB = new IptablesSyncer({ executor: new SpawnIptablesExecutor({ netns: b.name }), render });
      for (const [s, sl] of [
        [
          svc('ns', 's1', { clusterIP: '172.30.0.21', ports: [{ name: 'p', port: 80 }] }),
          slice('ns', 's1', port, [{ ip: '10.100.9.5' }]),
        ],
        [
          svc('ns', 's3', {
            type: 'LoadBalancer',
            clusterIP: '172.30.0.23',
            externalTrafficPolicy: 'Local',
            healthCheckNodePort: 31000,
            loadBalancerSourceRanges: ['203.0.113.0/25'],
            ports: [{ name: 'p', port: 80, nodePort: 30003 }],
          }),
          slice('ns', 's3', port, [{ ip: '10.100.9.4', node: 'test-node' }]),
        ],
      ] as const) {
        fresh.onServiceAdd(s);
        fresh.onEndpointSliceAdd(sl);
      }
      await syncB.syncSnapshot(fresh.checkout().v4);
      const saveA = saveMeaning(await new SpawnIptablesExecutor({ netns: a.name }).save());
      const saveB = saveMeaning(await new SpawnIptablesExecutor({ netns: b.name }).save());
      expect(saveA.nat).toEqual(saveB.nat);
      expect(saveA.filter).toEqual(saveB.filter);
      expect(Object.keys(saveA.nat ?? {}).filter((c) => c.startsWith('KUBE-SVC-'))).toHaveLength(2);
    }, 60_000);

    it('property: iptables-restore accepts every rendered ruleset (hostile names, IPv6, odd ports)', async () => {
      const ns = await createNetns(PREFIX);
      spare.push(ns);
      const v4 = new SpawnIptablesExecutor({ netns: ns.name });
      const v6 = new SpawnIptablesExecutor({ netns: ns.name, family: 'IPv6' });
      const name = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 70 }),
        fc.constantFrom('a"b', 'x\\y', 'new\nline', "it's", 'sp ace'),
      );
      const portNum = fc.constantFrom(1, 2, 80, 1023, 32767, 65535);
      const arbPort = (family: 4 | 6) =>
        fc
          .record({
            namespace: name,
            name,
            portName: fc.constantFrom('', 'p', 'dns-tcp'),
            protocol: fc.constantFrom('TCP', 'UDP', 'SCTP'),
            idx: fc.integer({ min: 1, max: 250 }),
            port: portNum,
            nodePort: fc.constantFrom(0, 30000, 32767),
            hc: fc.constantFrom(0, 31000),
            affinity: fc.option(fc.integer({ min: 1, max: 86400 }), { nil: undefined }),
            etpLocal: fc.boolean(),
            itpLocal: fc.boolean(),
            lb: fc.boolean(),
            eps: fc.uniqueArray(fc.integer({ min: 1, max: 200 }), { maxLength: 5 }),
            local: fc.boolean(),
          })
          .map((r): IptablesServicePort => {
            const ip = (n: number, base: string) =>
              family === 4 ? `${base}.${n}` : `fd00:${base.replace(/\./g, ':')}::${n.toString(16)}`;
            const eps = r.eps.map((e) => ({ ip: ip(e, '10.1.2'), port: r.port }));
            return {
              namespace: r.namespace,
              name: r.name,
              portName: r.portName,
              protocol: r.protocol as 'TCP',
              clusterIP: ip(r.idx, '172.30.0'),
              port: r.port,
              nodePort: r.nodePort,
              healthCheckNodePort: r.hc,
              ...(r.affinity !== undefined ? { sessionAffinityTimeoutSeconds: r.affinity } : {}),
              externalPolicyLocal: r.etpLocal,
              internalPolicyLocal: r.itpLocal,
              externalIPs: r.nodePort === 0 && !r.lb ? [] : [ip(r.idx, '192.168.99')],
              ...(r.lb
                ? {
                    loadBalancerVIPs: [ip(r.idx, '1.2.3')],
                    loadBalancerSourceRanges: [family === 4 ? '203.0.113.0/25' : 'fd00:203::/64'],
                  }
                : {}),
              // As categorizeEndpoints does: Cluster endpoints unless only Local policy is used.
              clusterEndpoints: r.itpLocal && r.nodePort === 0 && !r.lb ? [] : eps,
              localEndpoints: r.local ? eps.slice(0, 1) : [],
              hasEndpoints: eps.length > 0,
            };
          });
      for (const family of [4, 6] as const) {
        const exec = family === 4 ? v4 : v6;
        await fc.assert(
          fc.asyncProperty(
            fc.array(arbPort(family), { maxLength: 6 }),
            fc.boolean(),
            async (ports, large) => {
              const renderer = new IptablesRenderer({
                ipFamily: family === 4 ? 'IPv4' : 'IPv6',
                localDetector: { mode: 'ClusterCIDR', cidr: family === 4 ? POD_CIDR : 'fd00:10::/64' },
                ...(large ? { largeClusterEndpointsThreshold: 0 } : {}),
              });
              const text = restoreText(renderer.render(ports));
              await exec.test(text);
              // --test does not catch dangling jumps on the nf_tables backend: apply for real too.
              await exec.restore(text, { noflush: false });
            },
          ),
          { numRuns: family === 4 ? 25 : 12 },
        );
      }
    }, 120_000);
  },
);

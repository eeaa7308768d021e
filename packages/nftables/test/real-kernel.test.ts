/**
 * Real-kernel tests, each inside network namespaces the test creates (no route to the
 * host's network), for BOTH layouts: rendered rulesets are accepted by `nft -c -f` (a
 * fast-check property incl. IPv6, odd ports and hostile names), ClusterIP / NodePort /
 * externalTrafficPolicy Local / session affinity carry real TCP connections to servers
 * behind veths, a service without endpoints is refused at once, a partial-sync sequence
 * leaves the kernel equal to a fresh full sync, and partial syncs that only add are written
 * without `add rule` / `add element` (nft 1.0.6 would dump every chain for them).
 */
import { buildProxySnapshots, ProxyState } from '@nodeagent/proxy-state';
import { createNetns, listLeakedNetns, type Netns } from '@nodeagent/test-support/netns';
import {
  createProxyNetns,
  PROXY_NODE_IP as NODE_IP,
  PROXY_POD_CIDR as POD_CIDR,
  proxyKernelServices,
} from '@nodeagent/test-support/proxy-netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NftSyncer, renderNftables, SpawnNftExecutor } from '../src/index.js';
import { LAYOUTS } from './flow-support.js';
import { slice, svc } from './helpers.js';
import { connectFrom, meaningDiff, startNameServer, tableMeaning } from './kernel-support.js';

const PREFIX = 'nftk';

describeRealNode('nftables rules in a real kernel (network namespaces)', ['root', 'netns', 'nft'], () => {
  let node: Netns;
  let pod1: Netns;
  let pod2: Netns;
  let ext: Netns;
  let check: Netns;

  beforeAll(async () => {
    ({ node, pod1, pod2, ext } = await createProxyNetns(PREFIX));
    check = await createNetns(PREFIX);
    await startNameServer(pod1, 'pod1', 8080);
    await startNameServer(pod2, 'pod2', 8080);
  });

  afterAll(async () => {
    await Promise.all([node, pod1, pod2, ext, check].filter(Boolean).map((n) => n.stop()));
    expect(await listLeakedNetns(PREFIX)).toEqual([]);
  });

  const hostile = fc.constantFrom('ns', 'we"ird', 'new\nline', 'sp ace', 'a'.repeat(63), 'x-1.y_2');
  it('nft -c -f accepts every rendered ruleset (both layouts, both families)', async () => {
    const exec = new SpawnNftExecutor({ netns: check.name });
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            ns: hostile,
            name: fc.constantFrom('a', 'b', 'c', 'svc-1'),
            port: fc.integer({ min: 1, max: 65535 }),
            nodePort: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
            proto: fc.constantFrom('TCP', 'UDP', 'SCTP'),
            eps: fc.integer({ min: 0, max: 5 }),
            affinity: fc.boolean(),
            local: fc.boolean(),
            lb: fc.boolean(),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        fc.constantFrom(4 as const, 6 as const),
        async (specs, family) => {
          const services = specs.map((s, i) => {
            const ip =
              family === 4
                ? `172.30.${i}.${s.port % 250}`
                : `fd00:96::${i.toString(16)}:${s.port.toString(16)}`;
            const type = s.lb ? 'LoadBalancer' : s.nodePort ? 'NodePort' : 'ClusterIP';
            return svc(
              s.ns,
              `${s.name}${i}`,
              {
                type,
                clusterIP: ip,
                clusterIPs: [ip],
                ipFamilies: [family === 4 ? 'IPv4' : 'IPv6'],
                ports: [
                  {
                    name: 'p',
                    port: s.port,
                    protocol: s.proto,
                    ...(s.nodePort ? { nodePort: s.nodePort } : {}),
                  },
                ],
                ...(s.affinity ? { sessionAffinity: 'ClientIP' } : {}),
                ...(s.local && type !== 'ClusterIP'
                  ? { externalTrafficPolicy: 'Local', healthCheckNodePort: 31000 + i }
                  : {}),
                ...(s.lb
                  ? {
                      loadBalancerSourceRanges:
                        family === 4 ? ['203.0.113.0/25', '10.0.0.0/8'] : ['2001:db8::/32'],
                    }
                  : {}),
              },
              s.lb
                ? { loadBalancer: { ingress: [{ ip: family === 4 ? `1.2.3.${i}` : `2001:db8:99::${i}` }] } }
                : undefined,
            );
          });
          const slices = specs.map((s, i) =>
            slice(
              s.ns,
              `${s.name}${i}`,
              [{ name: 'p', port: (s.port % 60000) + 1, protocol: s.proto }],
              Array.from({ length: s.eps }, (_, j) => ({
                ip: family === 4 ? `10.1.${i}.${j + 1}` : `fd00:10::${i}:${j + 1}`,
                node: j % 2 ? 'test-node' : 'other',
              })),
              `${s.name}${i}-x`,
              family === 4 ? 'IPv4' : 'IPv6',
            ),
          );
          const built = buildProxySnapshots({
            nodeName: 'test-node',
            nodeIPs: family === 4 ? [NODE_IP] : ['2001:db8::1'],
            services,
            endpointSlices: slices,
          });
          const snap = family === 4 ? built.v4 : built.v6;
          for (const layout of LAYOUTS) {
            const text = renderNftables(snap, {
              layout,
              localDetector: { mode: 'ClusterCIDR', cidr: family === 4 ? POD_CIDR : 'fd00:10::/64' },
              serviceCIDRs: [family === 4 ? '172.30.0.0/16' : 'fd00:96::/64'],
            });
            await exec.check(text);
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 120_000);

  describe.each(LAYOUTS)('%s layout', (layout) => {
    let state: ProxyState;
    let syncer: NftSyncer;
    const eps = [
      { ip: '10.100.1.2', node: 'test-node' },
      { ip: '10.100.2.2', node: 'other' },
    ];
    const port = [{ name: 'http', port: 8080 }];
    const add = (name: string, spec: Parameters<typeof svc>[2], endpoints = eps) => {
      state.onServiceAdd(svc('ns', name, spec));
      if (endpoints.length > 0) state.onEndpointSliceAdd(slice('ns', name, port, endpoints));
    };
    const render = {
      layout,
      localDetector: { mode: 'ClusterCIDR' as const, cidr: POD_CIDR },
      nodeIP: NODE_IP,
    };

    beforeAll(async () => {
      await node.exec(['nft', 'delete', 'table', 'ip', 'kube-proxy']);
      state = new ProxyState({ nodeName: 'test-node', nodeIPs: [NODE_IP] });
      for (const s of proxyKernelServices()) add(s.name, s.spec, s.endpoints);
      syncer = new NftSyncer({ executor: new SpawnNftExecutor({ netns: node.name }), render });
      const r = await syncer.sync(state.checkout().v4);
      expect(r.full).toBe(true);
    });

    it('a ClusterIP reaches both real servers', async () => {
      const seen = new Set((await connectFrom(pod1, '172.30.0.10', 80, 30)).map((r) => r.ok ?? r.err));
      expect(seen).toEqual(new Set(['pod1', 'pod2']));
    });

    it('NodePort from outside the node', async () => {
      const res = await connectFrom(ext, NODE_IP, 30081, 3);
      expect(res.map((r) => r.ok)).toEqual(['pod2', 'pod2', 'pod2']);
    });

    it('externalTrafficPolicy Local only reaches the local endpoint', async () => {
      const seen = new Set((await connectFrom(ext, NODE_IP, 30080, 20)).map((r) => r.ok ?? r.err));
      expect(seen).toEqual(new Set(['pod1']));
    });

    it('session affinity keeps one client on one endpoint', async () => {
      const seen = new Set((await connectFrom(pod2, '172.30.0.12', 80, 20)).map((r) => r.ok ?? r.err));
      expect(seen.size).toBe(1);
      expect(['pod1', 'pod2']).toContain([...seen][0]);
    });

    it('a service without endpoints is refused at once', async () => {
      const [r] = await connectFrom(pod1, '172.30.0.13', 80, 1);
      expect(r!.err).toBe('ECONNREFUSED');
      expect(r!.ms).toBeLessThan(1000);
    });

    it('a partial-sync sequence equals a fresh full sync in the kernel', async () => {
      add('later', { clusterIP: '172.30.0.20', ports: [{ name: 'http', port: 80 }] });
      expect((await syncer.sync(state.checkout().v4)).full).toBe(false);
      state.onEndpointSliceUpdate(undefined, slice('ns', 'web', port, [eps[1]!]));
      expect((await syncer.sync(state.checkout().v4)).full).toBe(false);
      state.onServiceDelete(
        svc('ns', 'np', { clusterIP: '172.30.0.14', ports: [{ name: 'http', port: 80 }] }),
      );
      const del = await syncer.sync(state.checkout().v4);
      expect(del.full).toBe(false);
      // Let the stale chains age past the delay and delete them in their own transaction.
      await new Promise((r) => setTimeout(r, 1100));
      await syncer.cleanup();
      const web = new Set((await connectFrom(pod1, '172.30.0.10', 80, 10)).map((r) => r.ok ?? r.err));
      expect(web).toEqual(new Set(['pod2']));

      const ours = tableMeaning(
        await new SpawnNftExecutor({ netns: node.name }).listTableJson('ip', 'kube-proxy'),
      );
      await check.exec(['nft', 'delete', 'table', 'ip', 'kube-proxy']);
      const freshExec = new SpawnNftExecutor({ netns: check.name });
      const fresh = new NftSyncer({ executor: freshExec, render });
      await fresh.sync(state.checkout().v4, { full: true });
      expect(meaningDiff(ours, tableMeaning(await freshExec.listTableJson('ip', 'kube-proxy')))).toEqual([]);
    });

    it('partial syncs that only add write rules and elements in forms that spare nft its chain dump', async () => {
      // nft 1.0.6 dumps every chain before `add rule`, `add element` or `delete`: partial syncs
      // without deletions write `add chain X { rules }` and `add set|map X { ...; elements }`,
      // declaring the sets their rules name (nft resolves `@set` from its cache).
      const texts: string[] = [];
      const inner = new SpawnNftExecutor({ netns: node.name });
      const spy = new NftSyncer({
        executor: {
          apply: (text) => {
            texts.push(text);
            return inner.apply(text);
          },
          check: (text) => inner.check(text),
          listObjects: (f, t) => inner.listObjects(f, t),
        },
        render,
      });
      await spy.sync(state.checkout().v4, { full: true });
      texts.length = 0;
      add(
        'sticky2',
        { clusterIP: '172.30.0.21', sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 80 }] },
        [eps[0]!],
      );
      expect((await spy.sync(state.checkout().v4)).full).toBe(false);
      // One more endpoint: the service chain is rewritten and names the existing affinity set.
      state.onEndpointSliceUpdate(undefined, slice('ns', 'sticky2', port, eps));
      expect((await spy.sync(state.checkout().v4)).full).toBe(false);
      expect(texts).toHaveLength(2);
      for (const text of texts) {
        expect(text).not.toMatch(/^(add rule|add element|delete) /m);
        expect(text).toMatch(/^add chain ip kube-proxy \S+ \{ .+ ; \}$/m);
      }
      expect(texts[0]).toMatch(/^add map ip kube-proxy \S+ \{ .*elements = \{ 172\.30\.0\.21 /m);
      if (layout === 'kube-proxy') expect(texts[1]).toMatch(/^add set ip kube-proxy affinity-/m);
      const seen = new Set((await connectFrom(pod1, '172.30.0.21', 80, 10)).map((r) => r.ok ?? r.err));
      expect(seen.size).toBe(1);

      // Dropping an endpoint deletes its affinity set at once; its chain goes 1 s later with the
      // next sync. Transactions whose only deletions are these end with the anchor listings that
      // narrow nft's cache (kube-proxy's layout; the optimized one deletes map elements here).
      texts.length = 0;
      state.onEndpointSliceUpdate(undefined, slice('ns', 'sticky2', port, [eps[0]!]));
      expect((await spy.sync(state.checkout().v4)).staleChains.length).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 1100));
      add('later2', { clusterIP: '172.30.0.22', ports: [{ name: 'http', port: 80 }] });
      expect((await spy.sync(state.checkout().v4)).deletedChains.length).toBeGreaterThan(0);
      expect(texts).toHaveLength(2);
      if (layout === 'kube-proxy') {
        expect(texts[0]).toMatch(/^delete set ip kube-proxy affinity-/m);
        expect(texts[1]).toMatch(/^delete chain ip kube-proxy endpoint-/m);
        for (const text of texts) {
          expect(text).not.toMatch(/^(add rule|add element|delete element) /m);
          expect(text).toMatch(/\nlist chain ip kube-proxy \S+\nlist (set|map) ip kube-proxy \S+\n$/);
          // nft prints the listings without complaint: the chain names no set nft did not fetch
          // (else "Error: Unknown set ... in lookup expression" on stderr, exit status still 0).
          const anchors = text.trimEnd().split('\n').slice(-2).join('\n');
          expect((await node.exec(['nft', '-f', '-'], { input: `${anchors}\n` })).stderr).toBe('');
        }
      }

      // The last endpoint of sticky2 goes: kube-proxy's layout deletes the element of one map
      // (service-ips) and ends with listings of a chain and that map, so nft fetches that map
      // instead of every chain; the kernel accepts it and the table stays equal to a fresh sync.
      texts.length = 0;
      state.onEndpointSliceUpdate(undefined, slice('ns', 'sticky2', port, []));
      expect((await spy.sync(state.checkout().v4)).elementChanges).toBeGreaterThan(0);
      if (layout === 'kube-proxy') {
        expect(texts).toHaveLength(1);
        expect(texts[0]!.match(/^delete element ip kube-proxy \S+/gm)).toEqual([
          'delete element ip kube-proxy service-ips',
        ]);
        expect(texts[0]).toMatch(/\nlist chain ip kube-proxy \S+\nlist map ip kube-proxy service-ips\n$/);
        const anchors = texts[0]!.trimEnd().split('\n').slice(-2).join('\n');
        expect((await node.exec(['nft', '-f', '-'], { input: `${anchors}\n` })).stderr).toBe('');
      }
      expect((await connectFrom(pod1, '172.30.0.21', 80, 1))[0]!.err).toBe('ECONNREFUSED');
      await new Promise((r) => setTimeout(r, 1100));
      await spy.cleanup();

      const ours = tableMeaning(await inner.listTableJson('ip', 'kube-proxy'));
      await check.exec(['nft', 'delete', 'table', 'ip', 'kube-proxy']);
      const freshExec = new SpawnNftExecutor({ netns: check.name });
      await new NftSyncer({ executor: freshExec, render }).sync(state.checkout().v4, { full: true });
      expect(meaningDiff(ours, tableMeaning(await freshExec.listTableJson('ip', 'kube-proxy')))).toEqual([]);
    });
  });
});

// SCRATCH (not committed): loads kube-proxy's layout at 10,000 services into netns c10k and leaves it.
import { ProxyState } from '@nodeagent/proxy-state';
import { it } from 'vitest';
import { NftSyncer, SpawnNftExecutor } from '../src/index.js';
const EPS = 10;
function addService(state: ProxyState, i: number): void {
  state.onServiceAdd({
    metadata: { namespace: 'bench', name: `svc${i}` },
    spec: { clusterIP: `172.30.${i >> 8}.${i & 255}`, ports: [{ name: 'http', port: 80 }] },
  });
  state.onEndpointSliceAdd({
    metadata: { namespace: 'bench', name: `svc${i}-1`, labels: { 'kubernetes.io/service-name': `svc${i}` } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: EPS }, (_, j) => ({ addresses: [`10.${(i >> 8) & 255}.${i & 255}.${j + 1}`] })),
  });
}
it('load', async () => {
  const syncer = new NftSyncer({ executor: new SpawnNftExecutor({ netns: 'c10k' }), render: { localDetector: { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } } });
  const live = new ProxyState({ nodeName: 'node', nodeIPs: ['192.168.0.2'] });
  const t0 = performance.now();
  for (let done = 0; done < 10000; done += 1000) {
    for (let i = done; i < done + 1000; i++) addService(live, i);
    await syncer.sync(live.checkout().v4);
  }
  console.log('loaded', performance.now() - t0);
  const { writeFileSync } = await import('node:fs');
  const r = syncer.renderer.render(live.checkout().v4).ruleset;
  writeFileSync('/tmp/c-bench/c10k-base.json', JSON.stringify(r.baseChains.map((c) => [c.name, c.rules])));
  writeFileSync('/tmp/c-bench/c10k-sets.json', JSON.stringify(r.baseSets));
  const p = [...r.ports.values()].slice(0, 3);
  writeFileSync('/tmp/c-bench/c10k-ports.json', JSON.stringify(p));
}, 1_800_000);

// Checkout cost at 1,000 / 10,000 / 20,000 services × 10 endpoints: a full build from all
// objects (what a fresh start or a CLI does — the reference), an incremental checkout after
// one EndpointSlice changed, and categorising every service port of that snapshot (what a
// renderer does on every sync, with results reused for unchanged ports). Prints ms; asserts
// nothing about speed.

import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { buildProxySnapshots, ProxyState } from '@nodeagent/proxy-state';
import { it } from 'vitest';

function objects(n: number): { services: V1Service[]; slices: V1EndpointSlice[] } {
  const services: V1Service[] = [];
  const slices: V1EndpointSlice[] = [];
  for (let i = 0; i < n; i++) {
    const ip = `${(i >> 8) & 255}.${i & 255}`;
    services.push({
      metadata: { namespace: `ns${i % 50}`, name: `svc${i}` },
      spec: { clusterIP: `172.30.${ip}`, ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] },
    });
    slices.push(slice(i, 0));
  }
  return { services, slices };
}

function slice(i: number, generation: number): V1EndpointSlice {
  return {
    metadata: {
      namespace: `ns${i % 50}`,
      name: `svc${i}-x`,
      labels: { 'kubernetes.io/service-name': `svc${i}` },
    },
    addressType: 'IPv4',
    ports: [{ name: 'p80', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: 10 }, (_, e) => ({
      addresses: [`10.${(i >> 8) & 255}.${i & 255}.${e + 1 + generation}`],
      nodeName: `node-${e}`,
    })),
  };
}

function ms(fn: () => void, rounds = 3): number {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    fn();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

it('checkout: full build vs one-slice incremental checkout', () => {
  const rows: Record<string, string | number>[] = [];
  for (const n of [1_000, 10_000, 20_000]) {
    const { services, slices } = objects(n);
    const options = { nodeName: 'node-0', nodeIPs: ['192.168.0.2'] };
    const full = ms(() => {
      const { v4 } = buildProxySnapshots({ ...options, services, endpointSlices: slices });
      for (const key of v4.services.keys()) v4.categorize(key);
    });
    const state = new ProxyState(options);
    for (const s of services) state.onServiceAdd(s);
    for (const s of slices) state.onEndpointSliceAdd(s);
    const first = state.checkout().v4;
    for (const key of first.services.keys()) first.categorize(key);
    let generation = 0;
    let checkoutMs = Number.POSITIVE_INFINITY;
    let categorizeMs = Number.POSITIVE_INFINITY;
    for (let r = 0; r < 5; r++) {
      state.onEndpointSliceUpdate(undefined, slice(n >> 1, ++generation));
      const t0 = performance.now();
      const { v4 } = state.checkout();
      const t1 = performance.now();
      if (v4.changedServices.size !== 1) throw new Error('expected exactly one changed service');
      for (const key of v4.services.keys()) v4.categorize(key);
      const t2 = performance.now();
      checkoutMs = Math.min(checkoutMs, t1 - t0);
      categorizeMs = Math.min(categorizeMs, t2 - t1);
    }
    rows.push({
      services: n,
      'full build + categorize (ms)': full.toFixed(1),
      'incremental checkout (ms)': checkoutMs.toFixed(2),
      'categorize all after 1 change (ms)': categorizeMs.toFixed(2),
    });
  }
  console.log('\n@nodeagent/proxy-state checkout (10 endpoints per service, best of runs)');
  console.table(rows);
});

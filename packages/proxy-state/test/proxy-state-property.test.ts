import type { V1Endpoint, V1EndpointSlice, V1Service, V1ServicePort } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildProxySnapshots, type ProxySnapshot, ProxyState } from '../src/index.js';

const NS = ['a', 'b'];
const SVC = ['s0', 's1', 's2'];
const SLICE = ['e0', 'e1', 'e2', 'e3'];

const servicePorts: V1ServicePort[] = [
  { name: 'http', port: 80, protocol: 'TCP' },
  { name: 'dns', port: 53, protocol: 'UDP' },
];

const serviceArb: fc.Arbitrary<V1Service> = fc
  .record({
    namespace: fc.constantFrom(...NS),
    name: fc.constantFrom(...SVC),
    n: fc.integer({ min: 1, max: 9 }),
    family: fc.constantFrom('v4', 'v6', 'dual', 'headless', 'externalName'),
    type: fc.constantFrom('ClusterIP', 'NodePort', 'LoadBalancer'),
    ports: fc.subarray(servicePorts, { minLength: 1 }),
    etpLocal: fc.boolean(),
    itpLocal: fc.boolean(),
    affinity: fc.boolean(),
    invalid: fc.integer({ min: 0, max: 9 }),
  })
  .map((r) => {
    const clusterIPs =
      r.family === 'v4'
        ? [`10.0.0.${r.n}`]
        : r.family === 'v6'
          ? [`fd00::${r.n}`]
          : r.family === 'dual'
            ? [`10.0.0.${r.n}`, `fd00::${r.n}`]
            : ['None'];
    const ports = r.ports.map((p, i) => ({
      ...p,
      ...(r.type === 'ClusterIP' ? {} : { nodePort: 30000 + i + r.n * 10 }),
      ...(r.invalid === 0 && i === 0 ? { port: 70000 } : {}),
    }));
    return {
      metadata: { namespace: r.namespace, name: r.name },
      spec: {
        type: r.family === 'externalName' ? 'ExternalName' : r.type,
        clusterIPs,
        ports,
        externalTrafficPolicy: r.etpLocal ? 'Local' : 'Cluster',
        internalTrafficPolicy: r.itpLocal ? 'Local' : 'Cluster',
        ...(r.affinity ? { sessionAffinity: 'ClientIP' } : {}),
      },
      status: r.type === 'LoadBalancer' ? { loadBalancer: { ingress: [{ ip: `192.0.2.${r.n}` }] } } : {},
    } satisfies V1Service;
  });

const endpointArb = (v6: boolean): fc.Arbitrary<V1Endpoint> =>
  fc
    .record({
      host: fc.integer({ min: 1, max: 4 }),
      invalid: fc.integer({ min: 0, max: 19 }),
      ready: fc.option(fc.boolean(), { nil: undefined }),
      serving: fc.option(fc.boolean(), { nil: undefined }),
      terminating: fc.option(fc.boolean(), { nil: undefined }),
      nodeName: fc.option(fc.constantFrom('node-a', 'node-b'), { nil: undefined }),
      zoneHints: fc.subarray(['zone-a', 'zone-b']),
      nodeHints: fc.subarray(['node-a', 'node-b']),
    })
    .map((r) => ({
      addresses: [r.invalid === 0 ? 'bogus' : v6 ? `fd00:1::${r.host}` : `10.1.0.${r.host}`],
      conditions: {
        ...(r.ready === undefined ? {} : { ready: r.ready }),
        ...(r.serving === undefined ? {} : { serving: r.serving }),
        ...(r.terminating === undefined ? {} : { terminating: r.terminating }),
      },
      ...(r.nodeName === undefined ? {} : { nodeName: r.nodeName }),
      hints: {
        forZones: r.zoneHints.map((name) => ({ name })),
        forNodes: r.nodeHints.map((name) => ({ name })),
      },
    }));

const sliceArb: fc.Arbitrary<V1EndpointSlice> = fc
  .record({
    namespace: fc.constantFrom(...NS),
    name: fc.constantFrom(...SLICE),
    service: fc.constantFrom(...SVC, undefined),
    v6: fc.boolean(),
    ports: fc.subarray([
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'dns', port: 5353, protocol: 'UDP' },
      { name: 'http', port: 8081, protocol: 'UDP' },
    ]),
  })
  .chain((r) =>
    fc.array(endpointArb(r.v6), { maxLength: 4 }).map(
      (endpoints) =>
        ({
          metadata: {
            namespace: r.namespace,
            name: r.name,
            ...(r.service === undefined ? {} : { labels: { 'kubernetes.io/service-name': r.service } }),
          },
          addressType: r.v6 ? 'IPv6' : 'IPv4',
          ports: r.ports,
          endpoints,
        }) satisfies V1EndpointSlice,
    ),
  );

type Op =
  | { op: 'service'; obj: V1Service }
  | { op: 'deleteService'; namespace: string; name: string }
  | { op: 'slice'; obj: V1EndpointSlice }
  | { op: 'deleteSlice'; namespace: string; name: string }
  | { op: 'checkout' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: serviceArb.map((obj) => ({ op: 'service' as const, obj })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ namespace: fc.constantFrom(...NS), name: fc.constantFrom(...SVC) })
      .map((r) => ({ op: 'deleteService' as const, ...r })),
  },
  { weight: 5, arbitrary: sliceArb.map((obj) => ({ op: 'slice' as const, obj })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ namespace: fc.constantFrom(...NS), name: fc.constantFrom(...SLICE) })
      .map((r) => ({ op: 'deleteSlice' as const, ...r })),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'checkout' as const }) },
);

function view(s: ProxySnapshot) {
  return [...s.services.keys()].map((k) => ({
    key: k,
    info: s.services.get(k),
    endpoints: s.endpoints.get(k),
    categorized: s.categorize(k),
  }));
}

function byService(s: ProxySnapshot): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, info] of s.services) {
    out.set(
      info.serviceKey,
      `${out.get(info.serviceKey) ?? ''}|${k}${JSON.stringify([info, s.endpoints.get(k)])}`,
    );
  }
  return out;
}

describe('ProxyState property', () => {
  it('incremental updates + checkout equal a snapshot built from the final objects; changedServices covers every difference', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 40 }),
        fc.constantFrom('', 'zone-a', 'zone-b'),
        (ops, zone) => {
          const options = {
            nodeName: 'node-a',
            nodeIPs: ['192.168.0.2', 'fd00::2'],
            nodeLabels: { 'topology.kubernetes.io/zone': zone },
          };
          const state = new ProxyState(options);
          const services = new Map<string, V1Service>();
          const slices = new Map<string, V1EndpointSlice>();
          let last = state.checkout();
          const checkChanged = () => {
            const next = state.checkout();
            for (const fam of ['v4', 'v6'] as const) {
              const before = byService(last[fam]);
              const after = byService(next[fam]);
              for (const key of new Set([...before.keys(), ...after.keys()])) {
                if (before.get(key) !== after.get(key)) expect(next[fam].changedServices.has(key)).toBe(true);
              }
            }
            last = next;
          };
          for (const op of ops) {
            if (op.op === 'service') {
              const key = `${op.obj.metadata!.namespace}/${op.obj.metadata!.name}`;
              const old = services.get(key);
              if (old === undefined) state.onServiceAdd(op.obj);
              else state.onServiceUpdate(old, op.obj);
              services.set(key, op.obj);
            } else if (op.op === 'deleteService') {
              const key = `${op.namespace}/${op.name}`;
              const old = services.get(key);
              if (old !== undefined) state.onServiceDelete(old);
              services.delete(key);
            } else if (op.op === 'slice') {
              const key = `${op.obj.metadata!.namespace}/${op.obj.metadata!.name}`;
              const old = slices.get(key);
              if (old === undefined) state.onEndpointSliceAdd(op.obj);
              else state.onEndpointSliceUpdate(old, op.obj);
              slices.set(key, op.obj);
            } else if (op.op === 'deleteSlice') {
              const key = `${op.namespace}/${op.name}`;
              const old = slices.get(key);
              if (old !== undefined) state.onEndpointSliceDelete(old);
              slices.delete(key);
            } else {
              checkChanged();
            }
          }
          checkChanged();
          const built = buildProxySnapshots({
            ...options,
            services: [...services.values()],
            endpointSlices: [...slices.values()],
          });
          expect(view(last.v4)).toEqual(view(built.v4));
          expect(view(last.v6)).toEqual(view(built.v6));
          expect(state.changeCounts.servicesPending + state.changeCounts.endpointsPending).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** Property: for random services, endpoints and packets, both layouts give the same tracer result. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NftTracer, renderNftables, tableFromText } from '../src/index.js';
import { NODE, NODE_IP, NODE_IPS, slice, snapshot, svc, TEST_OPTIONS } from './helpers.js';

const svcArb = fc.record({
  type: fc.constantFrom('ClusterIP', 'NodePort', 'LoadBalancer'),
  etpLocal: fc.boolean(),
  itpLocal: fc.boolean(),
  affinity: fc.boolean(),
  proto: fc.constantFrom('TCP', 'UDP'),
  port: fc.constantFrom(80, 443),
  eps: fc.array(
    fc.record({
      host: fc.integer({ min: 1, max: 4 }),
      local: fc.boolean(),
      ready: fc.boolean(),
      terminating: fc.boolean(),
    }),
    { maxLength: 4 },
  ),
  extIP: fc.boolean(),
  ranges: fc.boolean(),
});

describe('optimized layout ≡ kube-proxy layout', () => {
  it('gives the same tracer result for random clusters and packets', () => {
    fc.assert(
      fc.property(
        fc.array(svcArb, { minLength: 1, maxLength: 5 }),
        fc.array(
          fc.record({
            src: fc.constantFrom('10.0.0.2', '10.1.1.1', '10.1.2.1', '203.0.113.2', '203.0.113.130', NODE_IP),
            dstKind: fc.constantFrom('cluster', 'node', 'ext', 'lb', 'other'),
            svc: fc.nat(4),
            port: fc.constantFrom(80, 443, 30000, 30001, 30002),
            proto: fc.constantFrom('TCP' as const, 'UDP' as const),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        (specs, packets) => {
          const services = specs.map((s, i) =>
            svc(
              'ns',
              `s${i}`,
              {
                type: s.type,
                clusterIP: `172.30.0.${i + 1}`,
                ports: [
                  {
                    name: 'p',
                    port: s.port,
                    protocol: s.proto,
                    ...(s.type !== 'ClusterIP' ? { nodePort: 30000 + i } : {}),
                  },
                ],
                ...(s.extIP ? { externalIPs: [`192.168.99.${i + 20}`] } : {}),
                ...(s.etpLocal && s.type !== 'ClusterIP'
                  ? { externalTrafficPolicy: 'Local', healthCheckNodePort: 32000 + i }
                  : {}),
                ...(s.itpLocal ? { internalTrafficPolicy: 'Local' } : {}),
                ...(s.affinity ? { sessionAffinity: 'ClientIP' } : {}),
                ...(s.ranges ? { loadBalancerSourceRanges: ['203.0.113.0/25', '192.168.0.0/24'] } : {}),
              },
              s.type === 'LoadBalancer'
                ? { loadBalancer: { ingress: [{ ip: `1.2.3.${i + 1}` }] } }
                : undefined,
            ),
          );
          const slices = specs.map((s, i) =>
            slice(
              'ns',
              `s${i}`,
              [{ name: 'p', port: 8000 + i, protocol: s.proto }],
              s.eps.map((e) => ({
                ip: `10.1.${e.host}.1`,
                ...(e.local ? { node: NODE } : { node: 'other' }),
                ready: e.ready,
                serving: e.ready || e.terminating,
                terminating: e.terminating,
              })),
            ),
          );
          const { snap } = snapshot({ services, slices });
          const [a, b] = (['kube-proxy', 'optimized'] as const).map(
            (layout) =>
              new NftTracer(tableFromText(renderNftables(snap, { ...TEST_OPTIONS, layout })), NODE_IPS),
          );
          for (const p of packets) {
            const i = p.svc % specs.length;
            const dest = {
              cluster: `172.30.0.${i + 1}`,
              node: NODE_IP,
              ext: `192.168.99.${i + 20}`,
              lb: `1.2.3.${i + 1}`,
              other: '10.1.1.1',
            }[p.dstKind];
            const pkt = { sourceIP: p.src, destIP: dest, destPort: p.port, protocol: p.proto };
            expect(b!.trace(pkt)).toEqual(a!.trace(pkt));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

/**
 * Golden files for representative services in both layouts (regenerate with
 * `UPDATE_GOLDEN=1 npx vitest run packages/nftables/test/render-golden.test.ts` and review the diff).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderNftables } from '../src/index.js';
import { OVERALL } from './fixtures.js';
import { LAYOUTS } from './flow-support.js';
import { type Cluster, NODE, slice, snapshot, svc, TEST_OPTIONS, TEST_OPTIONS6 } from './helpers.js';

const CASES: { name: string; cluster: Cluster; family?: 6 }[] = [
  { name: 'overall', cluster: OVERALL },
  {
    name: 'internal-local-and-terminating',
    cluster: {
      services: [
        svc('ns1', 'itp', {
          clusterIP: '172.30.0.51',
          internalTrafficPolicy: 'Local',
          ports: [{ name: 'p', port: 80 }],
        }),
        svc('ns1', 'term', { clusterIP: '172.30.0.52', ports: [{ port: 53, protocol: 'UDP' }] }),
      ],
      slices: [
        slice('ns1', 'itp', [{ name: 'p', port: 80 }], [{ ip: '10.0.1.1', node: NODE }, { ip: '10.0.1.2' }]),
        slice(
          'ns1',
          'term',
          [{ port: 53, protocol: 'UDP' }],
          [{ ip: '10.0.2.1', ready: false, serving: true, terminating: true }],
        ),
      ],
    },
  },
  {
    name: 'ipv6-nodeport-local',
    family: 6,
    cluster: {
      services: [
        svc('ns1', 'v6', {
          type: 'NodePort',
          clusterIP: 'fd00:10:96::5',
          clusterIPs: ['fd00:10:96::5'],
          ipFamilies: ['IPv6'],
          externalTrafficPolicy: 'Local',
          ports: [{ name: 'p', port: 443, nodePort: 30443 }],
        }),
      ],
      slices: [
        slice(
          'ns1',
          'v6',
          [{ name: 'p', port: 8443 }],
          [{ ip: 'fd00:10::7', node: NODE }, { ip: 'fd00:10::8' }],
          'v6-1',
          'IPv6',
        ),
      ],
    },
  },
];

describe('golden rulesets', () => {
  for (const c of CASES) {
    for (const layout of LAYOUTS) {
      it(`${c.name} (${layout})`, () => {
        const { snap } = snapshot(c.cluster, c.family ?? 4);
        const text = renderNftables(snap, { ...(c.family === 6 ? TEST_OPTIONS6 : TEST_OPTIONS), layout });
        const file = new URL(`./golden/${c.name}.${layout}.nft`, import.meta.url);
        if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) writeFileSync(file, text);
        expect(text).toBe(readFileSync(file, 'utf8'));
        // Deterministic: a second render is byte-identical.
        expect(
          renderNftables(snapshot(c.cluster, c.family ?? 4).snap, {
            ...(c.family === 6 ? TEST_OPTIONS6 : TEST_OPTIONS),
            layout,
          }),
        ).toBe(text);
      });
    }
  }
});

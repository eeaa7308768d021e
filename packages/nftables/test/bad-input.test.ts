/** Bad input isolation and hostile names: the bad port is skipped with a typed error, the rest is programmed. */
import { InvalidServicePortError, quoteNftComment as quoteComment } from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import { NftRenderer, renderNftables, tracePacket } from '../src/index.js';
import { FakeNftExecutor } from '../src/testing.js';
import { slice, snapshot, svc, TEST_OPTIONS } from './helpers.js';

describe('bad input', () => {
  for (const layout of ['kube-proxy', 'optimized'] as const) {
    it(`skips hostile names with a clear error, keeps the others (${layout})`, async () => {
      const names = ['we"ird', 'new\nline', 'sp ace', 'semi;colon', 'brace}'];
      const c = {
        services: [
          svc('ns', 'good', { clusterIP: '172.30.0.1', ports: [{ name: 'p', port: 80 }] }),
          ...names.map((n, i) =>
            svc(n, `bad${i}`, { clusterIP: `172.30.1.${i + 1}`, ports: [{ name: 'p', port: 80 }] }),
          ),
          svc('ns', 'badport', { clusterIP: '172.30.2.1', ports: [{ name: 'x"y', port: 80 }] }),
        ],
        slices: [slice('ns', 'good', [{ name: 'p', port: 8080 }], [{ ip: '10.1.0.1' }])],
      };
      const { snap } = snapshot(c);
      const { errors } = new NftRenderer({ ...TEST_OPTIONS, layout }).render(snap);
      expect(errors.every((e) => e instanceof InvalidServicePortError)).toBe(true);
      expect(errors.map((e) => e.servicePortName).sort()).toEqual(
        [...names.map((n, i) => `${n}/bad${i}:p`), 'ns/badport:x"y'].sort(),
      );
      expect(errors[0]!.message).toMatch(/cannot appear in an nft chain name/);
      const text = renderNftables(snap, { ...TEST_OPTIONS, layout });
      expect(text).not.toMatch(/we"ird|new\nline|sp ace/);
      await new FakeNftExecutor().apply(text);
      expect(
        tracePacket(text, { sourceIP: '10.0.0.2', destIP: '172.30.0.1', destPort: 80 }).endpoints,
      ).toEqual(['10.1.0.1:8080']);
    });
  }

  it('quotes comments safely', () => {
    expect(quoteComment('a "b"\nc\u0000d')).toBe(`"a 'b' c d"`);
    expect(Buffer.byteLength(quoteComment('é'.repeat(200)))).toBeLessThanOrEqual(130);
  });

  it('rejects bad options with a typed error', () => {
    expect(() => new NftRenderer({ localDetector: { mode: 'ClusterCIDR', cidr: 'fd00::/64' } })).toThrow(
      /not an ip CIDR/,
    );
    expect(() => new NftRenderer({ masqueradeBit: 40 })).toThrow(/out of range/);
  });
});

import {
  iptablesCommentArg as commentArg,
  quoteIptablesComment as quoteComment,
} from '@nodeagent/proxy-state';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  IptablesRenderer,
  type IptablesServicePort,
  parseRestoreText,
  restoreText,
  tokenizeRule,
  tracePacket,
} from '../src/index.js';
import { FakeIptablesExecutor } from '../src/testing.js';

function port(name: string, ns = 'ns'): IptablesServicePort {
  return {
    namespace: ns,
    name,
    portName: 'p',
    protocol: 'TCP',
    clusterIP: '172.30.0.41',
    port: 80,
    nodePort: 30001,
    externalIPs: ['192.168.99.1'],
    loadBalancerVIPs: ['1.2.3.4'],
    loadBalancerSourceRanges: ['203.0.113.0/25'],
    sessionAffinityTimeoutSeconds: 60,
    clusterEndpoints: [{ ip: '10.0.1.1', port: 80 }],
    localEndpoints: [],
    hasEndpoints: true,
  };
}

describe('hostile names never break restore syntax', () => {
  it('valid Kubernetes names keep kube-proxy’s bytes (bare single words, quoted phrases)', () => {
    expect(commentArg('ns1/svc1:p80')).toBe('ns1/svc1:p80');
    expect(quoteComment('ns1/svc1:p80 cluster IP')).toBe('"ns1/svc1:p80 cluster IP"');
  });

  it.each([
    ['quote', 'a"b', '"a\\"b"'],
    ['backslash', 'a\\b', '"a\\\\b"'],
    ['newline', 'a\nb', '"a b"'],
    ['space', 'a b', '"a b"'],
    ['empty', '', '""'],
  ])('%s is quoted/escaped', (_n, input, out) => {
    expect(commentArg(input)).toBe(out);
    expect(tokenizeRule(`-A X -m comment --comment ${commentArg(input)} -j RETURN`)[5]).toBe(
      input.replace(/\n/g, ' '),
    );
  });

  it('long names are cut to the kernel’s 255-byte comment limit', () => {
    const c = quoteComment('x'.repeat(400));
    expect(tokenizeRule(`-A X -m comment --comment ${c}`)[5]).toHaveLength(255);
  });

  it('property: any name renders to a payload with one rule per line that applies and traces', async () => {
    const name = fc.string({ unit: 'binary', maxLength: 80 });
    await fc.assert(
      fc.asyncProperty(name, name, async (ns, n) => {
        const text = restoreText(new IptablesRenderer().render([port(n, ns)]));
        const tables = parseRestoreText(text);
        for (const t of tables)
          for (const r of t.rules) expect(r.params.get('-j') ?? r.params.get('--comment')).toBeDefined();
        await new FakeIptablesExecutor().restore(text);
        expect(
          tracePacket(text, { sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80 }).endpoints,
        ).toEqual(['10.0.1.1:80']);
      }),
      { numRuns: 200 },
    );
  });
});

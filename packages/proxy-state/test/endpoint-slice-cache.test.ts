import { describe, expect, it } from 'vitest';
import {
  EndpointSliceCache,
  endpointsMapKey,
  InvalidEndpointSliceError,
  parseEndpointSlice,
} from '../src/index.js';
import { slice } from './fixtures.js';

const KEY = endpointsMapKey('p80', 'TCP');

function names(cache: EndpointSliceCache, svc = 'ns/svc'): string[] {
  return (cache.endpointsMap(svc).get(KEY) ?? []).map(
    (e) => `${e.endpoint}${e.terminating ? ' (terminating)' : ''}`,
  );
}

describe('EndpointSliceCache', () => {
  it('merges several slices of a service, sorted by endpoint string', () => {
    const cache = new EndpointSliceCache(4, 'node-a');
    cache.updatePending(
      parseEndpointSlice(slice('ns', 'svc-b', 'svc', { endpoints: [{ addresses: ['10.0.1.2'] }] })),
      false,
    );
    cache.updatePending(
      parseEndpointSlice(
        slice('ns', 'svc-a', 'svc', { endpoints: [{ addresses: ['10.0.1.10'], nodeName: 'node-a' }] }),
      ),
      false,
    );
    expect(cache.pendingServices).toBe(1);
    const changes = cache.checkoutChanges();
    expect([...changes.keys()]).toEqual(['ns/svc']);
    expect(changes.get('ns/svc')!.previous.size).toBe(0);
    expect(names(cache)).toEqual(['10.0.1.10:80', '10.0.1.2:80']);
    expect(cache.endpointsMap('ns/svc').get(KEY)![0]!.isLocal).toBe(true);
    expect(cache.pendingServices).toBe(0);
  });

  it('dedupes IP:port across slices, preferring the non-terminating copy', () => {
    for (const order of [
      ['a', 'b'],
      ['b', 'a'],
    ]) {
      const cache = new EndpointSliceCache(4, 'node-a');
      const slices = {
        a: slice('ns', 'svc-a', 'svc', {
          endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
        }),
        b: slice('ns', 'svc-b', 'svc', {
          endpoints: [
            { addresses: ['10.0.0.1'], conditions: { ready: false, serving: true, terminating: true } },
          ],
        }),
      };
      for (const k of order) cache.updatePending(parseEndpointSlice(slices[k as 'a' | 'b']), false);
      cache.checkoutChanges();
      expect(names(cache)).toEqual(['10.0.0.1:80']);
    }
    // The terminating copy sorts first by slice name here, and still loses.
    const cache = new EndpointSliceCache(4, 'node-a');
    cache.updatePending(
      parseEndpointSlice(
        slice('ns', 'svc-0', 'svc', {
          endpoints: [{ addresses: ['10.0.0.1'], conditions: { terminating: true } }],
        }),
      ),
      false,
    );
    cache.updatePending(
      parseEndpointSlice(slice('ns', 'svc-1', 'svc', { endpoints: [{ addresses: ['10.0.0.1'] }] })),
      false,
    );
    cache.checkoutChanges();
    expect(names(cache)).toEqual(['10.0.0.1:80']);
  });

  it('a slice update equal to what is applied is a no-op; one that returns to it cancels', () => {
    const cache = new EndpointSliceCache(4, 'node-a');
    const a = slice('ns', 'svc-a', 'svc', { endpoints: [{ addresses: ['10.0.0.1'] }] });
    const b = slice('ns', 'svc-a', 'svc', { endpoints: [{ addresses: ['10.0.0.2'] }] });
    cache.updatePending(parseEndpointSlice(a), false);
    cache.checkoutChanges();
    // Same content, other metadata: nothing to program.
    expect(
      cache.updatePending(
        parseEndpointSlice({ ...a, metadata: { ...a.metadata, resourceVersion: '9' } }),
        false,
      ),
    ).toBe(false);
    expect(cache.updatePending(parseEndpointSlice(b), false)).toBe(true);
    expect(cache.pendingServices).toBe(1);
    expect(cache.updatePending(parseEndpointSlice(a), false)).toBe(true);
    expect(cache.pendingServices).toBe(0);
    expect(cache.checkoutChanges().size).toBe(0);
  });

  it('moving endpoints between slices of one service reports no change', () => {
    const cache = new EndpointSliceCache(4, 'node-a');
    cache.updatePending(
      parseEndpointSlice(slice('ns', 's1', 'svc', { endpoints: [{ addresses: ['10.0.0.1'] }] })),
      false,
    );
    cache.checkoutChanges();
    cache.updatePending(parseEndpointSlice(slice('ns', 's1', 'svc', { endpoints: [] })), false);
    cache.updatePending(
      parseEndpointSlice(slice('ns', 's2', 'svc', { endpoints: [{ addresses: ['10.0.0.1'] }] })),
      false,
    );
    expect(cache.checkoutChanges().size).toBe(0);
    expect(names(cache)).toEqual(['10.0.0.1:80']);
  });

  it('removing a slice withdraws its endpoints; removing an unknown slice is a no-op', () => {
    const cache = new EndpointSliceCache(4, '');
    const s = parseEndpointSlice(
      slice('ns', 's1', 'svc', { endpoints: [{ addresses: ['10.0.0.1'], nodeName: '' }] }),
    );
    expect(cache.updatePending(s, true)).toBe(false);
    cache.updatePending(s, false);
    cache.checkoutChanges();
    expect(cache.endpointsMap('ns/svc').get(KEY)![0]!.isLocal).toBe(false);
    expect(cache.updatePending(s, true)).toBe(true);
    const change = cache.checkoutChanges().get('ns/svc')!;
    expect(change.previous.get(KEY)!.length).toBe(1);
    expect(change.current.size).toBe(0);
  });

  it('ignores ports without a number and endpoints without addresses', () => {
    const parsed = parseEndpointSlice(
      slice('ns', 's', 'svc', {
        ports: [{ name: 'all' }, { name: 'zero', port: 0 }, { name: 'p80', port: 80 }],
        endpoints: [{ addresses: [] }, { addresses: ['10.0.0.1'] }],
      }),
    );
    expect(parsed.ports).toEqual([{ name: 'p80', port: 80, protocol: 'TCP' }]);
    expect(parsed.endpoints.map((e) => e.ip)).toEqual(['10.0.0.1']);
  });

  it('carries conditions and hints, with upstream defaults', () => {
    const parsed = parseEndpointSlice(
      slice('ns', 's', 'svc', {
        endpoints: [
          { addresses: ['10.0.0.1'] },
          {
            addresses: ['10.0.0.2'],
            conditions: { ready: false, serving: true, terminating: true },
            zone: 'z1',
            nodeName: 'n1',
            hints: { forZones: [{ name: 'z2' }, { name: 'z1' }], forNodes: [{ name: 'n1' }] },
          },
        ],
      }),
    );
    expect(parsed.endpoints).toEqual([
      {
        ip: '10.0.0.1',
        ready: true,
        serving: true,
        terminating: false,
        nodeName: null,
        zone: null,
        zoneHints: [],
        nodeHints: [],
      },
      {
        ip: '10.0.0.2',
        ready: false,
        serving: true,
        terminating: true,
        nodeName: 'n1',
        zone: 'z1',
        zoneHints: ['z1', 'z2'],
        nodeHints: ['n1'],
      },
    ]);
  });

  it('FQDN slices parse to no family (ignored)', () => {
    const parsed = parseEndpointSlice(
      slice('ns', 's', 'svc', { addressType: 'FQDN', endpoints: [{ addresses: ['example.com'] }] }),
    );
    expect(parsed.family).toBeNull();
  });

  it.each([
    ['no service-name label', slice('ns', 's', undefined), 'no kubernetes.io/service-name label'],
    ['an unknown address type', slice('ns', 's', 'svc', { addressType: 'IPX' }), 'addressType "IPX"'],
    [
      'an invalid address',
      slice('ns', 's', 'svc', { endpoints: [{ addresses: ['10.0.0.999'] }] }),
      '"10.0.0.999" is not an IPv4 address',
    ],
    [
      'an address of the wrong family',
      slice('ns', 's', 'svc', { endpoints: [{ addresses: ['fd00::1'] }] }),
      '"fd00::1" is not an IPv4 address',
    ],
    [
      'a port out of range',
      slice('ns', 's', 'svc', { ports: [{ name: 'p', port: 70000 }] }),
      'ports[0].port 70000',
    ],
    [
      'an unknown protocol',
      slice('ns', 's', 'svc', { ports: [{ name: 'p', port: 80, protocol: 'QUIC' }] }),
      'protocol "QUIC"',
    ],
  ])('rejects a slice with %s', (_name, input, message) => {
    let caught: unknown;
    try {
      parseEndpointSlice(input);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidEndpointSliceError);
    const err = caught as InvalidEndpointSliceError;
    expect(err.message).toContain('EndpointSlice ns/s skipped');
    expect(err.problems.join('\n')).toContain(message);
  });

  it('refuses a slice of the other family', () => {
    const cache = new EndpointSliceCache(6, 'n');
    expect(() => cache.updatePending(parseEndpointSlice(slice('ns', 's', 'svc')), false)).toThrow(/not IPv6/);
  });
});

/**
 * Wrong-typed fields (what a hand-written manifest or a buggy client sends) are typed errors
 * naming the object and the field, never a crash or a string read character by character.
 */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  InvalidEndpointSliceError,
  InvalidServiceError,
  ProxyState,
  parseEndpointSlice,
  parseService,
} from '../src/index.js';

const svc = (spec: unknown, status?: unknown) =>
  ({
    metadata: { name: 'web', namespace: 'shop' },
    spec,
    ...(status ? { status } : {}),
  }) as unknown as V1Service;
const slice = (extra: Record<string, unknown>) =>
  ({
    metadata: { name: 'web-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [{ addresses: ['10.0.0.1'] }],
    ...extra,
  }) as unknown as V1EndpointSlice;

describe('Services', () => {
  it.each<[string, unknown, unknown, string]>([
    ['spec as a string', 'ClusterIP', undefined, 'spec must be an object, not a string "ClusterIP"'],
    [
      'ports as an object',
      { clusterIP: '172.30.0.1', ports: { port: 80 } },
      undefined,
      'spec.ports must be a list, not an object',
    ],
    [
      'ports as a string',
      { clusterIP: '172.30.0.1', ports: '80' },
      undefined,
      'spec.ports must be a list, not a string "80"',
    ],
    [
      'a port as a number',
      { clusterIP: '172.30.0.1', ports: [80] },
      undefined,
      'spec.ports[0] must be an object, not the number 80',
    ],
    [
      'clusterIPs as a string',
      { clusterIPs: '172.30.0.1', ports: [{ port: 80 }] },
      undefined,
      'spec.clusterIPs must be a list, not a string "172.30.0.1"',
    ],
    [
      'clusterIP as a number',
      { clusterIP: 5, ports: [{ port: 80 }] },
      undefined,
      'spec.clusterIP must be a string, not the number 5',
    ],
    [
      'type as a list',
      { type: ['NodePort'], clusterIP: '172.30.0.1' },
      undefined,
      'spec.type ["NodePort"] is not ClusterIP',
    ],
    [
      'loadBalancerSourceRanges as a string',
      {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.1',
        ports: [{ port: 80 }],
        loadBalancerSourceRanges: '10.0.0.0/8',
      },
      undefined,
      'spec.loadBalancerSourceRanges must be a list, not a string "10.0.0.0/8"',
    ],
    [
      'ingress as an object',
      { type: 'LoadBalancer', clusterIP: '172.30.0.1', ports: [{ port: 80 }] },
      { loadBalancer: { ingress: { ip: '1.2.3.4' } } },
      'status.loadBalancer.ingress must be a list, not an object',
    ],
  ])('%s', (_what, spec, status, message) => {
    const err = (() => {
      try {
        parseService(svc(spec, status));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(InvalidServiceError);
    expect((err as Error).message).toContain('shop/web');
    expect((err as Error).message).toContain(message);
  });
});

describe('EndpointSlices', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['endpoints as a number', { endpoints: 5 }, 'endpoints must be a list, not the number 5'],
    ['ports as an object', { ports: { port: 8080 } }, 'ports must be a list, not an object'],
    [
      'addresses as a string',
      { endpoints: [{ addresses: '10.0.0.1' }] },
      'endpoints[0].addresses must be a list, not a string "10.0.0.1"',
    ],
    [
      'ready as a string',
      { endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: 'false' } }] },
      'endpoints[0].conditions.ready must be true or false, not a string "false"',
    ],
    [
      'conditions as a list',
      { endpoints: [{ addresses: ['10.0.0.1'], conditions: [] }] },
      'endpoints[0].conditions must be an object, not a list',
    ],
    [
      'forZones as an object',
      { endpoints: [{ addresses: ['10.0.0.1'], hints: { forZones: { name: 'a' } } }] },
      'endpoints[0].hints.forZones must be a list, not an object',
    ],
  ])('%s', (_what, extra, message) => {
    expect(() => parseEndpointSlice(slice(extra))).toThrow(InvalidEndpointSliceError);
    expect(() => parseEndpointSlice(slice(extra))).toThrow(message);
    expect(() => parseEndpointSlice(slice(extra))).toThrow('shop/web-1');
  });

  it('a wrong-typed object is skipped; the others are still programmed', () => {
    const state = new ProxyState({ nodeName: 'n1', nodeIPs: ['192.168.0.2'] });
    const bad = state.onServiceAdd(svc({ clusterIP: '172.30.0.9', ports: { port: 80 } }));
    expect(bad.error).toBeInstanceOf(InvalidServiceError);
    const good = {
      metadata: { name: 'ok', namespace: 'shop' },
      spec: { clusterIP: '172.30.0.10', ports: [{ port: 80 }] },
    };
    expect(state.onServiceAdd(good as V1Service).error).toBeNull();
    const snap = state.checkout().v4;
    expect([...snap.services.keys()]).toEqual(['shop/ok']);
  });
});

import { describe, expect, it } from 'vitest';
import {
  InvalidEndpointSliceError,
  InvalidServiceError,
  ProxyState,
  type ProxyStateError,
} from '../src/index.js';
import { service, slice } from './fixtures.js';

const svc1 = service('ns1', 'svc1', {
  clusterIP: '172.30.0.41',
  ports: [{ name: 'p80', port: 80, protocol: 'TCP' }],
});
const slice1 = slice('ns1', 'svc1-abc', 'svc1', {
  endpoints: [{ addresses: ['10.180.0.1'], nodeName: 'node-a' }, { addresses: ['10.180.0.2'] }],
});

function newState(errors: ProxyStateError[] = []) {
  return new ProxyState({
    nodeName: 'node-a',
    nodeIPs: ['192.168.0.2', 'fd00::2'],
    onError: (e) => errors.push(e),
  });
}

describe('ProxyState', () => {
  it('checks out a snapshot with services, endpoints and categorisation', () => {
    const state = newState();
    expect(state.onServiceAdd(svc1)).toEqual({ pending: true, error: null });
    expect(state.onEndpointSliceAdd(slice1).pending).toBe(true);
    const { v4, v6 } = state.checkout();
    expect(v4.generation).toBe(1);
    expect(v4.ipFamily).toBe(4);
    expect(v4.node).toEqual({ name: 'node-a', ips: ['192.168.0.2'], zone: '', labels: {} });
    expect(v6.node.ips).toEqual(['fd00::2']);
    expect([...v4.services.keys()]).toEqual(['ns1/svc1:p80']);
    expect(v4.endpoints.get('ns1/svc1:p80')!.map((e) => [e.endpoint, e.isLocal])).toEqual([
      ['10.180.0.1:80', true],
      ['10.180.0.2:80', false],
    ]);
    expect(v4.totalEndpoints).toBe(2);
    expect([...v4.changedServices]).toEqual(['ns1/svc1']);
    expect(v4.fullSyncRequired).toBe(true);
    expect(v4.categorize('ns1/svc1:p80').clusterEndpoints.length).toBe(2);
    expect(v4.categorize('ns1/nope').hasAnyEndpoints).toBe(false);
    expect(v6.services.size).toBe(0);
    expect(v6.changedServices.size).toBe(0);
  });

  it('reports nothing changed on a checkout without changes and reuses categorisations', () => {
    const state = newState();
    state.onServiceAdd(svc1);
    state.onEndpointSliceAdd(slice1);
    const first = state.checkout().v4;
    const c1 = first.categorize('ns1/svc1:p80');
    const second = state.checkout().v4;
    expect(second.generation).toBe(2);
    expect(second.changedServices.size).toBe(0);
    expect(second.fullSyncRequired).toBe(false);
    expect(second.categorize('ns1/svc1:p80')).toBe(c1);
    // The first snapshot is immutable: later changes do not leak into it.
    state.onEndpointSliceDelete(slice1);
    const third = state.checkout().v4;
    expect([...third.changedServices]).toEqual(['ns1/svc1']);
    expect(third.endpoints.get('ns1/svc1:p80')).toEqual([]);
    expect(first.endpoints.get('ns1/svc1:p80')!.length).toBe(2);
    expect(third.categorize('ns1/svc1:p80').hasAnyEndpoints).toBe(false);
  });

  it('a service changed and changed back is not reported', () => {
    const state = newState();
    state.onServiceAdd(svc1);
    state.checkout();
    const changed = service('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 81 }] });
    expect(state.onServiceUpdate(svc1, changed).pending).toBe(true);
    expect(state.changeCounts.servicesPending).toBe(1);
    // An informer's stale "old" object does not matter: the state knows what it applied.
    expect(state.onServiceUpdate(undefined, svc1).pending).toBe(false);
    expect(state.changeCounts).toEqual({
      servicesPending: 0,
      endpointsPending: 0,
      serviceChangesTotal: 3,
      endpointChangesTotal: 0,
    });
    expect(state.checkout().v4.changedServices.size).toBe(0);
  });

  it('a metadata-only service update is no change', () => {
    const state = newState();
    state.onServiceAdd(svc1);
    state.checkout();
    const relabelled = { ...svc1, metadata: { ...svc1.metadata, labels: { a: 'b' }, resourceVersion: '7' } };
    expect(state.onServiceUpdate(svc1, relabelled).pending).toBe(false);
  });

  it('deleting a service lists it as changed and drops its ports', () => {
    const state = newState();
    state.onServiceAdd(svc1);
    state.onServiceAdd(service('ns2', 'svc2', { clusterIP: '172.30.0.42', ports: [{ port: 80 }] }));
    state.checkout();
    state.onServiceDelete(svc1);
    const { v4 } = state.checkout();
    expect([...v4.services.keys()]).toEqual(['ns2/svc2']);
    expect([...v4.changedServices]).toEqual(['ns1/svc1']);
  });

  it('puts dual-stack services in both snapshots and tracks endpoint changes per family', () => {
    const state = newState();
    state.onServiceAdd(
      service('ns', 'dual', { clusterIPs: ['10.0.0.10', 'fd00::10'], ports: [{ name: 'http', port: 80 }] }),
    );
    state.onEndpointSliceAdd(
      slice('ns', 'dual-v4', 'dual', {
        ports: [{ name: 'http', port: 8080 }],
        endpoints: [{ addresses: ['10.1.0.1'] }],
      }),
    );
    state.onEndpointSliceAdd(
      slice('ns', 'dual-v6', 'dual', {
        addressType: 'IPv6',
        ports: [{ name: 'http', port: 8080 }],
        endpoints: [{ addresses: ['FD00:1::1'] }],
      }),
    );
    const first = state.checkout();
    expect(first.v4.services.get('ns/dual:http')!.clusterIP).toBe('10.0.0.10');
    expect(first.v6.services.get('ns/dual:http')!.clusterIP).toBe('fd00::10');
    expect(first.v4.endpoints.get('ns/dual:http')!.map((e) => e.endpoint)).toEqual(['10.1.0.1:8080']);
    expect(first.v6.endpoints.get('ns/dual:http')!.map((e) => e.endpoint)).toEqual(['[fd00:1::1]:8080']);
    state.onEndpointSliceUpdate(
      undefined,
      slice('ns', 'dual-v6', 'dual', {
        addressType: 'IPv6',
        ports: [{ name: 'http', port: 8080 }],
        endpoints: [],
      }),
    );
    const second = state.checkout();
    expect(second.v4.changedServices.size).toBe(0);
    expect([...second.v6.changedServices]).toEqual(['ns/dual']);
  });

  it('checks out one family at a time, leaving the other family pending (one runner per family)', () => {
    const state = newState();
    expect(state.hasPending(4)).toBe(true); // first checkout is owed (full sync)
    state.checkout();
    expect(state.hasPending(4)).toBe(false);
    expect(state.hasPending(6)).toBe(false);
    state.onServiceAdd(
      service('ns', 'dual', { clusterIPs: ['10.0.0.10', 'fd00::10'], ports: [{ name: 'http', port: 80 }] }),
    );
    state.onEndpointSliceAdd(
      slice('ns', 'dual-v6', 'dual', {
        addressType: 'IPv6',
        ports: [{ name: 'http', port: 8080 }],
        endpoints: [{ addresses: ['fd00:1::1'] }],
      }),
    );
    expect(state.hasPending(4)).toBe(true);
    expect(state.hasPending(6)).toBe(true);
    const v4Only = state.checkout([4]);
    expect([...v4Only.v4.changedServices]).toEqual(['ns/dual']);
    expect(v4Only.v4.services.get('ns/dual:http')!.clusterIP).toBe('10.0.0.10');
    // IPv6 was not checked out: still as of its last checkout, its change still pending.
    expect(v4Only.v6.services.size).toBe(0);
    expect(state.hasPending(4)).toBe(false);
    expect(state.hasPending(6)).toBe(true);
    const v6Only = state.checkout([6]);
    expect([...v6Only.v6.changedServices]).toEqual(['ns/dual']);
    expect(v6Only.v6.endpoints.get('ns/dual:http')!.map((e) => e.endpoint)).toEqual(['[fd00:1::1]:8080']);
    expect(v6Only.v4).toBe(v4Only.v4);
    expect(state.hasPending(6)).toBe(false);
  });

  it('returns an empty snapshot for a family never checked out', () => {
    const state = newState();
    state.onServiceAdd(svc1);
    const c = state.checkout([6]);
    expect(c.v4.services.size).toBe(0);
    expect(c.v4.ipFamily).toBe(4);
    expect(state.hasPending(4)).toBe(true);
    expect(state.checkout([4]).v4.services.size).toBe(1);
  });

  it('ignores headless and ExternalName services and FQDN slices', () => {
    const state = newState();
    state.onServiceAdd(service('ns', 'headless', { clusterIP: 'None', ports: [{ port: 80 }] }));
    state.onServiceAdd(service('ns', 'ext', { type: 'ExternalName', externalName: 'example.com' }));
    expect(
      state.onEndpointSliceAdd(
        slice('ns', 'f', 'ext', { addressType: 'FQDN', endpoints: [{ addresses: ['a.example.com'] }] }),
      ),
    ).toEqual({
      pending: false,
      error: null,
    });
    const { v4, v6 } = state.checkout();
    expect(v4.services.size + v6.services.size).toBe(0);
    expect(v4.changedServices.size).toBe(0);
  });

  it('matches endpoints to service ports by name and protocol', () => {
    const state = newState();
    state.onServiceAdd(
      service('ns', 'dns', { clusterIP: '10.0.0.53', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] }),
    );
    state.onEndpointSliceAdd(
      slice('ns', 'dns-1', 'dns', {
        ports: [{ name: 'dns', port: 5353, protocol: 'TCP' }],
        endpoints: [{ addresses: ['10.1.0.1'] }],
      }),
    );
    expect(state.checkout().v4.endpoints.get('ns/dns:dns')).toEqual([]);
  });

  it('skips an invalid service with a typed error, withdraws its last good version, keeps the others', () => {
    const errors: ProxyStateError[] = [];
    const state = newState(errors);
    state.onServiceAdd(svc1);
    state.onServiceAdd(service('ns2', 'svc2', { clusterIP: '172.30.0.42', ports: [{ port: 80 }] }));
    state.checkout();
    const bad = service('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 99999 }] });
    const result = state.onServiceUpdate(svc1, bad);
    expect(result.error).toBeInstanceOf(InvalidServiceError);
    expect(errors).toEqual([result.error]);
    const { v4 } = state.checkout();
    expect([...v4.services.keys()]).toEqual(['ns2/svc2']);
    expect([...v4.changedServices]).toEqual(['ns1/svc1']);
    // Fixing it brings it back.
    state.onServiceUpdate(bad, svc1);
    expect([...state.checkout().v4.services.keys()]).toEqual(['ns1/svc1:p80', 'ns2/svc2']);
  });

  it('rejects a slice without the service-name label and keeps the other slices', () => {
    const errors: ProxyStateError[] = [];
    const state = newState(errors);
    state.onServiceAdd(svc1);
    state.onEndpointSliceAdd(slice1);
    const orphan = slice('ns1', 'orphan', undefined, { endpoints: [{ addresses: ['10.180.0.9'] }] });
    const result = state.onEndpointSliceAdd(orphan);
    expect(result.error).toBeInstanceOf(InvalidEndpointSliceError);
    expect(result.error!.message).toMatch(
      /EndpointSlice ns1\/orphan skipped: no kubernetes.io\/service-name label/,
    );
    expect(errors.length).toBe(1);
    expect(state.checkout().v4.endpoints.get('ns1/svc1:p80')!.length).toBe(2);
    // A slice that turns invalid is withdrawn.
    state.onEndpointSliceUpdate(slice1, { ...slice1, endpoints: [{ addresses: ['bogus'] }] });
    const { v4 } = state.checkout();
    expect(v4.endpoints.get('ns1/svc1:p80')).toEqual([]);
    expect(errors.length).toBe(2);
  });

  it('moves a slice whose service-name label changes', () => {
    const state = newState();
    state.onServiceAdd(svc1);
    state.onServiceAdd(
      service('ns1', 'svc2', { clusterIP: '172.30.0.42', ports: [{ name: 'p80', port: 80 }] }),
    );
    state.onEndpointSliceAdd(slice1);
    state.checkout();
    const moved = {
      ...slice1,
      metadata: { ...slice1.metadata, labels: { 'kubernetes.io/service-name': 'svc2' } },
    };
    state.onEndpointSliceUpdate(slice1, moved);
    const { v4 } = state.checkout();
    expect([...v4.changedServices].sort()).toEqual(['ns1/svc1', 'ns1/svc2']);
    expect(v4.endpoints.get('ns1/svc1:p80')).toEqual([]);
    expect(v4.endpoints.get('ns1/svc2:p80')!.length).toBe(2);
  });

  it('a node zone change requires a full sync and feeds topology; other nodes are ignored', () => {
    const state = new ProxyState({ nodeName: 'node-a' });
    state.onServiceAdd(svc1);
    state.onEndpointSliceAdd(
      slice('ns1', 's', 'svc1', {
        endpoints: [
          { addresses: ['10.180.0.1'], hints: { forZones: [{ name: 'zone-a' }] } },
          { addresses: ['10.180.0.2'], hints: { forZones: [{ name: 'zone-b' }] } },
        ],
      }),
    );
    const first = state.checkout().v4;
    expect(first.categorize('ns1/svc1:p80').clusterEndpoints.length).toBe(2);
    state.onNodeUpdate({ metadata: { name: 'node-b', labels: { 'topology.kubernetes.io/zone': 'zone-b' } } });
    expect(state.checkout().v4.fullSyncRequired).toBe(false);
    state.onNodeUpdate({
      metadata: { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'zone-a' } },
      status: {
        addresses: [
          { type: 'Hostname', address: 'node-a' },
          { type: 'ExternalIP', address: '203.0.113.7' },
          { type: 'InternalIP', address: '192.168.0.2' },
        ],
      },
    });
    const { v4 } = state.checkout();
    expect(v4.fullSyncRequired).toBe(true);
    expect(v4.changedServices.size).toBe(0);
    expect(v4.node).toMatchObject({ zone: 'zone-a', ips: ['192.168.0.2', '203.0.113.7'] });
    expect(v4.categorize('ns1/svc1:p80').clusterEndpoints.map((e) => e.endpoint)).toEqual(['10.180.0.1:80']);
    // A label change that is not the zone does not force a full sync.
    state.onNodeUpdate({
      metadata: { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'zone-a', other: 'x' } },
      status: {
        addresses: [
          { type: 'InternalIP', address: '192.168.0.2' },
          { type: 'ExternalIP', address: '203.0.113.7' },
        ],
      },
    });
    expect(state.checkout().v4.fullSyncRequired).toBe(false);
  });

  it('counts pending endpoint changes and collects last-change trigger times', () => {
    const state = newState();
    state.onServiceAdd(svc1);
    state.onEndpointSliceAdd({
      ...slice1,
      metadata: {
        ...slice1.metadata,
        annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2025-01-01T00:00:00Z' },
      },
    });
    state.onEndpointSliceAdd(slice('ns1', 'other', 'svc9', { endpoints: [{ addresses: ['10.0.0.9'] }] }));
    expect(state.changeCounts.endpointsPending).toBe(2);
    expect(state.changeCounts.endpointChangesTotal).toBe(2);
    const out = state.checkout();
    expect([...out.lastChangeTriggerTimes]).toEqual([['ns1/svc1', ['2025-01-01T00:00:00Z']]]);
    expect(state.changeCounts.endpointsPending).toBe(0);
  });
});

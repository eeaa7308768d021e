// Builders for plain Kubernetes JSON objects used across the tests.
import type { V1Endpoint, V1EndpointSlice, V1Service, V1ServiceSpec } from '@kubernetes/client-node';
import type { Endpoint } from '../src/index.js';

export function service(
  namespace: string,
  name: string,
  spec: V1ServiceSpec,
  status?: V1Service['status'],
): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec,
    ...(status === undefined ? {} : { status }),
  };
}

export function slice(
  namespace: string,
  name: string,
  serviceName: string | undefined,
  init: {
    addressType?: string;
    ports?: V1EndpointSlice['ports'];
    endpoints?: V1Endpoint[];
    annotations?: Record<string, string>;
  } = {},
): V1EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      namespace,
      name,
      ...(serviceName === undefined ? {} : { labels: { 'kubernetes.io/service-name': serviceName } }),
      ...(init.annotations === undefined ? {} : { annotations: init.annotations }),
    },
    addressType: init.addressType ?? 'IPv4',
    ports: init.ports ?? [{ name: 'p80', port: 80, protocol: 'TCP' }],
    endpoints: init.endpoints ?? [],
  };
}

/** An endpoint for categorisation tests. */
export function ep(
  endpoint: string,
  init: Partial<Omit<Endpoint, 'endpoint' | 'ip' | 'port'>> = {},
): Endpoint {
  const idx = endpoint.lastIndexOf(':');
  const ip = endpoint.slice(0, idx).replace(/^\[|\]$/g, '');
  return {
    ip,
    port: Number(endpoint.slice(idx + 1)),
    endpoint,
    ready: init.ready ?? true,
    serving: init.serving ?? init.ready ?? true,
    terminating: init.terminating ?? false,
    isLocal: init.isLocal ?? false,
    nodeName: init.nodeName ?? null,
    zone: init.zone ?? null,
    zoneHints: init.zoneHints ?? [],
    nodeHints: init.nodeHints ?? [],
  };
}

/** Object builders and polling helpers shared by the proxier tests. */
import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';

/** A Service in `ns` with the given spec (ports default to one TCP port `p80`). */
export function service(name: string, spec: Record<string, unknown>, ns = 'ns1'): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: ns, name },
    spec: { ports: [{ name: 'p80', port: 80, protocol: 'TCP' }], ...spec },
  } as V1Service;
}

/** One endpoint of {@link endpointSlice}. */
export interface EndpointSpec {
  readonly ip: string;
  readonly ready?: boolean;
  readonly nodeName?: string;
}

/** An IPv4 EndpointSlice for service `svc` with one port. */
export function endpointSlice(
  svc: string,
  endpoints: readonly EndpointSpec[],
  options: { name?: string; port?: number; portName?: string; protocol?: string; ns?: string } = {},
): V1EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      namespace: options.ns ?? 'ns1',
      name: options.name ?? `${svc}-abc`,
      labels: { 'kubernetes.io/service-name': svc },
    },
    addressType: 'IPv4',
    ports: [
      { name: options.portName ?? 'p80', port: options.port ?? 8080, protocol: options.protocol ?? 'TCP' },
    ],
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? true },
      ...(e.nodeName ? { nodeName: e.nodeName } : {}),
    })),
  } as V1EndpointSlice;
}

/** A Node with an InternalIP and a zone label. */
export function node(name: string, ip: string, zone = 'zone-a'): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'topology.kubernetes.io/zone': zone } },
    status: { addresses: [{ type: 'InternalIP', address: ip }] },
  } as V1Node;
}

/** Polls `check` (which throws or returns false while not there yet) until it passes. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 8000, stepMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== false) return v;
      last = new Error('condition returned false');
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw last;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

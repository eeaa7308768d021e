/**
 * Builders for tests of renderers and other consumers of proxy snapshots: Service and
 * EndpointSlice manifests from a few fields, and the per-family snapshots of a small cluster
 * in one call. They are what this project's iptables, nftables and IPVS tests use, and what a
 * custom renderer's tests need too.
 *
 * @example
 * ```ts
 * import { testCluster, testEndpointSlice, testService } from '@nodeagent/proxy-state/testing';
 *
 * const { v4 } = testCluster(
 *   {
 *     services: [testService('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] })],
 *     slices: [testEndpointSlice('ns1', 'svc1', [{ name: 'p80', port: 80 }], [{ ip: '10.180.0.1', node: 'node-a' }])],
 *   },
 *   { nodeName: 'node-a', nodeIPs: ['192.168.0.2'] },
 * );
 * v4.categorize('ns1/svc1:p80').clusterEndpoints.map((e) => e.endpoint); // ['10.180.0.1:80']
 * ```
 *
 * @packageDocumentation
 */

import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { definedFields } from '@nodeagent/core';
import { type BuiltProxySnapshots, buildProxySnapshots } from './build-snapshots.js';

/** A Service manifest with `metadata.namespace`/`name`, the given spec and, if given, status. */
export function testService(
  namespace: string,
  name: string,
  spec: NonNullable<V1Service['spec']>,
  status?: V1Service['status'],
): V1Service {
  return { metadata: { namespace, name }, spec, ...(status ? { status } : {}) };
}

/** One endpoint of {@link testEndpointSlice}: an address and what the API would say about it. */
export interface TestEndpoint {
  /** Its (single) address. */
  readonly ip: string;
  /** `nodeName`. */
  readonly node?: string;
  /** `conditions.ready` (left out when undefined, which the API reads as ready). */
  readonly ready?: boolean;
  /** `conditions.serving`. */
  readonly serving?: boolean;
  /** `conditions.terminating`. */
  readonly terminating?: boolean;
  /** `zone`. */
  readonly zone?: string;
  /** `hints.forZones` names (topology-aware routing). */
  readonly forZones?: readonly string[];
  /** `hints.forNodes` names. */
  readonly forNodes?: readonly string[];
}

/** A port of {@link testEndpointSlice}. */
export interface TestSlicePort {
  /** Port name (must match the Service port's name). */
  readonly name?: string;
  /** Port number. */
  readonly port: number;
  /** @default 'TCP' */
  readonly protocol?: string;
}

/**
 * An EndpointSlice manifest of Service `serviceName`, labelled with
 * `kubernetes.io/service-name`.
 * @param sliceName defaults to `<serviceName>-1`.
 * @param addressType `IPv4` (default) or `IPv6`.
 */
export function testEndpointSlice(
  namespace: string,
  serviceName: string,
  ports: readonly TestSlicePort[],
  endpoints: readonly TestEndpoint[],
  sliceName = `${serviceName}-1`,
  addressType = 'IPv4',
): V1EndpointSlice {
  return {
    metadata: { namespace, name: sliceName, labels: { 'kubernetes.io/service-name': serviceName } },
    addressType,
    ports: ports.map((p) => ({
      ...definedFields({ name: p.name }),
      port: p.port,
      protocol: p.protocol ?? 'TCP',
    })),
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      ...(e.node ? { nodeName: e.node } : {}),
      ...(e.zone ? { zone: e.zone } : {}),
      conditions: {
        ...definedFields({ ready: e.ready }),
        ...definedFields({ serving: e.serving }),
        ...definedFields({ terminating: e.terminating }),
      },
      ...(e.forZones || e.forNodes
        ? {
            hints: {
              ...(e.forZones ? { forZones: e.forZones.map((name) => ({ name })) } : {}),
              ...(e.forNodes ? { forNodes: e.forNodes.map((name) => ({ name })) } : {}),
            },
          }
        : {}),
    })),
  };
}

/** The objects of a small test cluster. */
export interface TestCluster {
  /** Services. */
  readonly services: readonly V1Service[];
  /** EndpointSlices. */
  readonly slices: readonly V1EndpointSlice[];
  /** Labels of this node (e.g. `topology.kubernetes.io/zone`); no Node object when undefined. */
  readonly nodeLabels?: Readonly<Record<string, string>>;
}

/** The node a {@link testCluster} is seen from. */
export interface TestNode {
  /** The node's name. */
  readonly nodeName: string;
  /** The node's addresses (either family). */
  readonly nodeIPs: readonly string[];
}

/** Builds the per-family snapshots (and per-object errors) of `cluster` as seen from `node`. */
export function testCluster(cluster: TestCluster, node: TestNode): BuiltProxySnapshots {
  return buildProxySnapshots({
    nodeName: node.nodeName,
    nodeIPs: node.nodeIPs,
    services: cluster.services,
    endpointSlices: cluster.slices,
    ...(cluster.nodeLabels
      ? { node: { metadata: { name: node.nodeName, labels: { ...cluster.nodeLabels } } } }
      : {}),
  });
}

/**
 * The Services the iptables and IPVS packet-flow tests share (kube-proxy's test conventions:
 * pod CIDR 10.0.0.0/8, node 192.168.0.2, external client 203.0.113.2, LB source range
 * 203.0.113.0/25): `ns1/cip` (ClusterIP) to `ns8` (LoadBalancer with external IPs), one
 * per traffic-policy case; each test adds its own after them.
 */
export function packetFlowServices(): V1Service[] {
  return [
    testService('ns1', 'cip', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }),
    testService('ns2', 'np', {
      type: 'NodePort',
      clusterIP: '172.30.0.42',
      ports: [{ name: 'p80', port: 80, nodePort: 3001 }],
    }),
    testService('ns3', 'np-local', {
      type: 'NodePort',
      clusterIP: '172.30.0.43',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'p80', port: 80, nodePort: 3003 }],
    }),
    testService('ns4', 'np-local-remote', {
      type: 'NodePort',
      clusterIP: '172.30.0.44',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'p80', port: 80, nodePort: 3004 }],
    }),
    testService('ns5', 'itp-local', {
      clusterIP: '172.30.0.45',
      internalTrafficPolicy: 'Local',
      ports: [{ name: 'p80', port: 80 }],
    }),
    testService('ns6', 'itp-remote', {
      clusterIP: '172.30.0.46',
      internalTrafficPolicy: 'Local',
      ports: [{ name: 'p80', port: 80 }],
    }),
    testService(
      'ns7',
      'lb',
      {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.47',
        loadBalancerSourceRanges: ['203.0.113.0/25'],
        externalIPs: ['192.168.99.11'],
        ports: [{ name: 'p80', port: 80, nodePort: 3007 }],
      },
      { loadBalancer: { ingress: [{ ip: '1.2.3.4' }, { ip: '5.6.7.8', ipMode: 'Proxy' }] } },
    ),
    testService(
      'ns8',
      'empty',
      {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.48',
        externalIPs: ['192.168.99.12'],
        ports: [{ name: 'p80', port: 80, nodePort: 3008 }],
      },
      { loadBalancer: { ingress: [{ ip: '9.10.11.12' }] } },
    ),
  ];
}

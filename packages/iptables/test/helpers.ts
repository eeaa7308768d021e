/** Builders for Services / EndpointSlices and a one-call render, shared by the tests. */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { buildProxySnapshots } from '@nodeagent/proxy-state';
import type { IptablesRenderOptions } from '../src/index.js';
import { renderIptables, renderIptablesSnapshot } from '../src/index.js';

export const NODE = 'test-node';
export const NODE_IP = '192.168.0.2';
export const POD_CIDR = '10.0.0.0/8';

/** kube-proxy's unit-test defaults (pod CIDR detector, localhost node ports, no nfacct). */
export const TEST_OPTIONS: IptablesRenderOptions = {
  localDetector: { mode: 'ClusterCIDR', cidr: POD_CIDR },
};

type Spec = NonNullable<V1Service['spec']>;

export function svc(ns: string, name: string, spec: Spec, status?: V1Service['status']): V1Service {
  return { metadata: { namespace: ns, name }, spec, ...(status ? { status } : {}) };
}

export interface Ep {
  ip: string;
  node?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  zone?: string;
  forZones?: string[];
  forNodes?: string[];
}

export function slice(
  ns: string,
  svcName: string,
  ports: { name?: string; port: number; protocol?: string }[],
  eps: Ep[],
  sliceName = `${svcName}-1`,
  addressType = 'IPv4',
): V1EndpointSlice {
  return {
    metadata: { namespace: ns, name: sliceName, labels: { 'kubernetes.io/service-name': svcName } },
    addressType,
    ports: ports.map((p) => ({
      ...(p.name !== undefined ? { name: p.name } : {}),
      port: p.port,
      protocol: p.protocol ?? 'TCP',
    })),
    endpoints: eps.map((e) => ({
      addresses: [e.ip],
      ...(e.node ? { nodeName: e.node } : {}),
      ...(e.zone ? { zone: e.zone } : {}),
      conditions: {
        ...(e.ready !== undefined ? { ready: e.ready } : {}),
        ...(e.serving !== undefined ? { serving: e.serving } : {}),
        ...(e.terminating !== undefined ? { terminating: e.terminating } : {}),
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

export interface Cluster {
  services: V1Service[];
  slices: V1EndpointSlice[];
  nodeLabels?: Record<string, string>;
}

export function snapshot(c: Cluster, family: 4 | 6 = 4) {
  const built = buildProxySnapshots({
    nodeName: NODE,
    nodeIPs: family === 4 ? [NODE_IP] : ['fd00::2'],
    services: c.services,
    endpointSlices: c.slices,
    ...(c.nodeLabels ? { node: { metadata: { name: NODE, labels: c.nodeLabels } } } : {}),
  });
  return { snap: family === 4 ? built.v4 : built.v6, errors: built.errors };
}

export function render(c: Cluster, options: IptablesRenderOptions = TEST_OPTIONS): string {
  return renderIptables(snapshot(c).snap, options);
}

export function ruleset(c: Cluster, options: IptablesRenderOptions = TEST_OPTIONS) {
  return renderIptablesSnapshot(snapshot(c).snap, options);
}

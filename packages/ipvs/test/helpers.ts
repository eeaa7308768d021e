/** Builders for Services / EndpointSlices, snapshots and plans, shared by the tests. */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { buildProxySnapshots, type ProxySnapshot } from '@nodeagent/proxy-state';
import {
  type IpvsPlan,
  type IpvsPlanOptions,
  planIpvs,
  renderIpsetRestore,
  renderIpvsadmRestore,
  renderResidualIptables,
} from '../src/index.js';

export const NODE = 'test-node';
export const NODE_IP = '192.168.0.2';
export const NODE_IP6 = 'fd00::2';
export const POD_CIDR = '10.0.0.0/8';

/** kube-proxy's unit-test conventions: pod-CIDR local detector. */
export const TEST_OPTIONS: IpvsPlanOptions = { localDetector: { mode: 'ClusterCIDR', cidr: POD_CIDR } };

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
      conditions: {
        ...(e.ready !== undefined ? { ready: e.ready } : {}),
        ...(e.serving !== undefined ? { serving: e.serving } : {}),
        ...(e.terminating !== undefined ? { terminating: e.terminating } : {}),
      },
    })),
  };
}

export interface Cluster {
  services: V1Service[];
  slices: V1EndpointSlice[];
}

export function snapshot(c: Cluster, family: 4 | 6 = 4): ProxySnapshot {
  const built = buildProxySnapshots({
    nodeName: NODE,
    nodeIPs: [NODE_IP, NODE_IP6],
    services: c.services,
    endpointSlices: c.slices,
  });
  if (built.errors.length > 0) throw new Error(built.errors.map((e) => e.message).join('; '));
  return family === 4 ? built.v4 : built.v6;
}

export function plan(c: Cluster, options: IpvsPlanOptions = TEST_OPTIONS, family: 4 | 6 = 4): IpvsPlan {
  return planIpvs(snapshot(c, family), options);
}

/** Everything a plan renders, in one text (the golden-file format). */
export function renderAll(p: IpvsPlan): string {
  return [
    '# ipvsadm-restore',
    renderIpvsadmRestore(p).trimEnd(),
    '# kube-ipvs0 addresses',
    ...p.boundAddresses,
    '# ipset restore',
    renderIpsetRestore(p.ipsets).trimEnd(),
    '# iptables-restore',
    renderResidualIptables(p.iptables).trimEnd(),
    '',
  ].join('\n');
}

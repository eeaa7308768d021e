/** Builders for Services / EndpointSlices, snapshots and plans, shared by the tests. */
import type { ProxySnapshot } from '@nodeagent/proxy-state';
import { type TestCluster, testCluster } from '@nodeagent/proxy-state/testing';
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

export type { TestEndpoint as Ep } from '@nodeagent/proxy-state/testing';
export { testEndpointSlice as slice, testService as svc } from '@nodeagent/proxy-state/testing';

/** A test cluster: Services, EndpointSlices and this node's labels. */
export type Cluster = TestCluster;

export function snapshot(c: Cluster, family: 4 | 6 = 4): ProxySnapshot {
  const built = testCluster(c, { nodeName: NODE, nodeIPs: [NODE_IP, NODE_IP6] });
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

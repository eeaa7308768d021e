/** Builders for Services / EndpointSlices and one-call snapshots, shared by the tests. */
import type { ProxySnapshot } from '@nodeagent/proxy-state';
import { type TestCluster, testCluster } from '@nodeagent/proxy-state/testing';
import type { NftRenderOptions } from '../src/index.js';

export const NODE = 'test-node';
export const NODE_IP = '192.168.0.2';
export const NODE_IP_ALT = '192.168.1.2';
export const EXTERNAL_LOCAL_IP = '192.168.99.11';
export const NODE_IPS = [NODE_IP, NODE_IP_ALT, EXTERNAL_LOCAL_IP];
export const NODE_IP6 = '2001:db8::1';
export const POD_CIDR = '10.0.0.0/8';
export const POD_CIDR6 = 'fd00:10::/64';

/** kube-proxy's unit-test defaults (pod CIDR detector). */
export const TEST_OPTIONS: NftRenderOptions = {
  localDetector: { mode: 'ClusterCIDR', cidr: POD_CIDR },
  serviceCIDRs: ['172.30.0.0/16'],
};
export const TEST_OPTIONS6: NftRenderOptions = {
  family: 'ip6',
  localDetector: { mode: 'ClusterCIDR', cidr: POD_CIDR6 },
  serviceCIDRs: ['fd00:10:96::/112'],
};

export type { TestEndpoint as Ep } from '@nodeagent/proxy-state/testing';
export { testEndpointSlice as slice, testService as svc } from '@nodeagent/proxy-state/testing';

/** A test cluster: Services, EndpointSlices and this node's labels. */
export type Cluster = TestCluster;

export function snapshot(c: Cluster, family: 4 | 6 = 4): { snap: ProxySnapshot; errors: readonly Error[] } {
  const built = testCluster(c, { nodeName: NODE, nodeIPs: family === 4 ? [NODE_IP] : [NODE_IP6] });
  return { snap: family === 4 ? built.v4 : built.v6, errors: built.errors };
}

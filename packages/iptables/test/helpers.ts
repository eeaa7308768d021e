/** Builders for Services / EndpointSlices and a one-call render, shared by the tests. */
import { type TestCluster, testCluster } from '@nodeagent/proxy-state/testing';
import type { IptablesRenderOptions } from '../src/index.js';
import { renderIptables, renderIptablesSnapshot } from '../src/index.js';

export const NODE = 'test-node';
export const NODE_IP = '192.168.0.2';
export const POD_CIDR = '10.0.0.0/8';

/** kube-proxy's unit-test defaults (pod CIDR detector, localhost node ports, no nfacct). */
export const TEST_OPTIONS: IptablesRenderOptions = {
  localDetector: { mode: 'ClusterCIDR', cidr: POD_CIDR },
};

export type { TestEndpoint as Ep } from '@nodeagent/proxy-state/testing';
export { testEndpointSlice as slice, testService as svc } from '@nodeagent/proxy-state/testing';

/** A test cluster: Services, EndpointSlices and this node's labels. */
export type Cluster = TestCluster;

export function snapshot(c: Cluster, family: 4 | 6 = 4) {
  const built = testCluster(c, { nodeName: NODE, nodeIPs: family === 4 ? [NODE_IP] : ['fd00::2'] });
  return { snap: family === 4 ? built.v4 : built.v6, errors: built.errors };
}

export function render(c: Cluster, options: IptablesRenderOptions = TEST_OPTIONS): string {
  return renderIptables(snapshot(c).snap, options);
}

export function ruleset(c: Cluster, options: IptablesRenderOptions = TEST_OPTIONS) {
  return renderIptablesSnapshot(snapshot(c).snap, options);
}

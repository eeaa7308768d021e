/**
 * The network namespaces of a proxy backend's real-kernel tests: a node that routes between
 * two pods and an external client, each behind its own veth pair, all inside namespaces the
 * test creates (no route to the host's network).
 */
import { createNetns, createVethPair, type Netns } from './netns.js';

/** The pod CIDR of the topology (both pods' /24s). */
export const PROXY_POD_CIDR = '10.100.0.0/16';
/** The node's address on the external client's link. */
export const PROXY_NODE_IP = '192.168.50.1';

/** The namespaces of {@link createProxyNetns}. */
export interface ProxyNetns {
  /** The node: forwards, and routes the service CIDR 172.30.0.0/16 towards pod1. */
  readonly node: Netns;
  /** A pod at 10.100.1.2 (node side 10.100.1.1). */
  readonly pod1: Netns;
  /** A pod at 10.100.2.2 (node side 10.100.2.1). */
  readonly pod2: Netns;
  /** An external client at 192.168.50.2, reaching the node at {@link PROXY_NODE_IP}. */
  readonly ext: Netns;
}

/**
 * Creates the node, two pods and an external client (names prefixed with `prefix`), links
 * them, and sets the node's forwarding, ICMP rate limit (off, so that rejects answer at once:
 * a fresh namespace rate-limits ICMP errors per peer) and the route of the service CIDR
 * (cluster IPs need one before DNAT can happen; any next hop inside the test). On failure
 * the namespaces created so far are stopped.
 */
export async function createProxyNetns(prefix: string): Promise<ProxyNetns> {
  const created: Netns[] = [];
  const make = async (): Promise<Netns> => {
    const ns = await createNetns(prefix);
    created.push(ns);
    return ns;
  };
  try {
    const node = await make();
    const pod1 = await make();
    const pod2 = await make();
    const ext = await make();
    await createVethPair(node, pod1, { addressA: '10.100.1.1/24', addressB: '10.100.1.2/24' });
    await createVethPair(node, pod2, { addressA: '10.100.2.1/24', addressB: '10.100.2.2/24' });
    await createVethPair(node, ext, { addressA: `${PROXY_NODE_IP}/24`, addressB: '192.168.50.2/24' });
    await pod1.execChecked(['ip', 'route', 'add', 'default', 'via', '10.100.1.1']);
    await pod2.execChecked(['ip', 'route', 'add', 'default', 'via', '10.100.2.1']);
    await ext.execChecked(['ip', 'route', 'add', 'default', 'via', PROXY_NODE_IP]);
    await node.execChecked(['sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
    await node.execChecked(['sysctl', '-q', '-w', 'net.ipv4.icmp_ratelimit=0']);
    await node.execChecked(['ip', 'route', 'add', '172.30.0.0/16', 'via', '10.100.1.2']);
    return { node, pod1, pod2, ext };
  } catch (err) {
    await Promise.all(created.map((ns) => ns.stop()));
    throw err;
  }
}

/** The node name of the topology's node in the proxy's state (pod1's endpoints are on it). */
export const PROXY_NODE_NAME = 'test-node';

/** An endpoint of {@link proxyKernelServices}: pod1 on this node, pod2 on another. */
export interface ProxyKernelEndpoint {
  ip: string;
  node: string;
}

/** One Service of {@link proxyKernelServices}; its endpoints serve port `http` on 8080. */
export interface ProxyKernelService {
  name: string;
  spec: {
    type?: 'NodePort';
    clusterIP: string;
    externalTrafficPolicy?: 'Local';
    sessionAffinity?: 'ClientIP';
    ports: { name: string; port: number; targetPort?: number; nodePort?: number }[];
  };
  /** No EndpointSlice when empty. */
  endpoints: ProxyKernelEndpoint[];
}

/**
 * The Services of the backends' real-kernel tests, in namespace `ns`: `web` (ClusterIP
 * 172.30.0.10:80 → 8080 on both pods), `np-local` (NodePort 30080, externalTrafficPolicy
 * Local), `sticky` (ClientIP affinity), `none` (no endpoints) and `np` (NodePort 30081, pod2
 * only).
 */
export function proxyKernelServices(): ProxyKernelService[] {
  const both = (): ProxyKernelEndpoint[] => [
    { ip: '10.100.1.2', node: PROXY_NODE_NAME },
    { ip: '10.100.2.2', node: 'other' },
  ];
  return [
    {
      name: 'web',
      spec: { clusterIP: '172.30.0.10', ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      endpoints: both(),
    },
    {
      name: 'np-local',
      spec: {
        type: 'NodePort',
        clusterIP: '172.30.0.11',
        externalTrafficPolicy: 'Local',
        ports: [{ name: 'http', port: 80, nodePort: 30080 }],
      },
      endpoints: both(),
    },
    {
      name: 'sticky',
      spec: { clusterIP: '172.30.0.12', sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 80 }] },
      endpoints: both(),
    },
    { name: 'none', spec: { clusterIP: '172.30.0.13', ports: [{ name: 'http', port: 80 }] }, endpoints: [] },
    {
      name: 'np',
      spec: {
        type: 'NodePort',
        clusterIP: '172.30.0.14',
        ports: [{ name: 'http', port: 80, nodePort: 30081 }],
      },
      endpoints: [{ ip: '10.100.2.2', node: 'other' }],
    },
  ];
}

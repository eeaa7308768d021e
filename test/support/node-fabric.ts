/**
 * Several node sandboxes joined into one cluster network on one machine: a "fabric" network
 * namespace holding a Linux bridge, one veth per node (`eth0` in the node's namespace, its
 * peer a bridge port in the fabric), an address per node on the inter-node link, IP forwarding
 * on in every node namespace, and in each node a route to every other node's pod CIDR via that
 * node — what a flat L2 network plus the routes a CNI's host-gw mode (or a cloud's route
 * table) gives a real cluster. No interface or route ever touches the host's own namespace.
 *
 * @example
 * ```ts
 * const a = await startNodeSandbox({ name: 'demo', podCidr: '10.244.1.0/24' });
 * const b = await startNodeSandbox({ name: 'demo', podCidr: '10.244.2.0/24' });
 * const fabric = await joinNodeSandboxes([a, b], { name: 'demo' });
 * // a pod on a reaches a pod on b; fabric.nodeIps[0] is a's address on the link
 * await fabric.stop();
 * await Promise.all([a.stop(), b.stop()]);
 * ```
 * @module
 */
import { CommandFailedError, requireBinary, runCommand } from './command.js';
import { createNetns, createVethPair, type Netns, NetnsError } from './netns.js';

/** The part of a node sandbox {@link joinNodeSandboxes} needs. */
export interface FabricNode {
  /** The node's network namespace (made by `createNetns`, as a node sandbox's is). */
  readonly netns: Netns;
  /** The node's pod subnet (IPv4 CIDR); routed via this node from every other node. */
  readonly podCidr: string;
}

/** Options for {@link joinNodeSandboxes}. */
export interface NodeFabricOptions {
  /** Prefix of the fabric namespace's name (letters, digits, `_`, `.`). @default 'fabric' */
  readonly name?: string;
  /**
   * The inter-node link's /24 as its first three octets: node `i` (0-based) gets
   * `<linkPrefix>.<11 + i>/24` on its `eth0`.
   * @default '172.30.0'
   */
  readonly linkPrefix?: string;
}

/** Nodes joined by {@link joinNodeSandboxes}. */
export interface NodeFabric {
  /** The namespace holding the bridge `br0` and the nodes' veth peers. */
  readonly netns: Netns;
  /** Each node's address on the link (no prefix length), in the order the nodes were given. */
  readonly nodeIps: readonly string[];
  /** The name of the inter-node interface in every node namespace: `eth0`. */
  readonly nodeInterface: string;
  /** Deletes the fabric namespace (its bridge and every veth pair with it). Idempotent. */
  stop(): Promise<void>;
}

/** Name of each node's interface on the inter-node link. */
export const NODE_LINK_INTERFACE = 'eth0';

const CIDR_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

/**
 * Joins the nodes' namespaces by a bridge in a new fabric namespace and routes each node's pod
 * CIDR via that node. The nodes' pod CIDRs must be distinct.
 * @throws NetnsError for fewer than two nodes, repeated pod CIDRs or a bad link prefix;
 *   CommandFailedError when an `ip`/`sysctl` step fails (the fabric is removed again).
 */
export async function joinNodeSandboxes(
  nodes: readonly FabricNode[],
  opts: NodeFabricOptions = {},
): Promise<NodeFabric> {
  if (nodes.length < 2)
    throw new NetnsError(`joinNodeSandboxes needs at least two nodes, got ${nodes.length}`);
  if (nodes.length > 200)
    throw new NetnsError(`joinNodeSandboxes joins at most 200 nodes, got ${nodes.length}`);
  const cidrs = new Set<string>();
  for (const n of nodes) {
    if (!CIDR_RE.test(n.podCidr))
      throw new NetnsError(`pod CIDR ${JSON.stringify(n.podCidr)} is not an IPv4 CIDR`);
    if (cidrs.has(n.podCidr)) throw new NetnsError(`pod CIDR ${n.podCidr} is given to two nodes`);
    cidrs.add(n.podCidr);
  }
  const linkPrefix = opts.linkPrefix ?? '172.30.0';
  if (!/^\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(linkPrefix) || linkPrefix.split('.').some((o) => Number(o) > 255)) {
    throw new NetnsError(`linkPrefix ${JSON.stringify(linkPrefix)} is not three IPv4 octets`);
  }
  const ip = requireBinary('ip');
  const run = async (argv: string[]) => {
    const r = await runCommand(argv);
    if (r.code !== 0) throw new CommandFailedError(argv, r);
  };
  const nodeIps = nodes.map((_, i) => `${linkPrefix}.${11 + i}`);
  const fabric = await createNetns(opts.name ?? 'fabric');
  try {
    await run([ip, '-n', fabric.name, 'link', 'add', 'br0', 'type', 'bridge']);
    await run([ip, '-n', fabric.name, 'link', 'set', 'br0', 'up']);
    for (const [i, node] of nodes.entries()) {
      const port = `n${i}`;
      await createVethPair(node.netns, fabric, {
        nameA: NODE_LINK_INTERFACE,
        nameB: port,
        addressA: `${nodeIps[i]}/24`,
      });
      await run([ip, '-n', fabric.name, 'link', 'set', port, 'master', 'br0']);
      // A node forwards between its pods' bridge and the link (the CNI bridge plugin's
      // isGateway does this too, but only once the first pod is set up).
      await node.netns.execChecked(['sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
    }
    for (const [i, node] of nodes.entries()) {
      for (const [j, other] of nodes.entries()) {
        if (i === j) continue;
        await run([ip, '-n', node.netns.name, 'route', 'add', other.podCidr, 'via', nodeIps[j] as string]);
      }
    }
  } catch (e) {
    await fabric.stop().catch(() => {});
    throw e;
  }
  return { netns: fabric, nodeIps, nodeInterface: NODE_LINK_INTERFACE, stop: () => fabric.stop() };
}

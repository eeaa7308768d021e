/**
 * Two pieces of kube-proxy's start-up that sit around the proxier:
 *
 * - the wait of its `NodeManager` (`pkg/proxy/node.go`): with `--detect-local-mode NodeCIDR`
 *   kube-proxy does not build its proxier before this node's Node object exists with a
 *   `spec.podCIDRs`; it polls once a second for at most five minutes and then fails with the
 *   last reason (`node "<name>" does not have any PodCIDR allocated`). Once running, a change
 *   of the node's PodCIDRs makes it exit ("PodCIDRs changed for the node").
 * - `--nodeport-addresses` as `NewNodePortAddresses` / `GetNodeIPs`
 *   (`pkg/proxy/util/nodeport_addresses.go`): the CIDRs of one family (none of the family means
 *   the zero CIDR, i.e. every local address), matched against the addresses of the local
 *   network interfaces — not only the node IPs.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import type { V1Node } from '@kubernetes/client-node';
import {
  abortReason,
  type Clock,
  cidrValueContains,
  type Logger,
  noopLogger,
  parseCIDR,
  parseCIDRValue,
  parseIP,
  parseIPValue,
  realClock,
} from '@nodeagent/core';
import { parseIpAddrShowJson } from './ip-addr-json.js';

/** kube-proxy's poll interval while it waits for its Node (`newNodeManager`): 1 s. */
export const NODE_POLL_INTERVAL_MS = 1_000;
/** kube-proxy's longest wait for its Node and its PodCIDRs (`NewNodeManager`): 5 minutes. */
export const NODE_POLL_TIMEOUT_MS = 5 * 60_000;

/** The Node never got what kube-proxy waits for; the message is kube-proxy's last reason. */
export class NodeWaitTimeoutError extends Error {
  override readonly name = 'NodeWaitTimeoutError';
  /** The node waited for. */
  readonly nodeName: string;
  /**
   * @param nodeName the node waited for
   * @param message kube-proxy's last reason
   */
  constructor(nodeName: string, message: string) {
    super(message);
    this.nodeName = nodeName;
  }
}

/** Options of {@link waitForNodePodCIDRs}. */
export interface WaitForNodeOptions {
  /** This node's name. */
  readonly nodeName: string;
  /**
   * Reads this node's Node object: `undefined` (or a rejection) while it does not exist or
   * cannot be read (kube-proxy's lister `Get` failing), retried on the next poll.
   */
  readonly getNode: () => V1Node | undefined | Promise<V1Node | undefined>;
  /** Also wait for `spec.podCIDRs` (kube-proxy's `watchPodCIDRs`, true with NodeCIDR). @default true */
  readonly waitForPodCIDRs?: boolean | undefined;
  /** @default {@link NODE_POLL_INTERVAL_MS} */
  readonly pollIntervalMs?: number | undefined;
  /** @default {@link NODE_POLL_TIMEOUT_MS} */
  readonly timeoutMs?: number | undefined;
  /** Cancels the wait (shutdown): the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /** @default realClock */
  readonly clock?: Clock | undefined;
  /** @default noopLogger */
  readonly logger?: Logger | undefined;
}

/** The PodCIDRs of a Node as kube-proxy reads them (`spec.podCIDRs`). */
export function nodePodCIDRs(node: V1Node | undefined): readonly string[] {
  return node?.spec?.podCIDRs ?? [];
}

/** kube-proxy's `GetNodeHostIPs` succeeding: an InternalIP or ExternalIP that parses. */
function hasHostIP(node: V1Node): boolean {
  return (node.status?.addresses ?? []).some(
    (a) => (a.type === 'InternalIP' || a.type === 'ExternalIP') && parseIP(a.address) !== null,
  );
}

/**
 * kube-proxy's `newNodeManager` wait: polls `getNode` (at once, then every `pollIntervalMs`)
 * until the Node exists with a host IP and — with `waitForPodCIDRs` — a `spec.podCIDRs`.
 * Logs each distinct reason once at info (ours; kube-proxy's poll is silent).
 * @returns the Node as it was when the wait ended
 * @throws NodeWaitTimeoutError after `timeoutMs`, with kube-proxy's last reason
 *   (`node "<name>" not found`, `host IP unknown; known addresses: [...]`,
 *   `node "<name>" does not have any PodCIDR allocated`); the signal's reason when aborted.
 */
export async function waitForNodePodCIDRs(options: WaitForNodeOptions): Promise<V1Node> {
  const clock = options.clock ?? realClock;
  const log = options.logger ?? noopLogger;
  const interval = options.pollIntervalMs ?? NODE_POLL_INTERVAL_MS;
  const timeout = options.timeoutMs ?? NODE_POLL_TIMEOUT_MS;
  const waitPodCIDRs = options.waitForPodCIDRs ?? true;
  const name = options.nodeName;
  const deadline = clock.now() + timeout;
  let reason = `node "${name}" not found`;
  let logged = '';
  for (;;) {
    if (options.signal?.aborted) throw abortReason(options.signal);
    let node: V1Node | undefined;
    try {
      node = await options.getNode();
    } catch {
      node = undefined;
    }
    if (node === undefined) reason = `node "${name}" not found`;
    else if (!hasHostIP(node)) {
      const known = (node.status?.addresses ?? []).map((a) => `{${a.type} ${a.address}}`).join(' ');
      reason = `host IP unknown; known addresses: [${known}]`;
    } else if (waitPodCIDRs && nodePodCIDRs(node).length === 0)
      reason = `node "${name}" does not have any PodCIDR allocated`;
    else return node;
    if (reason !== logged) {
      log.info({ node: name, reason }, 'Waiting for the Node object (detect-local-mode NodeCIDR)');
      logged = reason;
    }
    const left = deadline - clock.now();
    if (left <= 0) throw new NodeWaitTimeoutError(name, reason);
    await clock.sleep(Math.min(interval, left), options.signal);
  }
}

/** True when two PodCIDR lists differ (kube-proxy's `reflect.DeepEqual` on `spec.podCIDRs`). */
export function podCIDRsChanged(before: readonly string[], after: readonly string[]): boolean {
  return before.length !== after.length || before.some((c, i) => c !== after[i]);
}

const ZERO_CIDR: Readonly<Record<4 | 6, string>> = { 4: '0.0.0.0/0', 6: '::/0' };

/** kube-proxy's `NodePortAddresses` for one IP family. */
export interface NodePortAddresses {
  /** The family. */
  readonly family: 4 | 6;
  /** The CIDRs of the family (the zero CIDR when none was given for it). */
  readonly cidrs: readonly string[];
  /** A zero CIDR is among them: every local address (kube-proxy's `MatchAll`). */
  readonly matchAll: boolean;
  /** A CIDR is, or contains, IPv4 loopback (kube-proxy's `ContainsIPv4Loopback`). */
  readonly containsIPv4Loopback: boolean;
}

/**
 * kube-proxy's `NewNodePortAddresses(family, cidrs)`: the CIDRs of `family` from `cidrs`
 * (entries that are not CIDRs are ignored; keywords such as `primary` are expanded by the
 * caller first); none of the family means the zero CIDR (`0.0.0.0/0` or `::/0`) even when
 * CIDRs of the other family were given. A zero CIDR among them makes it match everything.
 */
export function newNodePortAddresses(family: 4 | 6, cidrs: readonly string[]): NodePortAddresses {
  let strings = cidrs.filter((c) => parseCIDR(c)?.family === family);
  if (strings.length === 0) strings = [ZERO_CIDR[family]];
  const loStart = parseIPValue('127.0.0.0')!;
  let containsIPv4Loopback = false;
  const out: string[] = [];
  let matchAll = false;
  for (const s of strings) {
    const v = parseCIDRValue(s)!;
    if (family === 4) {
      const base = { family: 4 as const, value: v.base };
      const lo = parseCIDRValue('127.0.0.0/8')!;
      if (cidrValueContains(lo, base) || cidrValueContains(v, loStart)) containsIPv4Loopback = true;
    }
    if (v.prefixLength === 0) {
      out.splice(0, out.length, parseCIDR(s)!.cidr);
      matchAll = true;
      break;
    }
    out.push(parseCIDR(s)!.cidr);
  }
  return { family, cidrs: out, matchAll, containsIPv4Loopback };
}

/**
 * kube-proxy's `NodePortAddresses.GetNodeIPs`: the local interface addresses inside the CIDRs,
 * each once, in the order of `interfaceAddresses` (kube-proxy's map iteration has none).
 * Loopback addresses are included; the backends decide (kube-proxy: iptables keeps IPv4
 * loopback only with localhost NodePorts, nftables and IPVS drop it).
 * @param interfaceAddresses addresses of the local interfaces, e.g. {@link listInterfaceAddresses}
 */
export function nodePortAddressIPs(npa: NodePortAddresses, interfaceAddresses: readonly string[]): string[] {
  const cidrs = npa.cidrs.map((c) => parseCIDRValue(c)!);
  const out: string[] = [];
  for (const text of interfaceAddresses) {
    const ip = parseIP(text);
    const v = ip ? parseIPValue(ip.ip) : null;
    if (!ip || !v || out.includes(ip.ip)) continue;
    if (cidrs.some((c) => cidrValueContains(c, v))) out.push(ip.ip);
  }
  return out;
}

/** Options of {@link listInterfaceAddresses}. */
export interface ListInterfaceAddressesOptions {
  /** Read the addresses inside this named network namespace (`ip -n NAME -j addr show`). @default this process's */
  readonly netns?: string | undefined;
}

/**
 * The addresses of the local network interfaces (kube-proxy's `net.InterfaceAddrs()`), in
 * this process's network namespace (`os.networkInterfaces()`) or in the named one (`ip -j`).
 * @throws Error naming the namespace when `ip` fails
 */
export async function listInterfaceAddresses(options: ListInterfaceAddressesOptions = {}): Promise<string[]> {
  if (options.netns === undefined) {
    return Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .map((a) => a.address.replace(/%.*$/, ''));
  }
  const netns = options.netns;
  const text = await new Promise<string>((resolve, reject) => {
    execFile('ip', ['-n', netns, '-j', 'addr', 'show'], { timeout: 10_000 }, (err, stdout, stderr) => {
      if (err)
        reject(new Error(`listing the addresses of netns ${netns}: ${String(stderr).trim() || err.message}`));
      else resolve(String(stdout));
    });
  });
  try {
    return parseIpAddrShowJson(text).map((a) => a.address);
  } catch (err) {
    throw new Error(`listing the addresses of netns ${netns}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Options of the iptables renderer, with kube-proxy's defaults.
 *
 * @module
 */
import { InvalidOptionsError, parseCIDR } from '@nodeagent/core';
import {
  DEFAULT_MASQUERADE_BIT,
  type IPFamilyName,
  ipFamilyName,
  type ProxyRenderOptions,
} from '@nodeagent/proxy-state';

export type { LocalTrafficDetector } from '@nodeagent/proxy-state';

/** Options for {@link renderIptables} and {@link IptablesRenderer}. */
export interface IptablesRenderOptions extends ProxyRenderOptions {
  /**
   * Address family of the ruleset (`iptables` vs `ip6tables`).
   * @default 'IPv4'
   */
  readonly ipFamily?: IPFamilyName;
  /**
   * The node's primary IP of this family; used to allow node-originated traffic through
   * `loadBalancerSourceRanges` that contain it.
   * @default undefined
   */
  readonly nodeIP?: string;
  /**
   * Allow node ports on 127.0.0.0/8 (needs sysctl `net.ipv4.conf.all.route_localnet=1`;
   * IPv4 only). kube-proxy turns it off when `nodePortAddresses` excludes loopback.
   * @default true
   */
  readonly localhostNodePorts?: boolean;
  /**
   * Node IPs that accept node-port traffic (kube-proxy `--nodeport-addresses`, resolved to
   * addresses). Undefined means every local address (`-m addrtype --dst-type LOCAL`).
   * @default undefined
   */
  readonly nodePortIPs?: readonly string[];
  /**
   * The iptables binary supports `MASQUERADE --random-fully`.
   * @default false
   */
  readonly randomFully?: boolean;
  /**
   * `net.netfilter.nf_conntrack_tcp_be_liberal` is non-zero: no INVALID-drop rule.
   * @default false
   */
  readonly conntrackTCPLiberal?: boolean;
  /**
   * nfacct counters that exist (kube-proxy adds `-m nfacct` matches for them).
   * @default {} (none)
   */
  readonly nfacct?: { readonly ctStateInvalid?: boolean; readonly localhostNodePorts?: boolean };
  /**
   * Above this many endpoints in total, per-endpoint comments are left out.
   * @default 1000
   */
  readonly largeClusterEndpointsThreshold?: number;
}

/** Options with every default applied. */
export interface ResolvedRenderOptions {
  readonly ipFamily: IPFamilyName;
  readonly nodeIP: string | undefined;
  readonly masqueradeMark: string;
  readonly masqueradeAll: boolean;
  readonly ifLocal: string | undefined;
  readonly ifNotLocal: string | undefined;
  readonly localhostNodePorts: boolean;
  readonly nodePortIPs: readonly string[] | undefined;
  readonly randomFully: boolean;
  readonly conntrackTCPLiberal: boolean;
  readonly nfacctCtStateInvalid: boolean;
  readonly nfacctLocalhostNodePorts: boolean;
  readonly largeClusterEndpointsThreshold: number;
}

/**
 * The mark as upstream's tests and the golden fixture write it (`0x4000`). kube-proxy
 * itself formats it with Go's `%#08x` (`0x00004000`); the kernel stores the same value
 * either way (`iptables-save` prints `--set-xmark 0x4000/0x4000`).
 */
function markHex(v: number): string {
  return '0x' + v.toString(16);
}

function checkInterface(name: string): void {
  if (!/^[A-Za-z0-9_.@:-]{1,15}$/.test(name)) {
    throw new InvalidOptionsError(
      'IptablesRenderer',
      `interface name ${JSON.stringify(name)} is not a valid Linux interface name`,
    );
  }
}

/** Applies defaults and validates. @throws InvalidOptionsError */
export function resolveRenderOptions(o: IptablesRenderOptions = {}): ResolvedRenderOptions {
  const bit = o.masqueradeBit ?? DEFAULT_MASQUERADE_BIT;
  if (!Number.isInteger(bit) || bit < 0 || bit > 31) {
    throw new InvalidOptionsError('IptablesRenderer', `masqueradeBit ${bit} is out of range 0-31`);
  }
  const ipFamily = o.ipFamily ?? 'IPv4';
  const det = o.localDetector ?? { mode: 'None' };
  let ifLocal: string | undefined;
  let ifNotLocal: string | undefined;
  switch (det.mode) {
    case 'ClusterCIDR':
    case 'NodeCIDR': {
      const c = parseCIDR(det.cidr.trim());
      if (!c || ipFamilyName(c.family) !== ipFamily) {
        throw new InvalidOptionsError(
          'IptablesRenderer',
          `localDetector cidr ${JSON.stringify(det.cidr)} is not an ${ipFamily} CIDR`,
        );
      }
      const cidr = c.cidr;
      ifLocal = `-s ${cidr}`;
      ifNotLocal = `! -s ${cidr}`;
      break;
    }
    case 'BridgeInterface':
      checkInterface(det.interfaceName);
      ifLocal = `-i ${det.interfaceName}`;
      ifNotLocal = `! -i ${det.interfaceName}`;
      break;
    case 'InterfaceNamePrefix':
      checkInterface(det.interfacePrefix);
      ifLocal = `-i ${det.interfacePrefix}+`;
      ifNotLocal = `! -i ${det.interfacePrefix}+`;
      break;
    case 'None':
      break;
  }
  return {
    ipFamily,
    nodeIP: o.nodeIP,
    masqueradeMark: markHex((1 << bit) >>> 0),
    masqueradeAll: o.masqueradeAll ?? false,
    ifLocal,
    ifNotLocal,
    localhostNodePorts: (o.localhostNodePorts ?? true) && ipFamily === 'IPv4',
    nodePortIPs: o.nodePortIPs,
    randomFully: o.randomFully ?? false,
    conntrackTCPLiberal: o.conntrackTCPLiberal ?? false,
    nfacctCtStateInvalid: o.nfacct?.ctStateInvalid ?? false,
    nfacctLocalhostNodePorts: o.nfacct?.localhostNodePorts ?? false,
    largeClusterEndpointsThreshold: o.largeClusterEndpointsThreshold ?? 1000,
  };
}

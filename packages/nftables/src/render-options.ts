/**
 * Options of the nftables renderer, with kube-proxy's defaults.
 *
 * @module
 */
import { InvalidOptionsError, parseCIDR, parseIP } from '@nodeagent/core';
import { DEFAULT_MASQUERADE_BIT, type ProxyRenderOptions } from '@nodeagent/proxy-state';
import type { NftFamily } from './model.js';

/** Which ruleset layout to write. */
export type NftLayout = 'kube-proxy' | 'optimized';

export type { LocalTrafficDetector } from '@nodeagent/proxy-state';

/** Options of {@link NftRenderer}. */
export interface NftRenderOptions extends ProxyRenderOptions {
  /**
   * `kube-proxy` writes exactly kube-proxy's nftables layout; `optimized` writes a layout with
   * the same packet outcomes but a fixed set of chains and named maps (see the README).
   * @default 'kube-proxy'
   */
  readonly layout?: NftLayout;
  /**
   * Address family of the table (`ip` or `ip6`); taken from the snapshot by the snapshot helpers.
   * @default 'ip'
   */
  readonly family?: NftFamily;
  /**
   * Table name.
   * @default 'kube-proxy'
   */
  readonly tableName?: string;
  /**
   * The node's primary IP of this family: node-originated traffic is allowed through
   * `loadBalancerSourceRanges` that contain it.
   * @default undefined
   */
  readonly nodeIP?: string;
  /**
   * IPs that accept NodePort traffic (`--nodeport-addresses`, resolved). Undefined means every
   * local address except loopback (`fib daddr type local`).
   * @default undefined
   */
  readonly nodePortIPs?: readonly string[];
  /**
   * Service CIDRs: traffic to unallocated cluster IPs in them is dropped.
   * @default [] (no drop rule)
   */
  readonly serviceCIDRs?: readonly string[];
}

/** Options with every default applied and validated. */
export interface ResolvedNftOptions {
  readonly layout: NftLayout;
  readonly family: NftFamily;
  readonly table: string;
  /** `ip` or `ip6` keyword for address matches. */
  readonly ipKw: 'ip' | 'ip6';
  /** The mark as hex (`0x4000`). */
  readonly mark: string;
  readonly masqueradeAll: boolean;
  /** Match for pod traffic (`ip saddr 10.0.0.0/8`), undefined without a detector. */
  readonly ifLocal: string | undefined;
  /** Match for non-pod traffic (`ip saddr != 10.0.0.0/8`). */
  readonly ifNotLocal: string | undefined;
  readonly nodeIP: string | undefined;
  readonly nodePortIPs: readonly string[] | undefined;
  readonly serviceCIDRs: readonly string[];
}

function familyOf(ip: { readonly family: 4 | 6 } | null): NftFamily | undefined {
  return ip === null ? undefined : ip.family === 6 ? 'ip6' : 'ip';
}

function ifaceCheck(name: string): string {
  if (!/^[A-Za-z0-9_.@-]{1,15}$/.test(name)) {
    throw new InvalidOptionsError(
      'NftRenderer',
      `interface name ${JSON.stringify(name)} is not a valid Linux interface name`,
    );
  }
  return name;
}

/** Applies defaults and validates. @throws InvalidOptionsError */
export function resolveNftOptions(o: NftRenderOptions = {}): ResolvedNftOptions {
  const family = o.family ?? 'ip';
  const ipKw = family;
  const bit = o.masqueradeBit ?? DEFAULT_MASQUERADE_BIT;
  if (!Number.isInteger(bit) || bit < 0 || bit > 31)
    throw new InvalidOptionsError('NftRenderer', `masqueradeBit ${bit} is out of range 0-31`);
  const table = o.tableName ?? 'kube-proxy';
  if (!/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(table))
    throw new InvalidOptionsError('NftRenderer', `table name ${JSON.stringify(table)} is not valid`);
  const cidrOf = (text: string, what: string): string => {
    const c = parseCIDR(text);
    if (c === null || familyOf(c) !== family)
      throw new InvalidOptionsError(
        'NftRenderer',
        `${what} ${JSON.stringify(text)} is not an ${family} CIDR`,
      );
    return c.cidr;
  };
  const ipOf = (text: string, what: string): string => {
    const p = parseIP(text);
    if (p === null || familyOf(p) !== family)
      throw new InvalidOptionsError(
        'NftRenderer',
        `${what} ${JSON.stringify(text)} is not an ${family} address`,
      );
    return p.ip;
  };
  let ifLocal: string | undefined;
  let ifNotLocal: string | undefined;
  const det = o.localDetector ?? { mode: 'None' };
  switch (det.mode) {
    case 'ClusterCIDR':
    case 'NodeCIDR': {
      const cidr = cidrOf(det.cidr, 'localDetector cidr');
      ifLocal = `${ipKw} saddr ${cidr}`;
      ifNotLocal = `${ipKw} saddr != ${cidr}`;
      break;
    }
    case 'BridgeInterface':
      ifLocal = `iifname ${ifaceCheck(det.interfaceName)}`;
      ifNotLocal = `iifname != ${det.interfaceName}`;
      break;
    case 'InterfaceNamePrefix':
      ifLocal = `iifname ${ifaceCheck(det.interfacePrefix)}*`;
      ifNotLocal = `iifname != ${det.interfacePrefix}*`;
      break;
    case 'None':
      break;
  }
  return {
    layout: o.layout ?? 'kube-proxy',
    family,
    table,
    ipKw,
    mark: `0x${((1 << bit) >>> 0).toString(16)}`,
    masqueradeAll: o.masqueradeAll ?? false,
    ifLocal,
    ifNotLocal,
    nodeIP: o.nodeIP === undefined ? undefined : ipOf(o.nodeIP, 'nodeIP'),
    nodePortIPs: o.nodePortIPs?.map((ip) => ipOf(ip, 'nodePortIPs entry')),
    serviceCIDRs: (o.serviceCIDRs ?? []).map((c) => cidrOf(c, 'serviceCIDRs entry')),
  };
}

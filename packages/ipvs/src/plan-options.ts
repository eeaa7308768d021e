/**
 * Options of the IPVS planner, with kube-proxy's defaults, and their validation.
 *
 * @module
 */
import { InvalidOptionsError, isLoopbackIP, parseCIDR, parseIP } from '@nodeagent/core';
import {
  DEFAULT_MASQUERADE_BIT,
  type IPFamily,
  type LocalTrafficDetector,
  type ProxyRenderOptions,
} from '@nodeagent/proxy-state';

import { DEFAULT_IPVS_SCHEDULER, ipvsSchedulerProblem } from './schedulers.js';

export type { LocalTrafficDetector } from '@nodeagent/proxy-state';

/** Options of {@link planIpvs}. */
export interface IpvsPlanOptions extends ProxyRenderOptions {
  /**
   * The IPVS scheduler of every virtual server (`--ipvs-scheduler`): one of
   * `IPVS_SCHEDULERS`; `''` means the default.
   * @default 'rr'
   */
  readonly scheduler?: string;
  /**
   * The node's primary IP of this family; node-originated traffic may reach load balancers whose
   * `loadBalancerSourceRanges` contain it.
   * @default the snapshot's first node IP
   */
  readonly nodeIP?: string;
  /**
   * Addresses that get a NodePort virtual server (`--nodeport-addresses`, resolved; loopback
   * addresses are left out).
   * @default the snapshot's node IPs
   */
  readonly nodePortIPs?: readonly string[];
  /**
   * `MASQUERADE --random-fully` is supported by the iptables binary.
   * @default false
   */
  readonly randomFully?: boolean;
  /**
   * `net.netfilter.nf_conntrack_tcp_be_liberal` is non-zero: no INVALID-drop rule.
   * @default false
   */
  readonly conntrackTCPLiberal?: boolean;
  /**
   * `hashsize` of the hash-type ipsets.
   * @default 1024
   */
  readonly ipsetHashSize?: number;
  /**
   * `maxelem` of the hash-type ipsets.
   * @default 65536
   */
  readonly ipsetMaxElem?: number;
}

/** Options with every default applied. */
export interface ResolvedIpvsPlanOptions {
  /** Scheduler name. */
  readonly scheduler: string;
  /** The masquerade mark as iptables text (`0x4000`). */
  readonly masqueradeMark: string;
  /** `--masquerade-all`. */
  readonly masqueradeAll: boolean;
  /** The detector, validated. */
  readonly localDetector: LocalTrafficDetector;
  /** Primary node IP, canonical, or undefined. */
  readonly nodeIP: string | undefined;
  /** NodePort addresses, canonical, without loopback. */
  readonly nodePortIPs: readonly string[];
  /** Node addresses: never bound on the dummy interface. */
  readonly nodeAddresses: readonly string[];
  /** `--random-fully`. */
  readonly randomFully: boolean;
  /** No INVALID-drop rule. */
  readonly conntrackTCPLiberal: boolean;
  /** ipset hashsize. */
  readonly ipsetHashSize: number;
  /** ipset maxelem. */
  readonly ipsetMaxElem: number;
}

const INTERFACE_RE = /^[A-Za-z0-9_.@:-]{1,15}$/;

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1 || v > 2 ** 31 - 1) {
    throw new InvalidOptionsError('planIpvs', `${name} ${v} is not a positive 32-bit integer`);
  }
  return v;
}

function checkDetector(det: LocalTrafficDetector, family: IPFamily): LocalTrafficDetector {
  switch (det.mode) {
    case 'ClusterCIDR':
    case 'NodeCIDR': {
      const parsed = parseCIDR(det.cidr);
      const cidr = parsed?.family === family ? parsed.cidr : undefined;
      if (cidr === undefined) {
        throw new InvalidOptionsError(
          'planIpvs',
          `localDetector cidr ${JSON.stringify(det.cidr)} is not an IPv${family} CIDR`,
        );
      }
      return { mode: det.mode, cidr };
    }
    case 'BridgeInterface':
      if (!INTERFACE_RE.test(det.interfaceName)) {
        throw new InvalidOptionsError(
          'planIpvs',
          `interface name ${JSON.stringify(det.interfaceName)} is invalid`,
        );
      }
      return det;
    case 'InterfaceNamePrefix':
      if (!INTERFACE_RE.test(det.interfacePrefix)) {
        throw new InvalidOptionsError(
          'planIpvs',
          `interface prefix ${JSON.stringify(det.interfacePrefix)} is invalid`,
        );
      }
      return det;
    case 'None':
      return det;
  }
}

function ipsOf(name: string, list: readonly string[], family: IPFamily): string[] {
  return list.map((s) => {
    const parsed = parseIP(s);
    const ip = parsed?.family === family ? parsed.ip : undefined;
    if (ip === undefined)
      throw new InvalidOptionsError(
        'planIpvs',
        `${name}: ${JSON.stringify(s)} is not an IPv${family} address`,
      );
    return ip;
  });
}

/**
 * Applies defaults and validates.
 * @param family the snapshot's family; addresses of the other family are refused.
 * @param snapshotNodeIPs the node IPs of the snapshot (defaults for `nodeIP` / `nodePortIPs`).
 * @throws InvalidOptionsError
 */
export function resolveIpvsPlanOptions(
  o: IpvsPlanOptions,
  family: IPFamily,
  snapshotNodeIPs: readonly string[],
): ResolvedIpvsPlanOptions {
  const bit = o.masqueradeBit ?? DEFAULT_MASQUERADE_BIT;
  if (!Number.isInteger(bit) || bit < 0 || bit > 31) {
    throw new InvalidOptionsError('planIpvs', `masqueradeBit ${bit} is out of range 0-31`);
  }
  const scheduler = o.scheduler || DEFAULT_IPVS_SCHEDULER;
  const problem = ipvsSchedulerProblem(scheduler);
  if (problem !== undefined) {
    throw new InvalidOptionsError('planIpvs', `scheduler ${JSON.stringify(scheduler)}: ${problem}`);
  }
  const nodeIPs = ipsOf('node IPs', snapshotNodeIPs, family);
  const nodeIP = o.nodeIP === undefined ? nodeIPs[0] : ipsOf('nodeIP', [o.nodeIP], family)[0];
  const nodePortIPs = [...new Set(ipsOf('nodePortIPs', o.nodePortIPs ?? nodeIPs, family))].filter(
    (ip) => !isLoopbackIP(ip),
  );
  return {
    scheduler,
    masqueradeMark: `0x${((1 << bit) >>> 0).toString(16)}`,
    masqueradeAll: o.masqueradeAll ?? false,
    localDetector: checkDetector(o.localDetector ?? { mode: 'None' }, family),
    nodeIP,
    nodePortIPs,
    nodeAddresses: [...new Set([...nodeIPs, ...nodePortIPs])],
    randomFully: o.randomFully ?? false,
    conntrackTCPLiberal: o.conntrackTCPLiberal ?? false,
    ipsetHashSize: positiveInt('ipsetHashSize', o.ipsetHashSize ?? 1024),
    ipsetMaxElem: positiveInt('ipsetMaxElem', o.ipsetMaxElem ?? 65536),
  };
}

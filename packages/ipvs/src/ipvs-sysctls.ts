/**
 * The sysctls kube-proxy sets when it starts in IPVS mode, with its values and conditions:
 * `vs/conntrack=1`; `vs/conn_reuse_mode=0` only on kernels from 4.1 up to (not including)
 * 5.9 (older ones lack it, newer ones fixed the behaviour it works around, kubernetes#93297);
 * `vs/expire_nodest_conn=1` (the immediate deletion of UDP/SCTP real servers relies on it);
 * `vs/expire_quiescent_template=1`; `ip_forward=1`; and with `--ipvs-strict-arp`
 * `conf/all/arp_ignore=1` and `conf/all/arp_announce=2`. Applied in that order, stopping at
 * the first failure, as upstream.
 *
 * @module
 */
import { type Logger, noopLogger } from '@nodeagent/core';
import { ensureSysctl, type SysctlAccess, type SysctlChange } from './sysctl-access.js';

/** `net/ipv4/vs/conntrack`: keep conntrack entries for IPVS connections (needed by the iptables rules). */
export const SYSCTL_VS_CONNTRACK = 'net/ipv4/vs/conntrack';
/** `net/ipv4/vs/conn_reuse_mode`. */
export const SYSCTL_VS_CONN_REUSE_MODE = 'net/ipv4/vs/conn_reuse_mode';
/** `net/ipv4/vs/expire_nodest_conn`: drop connections of deleted real servers on their next packet. */
export const SYSCTL_VS_EXPIRE_NODEST_CONN = 'net/ipv4/vs/expire_nodest_conn';
/** `net/ipv4/vs/expire_quiescent_template`: expire persistence templates of weight-0 real servers. */
export const SYSCTL_VS_EXPIRE_QUIESCENT_TEMPLATE = 'net/ipv4/vs/expire_quiescent_template';
/** `net/ipv4/ip_forward`. */
export const SYSCTL_IP_FORWARD = 'net/ipv4/ip_forward';
/** `net/ipv4/conf/all/arp_ignore` (strict ARP). */
export const SYSCTL_ARP_IGNORE = 'net/ipv4/conf/all/arp_ignore';
/** `net/ipv4/conf/all/arp_announce` (strict ARP). */
export const SYSCTL_ARP_ANNOUNCE = 'net/ipv4/conf/all/arp_announce';

/** The first kernel with `conn_reuse_mode` (upstream's `IPVSConnReuseModeMinSupportedKernelVersion`). */
export const CONN_REUSE_MODE_MIN_KERNEL = '4.1';
/** The kernel that fixed `conn_reuse_mode` (upstream's `IPVSConnReuseModeFixedKernelVersion`). */
export const CONN_REUSE_MODE_FIXED_KERNEL = '5.9';

/** One sysctl of the IPVS start-up, and whether it is written. */
export interface IpvsSysctl {
  /** The sysctl. */
  readonly name: string;
  /** The value to ensure, or undefined when it is left as it is. */
  readonly value: number | undefined;
  /** Why it is left as it is (only with `value` undefined). */
  readonly reason?: string;
}

/** Options of {@link ipvsSysctls} and {@link ensureIpvsSysctls}. */
export interface IpvsSysctlOptions {
  /**
   * `--ipvs-strict-arp`: also set `arp_ignore=1` and `arp_announce=2`.
   * @default false
   */
  readonly strictARP?: boolean;
}

/**
 * The leading `major.minor[.patch]` numbers of a kernel release (`6.1.0-18-amd64` → `[6, 1, 0]`),
 * as upstream's generic version parser reads them.
 * @throws TypeError when the release does not start with `<n>.<n>`.
 */
export function parseKernelVersion(release: string): number[] {
  const m = /^v?([0-9]+(?:\.[0-9]+){1,2})/.exec(release.trim());
  if (!m) throw new TypeError(`kernel release ${JSON.stringify(release)} has no version number`);
  return m[1]!.split('.').map(Number);
}

/** True when version `a` is lower than `b` (missing components count as 0). */
function lessThan(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x < y;
  }
  return false;
}

/**
 * The sysctls of the IPVS start-up for a kernel release, in upstream's order. Pure.
 *
 * @example
 * ```ts
 * ipvsSysctls('6.1.0', { strictARP: true }).map((s) => [s.name, s.value]);
 * // conn_reuse_mode is left as it is from 5.9 on: value undefined
 * ```
 * @throws TypeError when `kernelRelease` has no version number.
 */
export function ipvsSysctls(kernelRelease: string, options: IpvsSysctlOptions = {}): IpvsSysctl[] {
  const kernel = parseKernelVersion(kernelRelease);
  const reuse: IpvsSysctl = lessThan(kernel, parseKernelVersion(CONN_REUSE_MODE_MIN_KERNEL))
    ? {
        name: SYSCTL_VS_CONN_REUSE_MODE,
        value: undefined,
        reason: `kernel ${kernelRelease} is older than ${CONN_REUSE_MODE_MIN_KERNEL}, which introduced it`,
      }
    : lessThan(kernel, parseKernelVersion(CONN_REUSE_MODE_FIXED_KERNEL))
      ? { name: SYSCTL_VS_CONN_REUSE_MODE, value: 0 }
      : {
          name: SYSCTL_VS_CONN_REUSE_MODE,
          value: undefined,
          reason: `left as-is: fixed in kernel ${CONN_REUSE_MODE_FIXED_KERNEL} (kubernetes#93297)`,
        };
  const list: IpvsSysctl[] = [
    { name: SYSCTL_VS_CONNTRACK, value: 1 },
    reuse,
    { name: SYSCTL_VS_EXPIRE_NODEST_CONN, value: 1 },
    { name: SYSCTL_VS_EXPIRE_QUIESCENT_TEMPLATE, value: 1 },
    { name: SYSCTL_IP_FORWARD, value: 1 },
  ];
  if (options.strictARP) {
    list.push({ name: SYSCTL_ARP_IGNORE, value: 1 }, { name: SYSCTL_ARP_ANNOUNCE, value: 2 });
  }
  return list;
}

/** What {@link ensureSysctls} did. */
export interface SysctlReport {
  /** The sysctls ensured, in order (`changed` says which were written). */
  readonly ensured: readonly SysctlChange[];
  /** The sysctls left as they are, with the reason. */
  readonly left: readonly IpvsSysctl[];
}

/**
 * Ensures each sysctl of `list` in order, stopping at the first that cannot be written.
 * @throws SysctlError naming that sysctl.
 */
export async function ensureSysctls(
  access: SysctlAccess,
  list: readonly IpvsSysctl[],
  logger: Logger = noopLogger,
): Promise<SysctlReport> {
  const ensured: SysctlChange[] = [];
  const left: IpvsSysctl[] = [];
  for (const s of list) {
    if (s.value === undefined) {
      logger.info({ sysctl: s.name, reason: s.reason }, 'Left as-is');
      left.push(s);
      continue;
    }
    const change = await ensureSysctl(access, s.name, s.value);
    if (change.changed)
      logger.info({ name: s.name, before: change.before, after: s.value }, 'Changed sysctl');
    ensured.push(change);
  }
  return { ensured, left };
}

/**
 * kube-proxy's IPVS sysctls on this kernel: reads the kernel release through `access`, then
 * {@link ensureSysctls} of {@link ipvsSysctls}.
 * @throws SysctlError naming the first sysctl that cannot be set (on a kernel without IPVS:
 *   `net/ipv4/vs/conntrack`, which does not exist there).
 */
export async function ensureIpvsSysctls(
  access: SysctlAccess,
  options: IpvsSysctlOptions & { readonly logger?: Logger } = {},
): Promise<SysctlReport> {
  const list = ipvsSysctls(await access.kernelRelease(), options);
  return ensureSysctls(access, list, options.logger);
}

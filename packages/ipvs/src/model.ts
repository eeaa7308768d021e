/**
 * The IPVS layout as plain data: virtual servers with their real servers, the addresses bound
 * on the dummy interface, and ipsets. The same shapes describe what should be programmed (a
 * plan) and what is programmed (the state an executor reads back).
 *
 * @module
 */
import { joinHostPort } from '@nodeagent/core';

/** The L4 protocols IPVS virtual servers are created for (as the Service API spells them). */
export type IpvsProtocol = 'TCP' | 'UDP' | 'SCTP';

/** What identifies an IPVS virtual server: address, port and protocol. */
export interface VirtualServerId {
  /** The virtual address (canonical IPv4 or IPv6 text, no brackets). */
  readonly address: string;
  /** The virtual port (1–65535). */
  readonly port: number;
  /** The protocol. */
  readonly protocol: IpvsProtocol;
}

/**
 * IPVS service flags kube-proxy sets: `persistent` for ClientIP session affinity, and
 * `source-hash` (`IP_VS_SVC_F_SCHED2`, ipvsadm `-b mh-port`) with the `mh` scheduler.
 */
export type VirtualServerFlag = 'persistent' | 'source-hash';

/** The settings of a virtual server, without its real servers. */
export interface VirtualServerSpec extends VirtualServerId {
  /** The scheduler name (`rr`, `lc`, `dh`, `sh`, `sed`, `nq`, `mh`, ...). */
  readonly scheduler: string;
  /** The flags, sorted. */
  readonly flags: readonly VirtualServerFlag[];
  /** Persistence timeout in seconds when `flags` has `persistent`, else 0. */
  readonly timeoutSeconds: number;
}

/** What identifies a real server inside its virtual server. */
export interface RealServerId {
  /** The real server's address. */
  readonly address: string;
  /** The real server's port. */
  readonly port: number;
}

/** A real server (a destination) of a virtual server; always masquerading forward (`-m`). */
export interface RealServer extends RealServerId {
  /** The scheduling weight: 1 for a live endpoint, 0 while it drains (graceful termination). */
  readonly weight: number;
}

/** A virtual server with its real servers. */
export interface VirtualServer extends VirtualServerSpec {
  /** The real servers, sorted by `ip:port` text. */
  readonly realServers: readonly RealServer[];
}

/** The ipset types kube-proxy's IPVS mode uses. */
export type IPSetType = 'hash:ip' | 'hash:ip,port' | 'hash:ip,port,ip' | 'hash:ip,port,net' | 'bitmap:port';

/** One ipset: its header and its entries (in ipset's own text form, e.g. `172.30.0.41,tcp:80`). */
export interface IPSet {
  /** The set name (at most 31 characters). */
  readonly name: string;
  /** The set type. */
  readonly type: IPSetType;
  /** `inet` or `inet6` (hash types only; bitmap:port sets ignore it). */
  readonly family: 'inet' | 'inet6';
  /** The hash size (hash types). */
  readonly hashSize: number;
  /** The maximum number of elements (hash types). */
  readonly maxElem: number;
  /** The port range of a `bitmap:port` set (`0-65535`). */
  readonly portRange: string;
  /** The entries, sorted. */
  readonly entries: readonly string[];
  /**
   * True when the planner refused this set's entries because there were more than
   * `maxElem` of them (an `IPSetOverflowError` in the plan's errors): `entries` is then
   * empty, and the diff and renderers only make sure the set exists, leaving whatever entries
   * the kernel holds in place.
   * @default false
   */
  readonly entriesRefused?: boolean;
}

/** Everything IPVS-related that is (or should be) programmed into one network namespace. */
export interface IpvsState {
  /** Virtual servers, sorted by address, port, protocol. */
  readonly virtualServers: readonly VirtualServer[];
  /** Addresses bound on the dummy interface (`kube-ipvs0`), sorted. */
  readonly boundAddresses: readonly string[];
  /** ipsets (the planner lists kube-proxy's sets in its order; executors list what exists). */
  readonly ipsets: readonly IPSet[];
}

/** kube-proxy's `VirtualServer.String()`: `ip:port/PROTOCOL` (IPv6 bracketed). */
export function virtualServerKey(vs: VirtualServerId): string {
  return `${joinHostPort(vs.address, vs.port)}/${vs.protocol}`;
}

/** A real server's key: `ip:port` (IPv6 bracketed). */
export function realServerKey(rs: RealServerId): string {
  return joinHostPort(rs.address, rs.port);
}

/** kube-proxy's unique real-server name used by graceful termination: `<vs key>/<rs key>`. */
export function uniqueRealServerKey(vs: VirtualServerId, rs: RealServerId): string {
  return `${virtualServerKey(vs)}/${realServerKey(rs)}`;
}

/** Orders virtual servers by address, then port, then protocol. */
export function compareVirtualServers(a: VirtualServerId, b: VirtualServerId): number {
  if (a.address !== b.address) return a.address < b.address ? -1 : 1;
  if (a.port !== b.port) return a.port - b.port;
  return a.protocol < b.protocol ? -1 : a.protocol > b.protocol ? 1 : 0;
}

/** True when two virtual servers have the same settings (real servers are not compared). */
export function sameVirtualServerSpec(a: VirtualServerSpec, b: VirtualServerSpec): boolean {
  return (
    a.scheduler === b.scheduler &&
    a.timeoutSeconds === b.timeoutSeconds &&
    a.flags.length === b.flags.length &&
    a.flags.every((f, i) => b.flags[i] === f)
  );
}

/** The spec part of a virtual server (drops its real servers). */
export function virtualServerSpec(vs: VirtualServerSpec): VirtualServerSpec {
  return {
    address: vs.address,
    port: vs.port,
    protocol: vs.protocol,
    scheduler: vs.scheduler,
    flags: [...vs.flags],
    timeoutSeconds: vs.timeoutSeconds,
  };
}

/**
 * kube-proxy's IPVS-mode ipsets: names, types, the comments its iptables rules carry, the
 * IPv6 renaming (`KUBE-` → `KUBE-6-`, cut to ipset's 31-character limit) and the entry text
 * format of each type.
 *
 * @module
 */
import type { IPFamily } from '@nodeagent/proxy-state';
import type { IPSetType } from './model.js';

/** ipset's maximum set-name length. */
export const IPSET_MAX_NAME_LENGTH = 31;

/** The (IPv4) names of kube-proxy's IPVS-mode sets. */
export const KUBE_LOOP_BACK = 'KUBE-LOOP-BACK';
/** Cluster IP + port of every service port. */
export const KUBE_CLUSTER_IP = 'KUBE-CLUSTER-IP';
/** External IP + port, `externalTrafficPolicy: Cluster`. */
export const KUBE_EXTERNAL_IP = 'KUBE-EXTERNAL-IP';
/** External IP + port, `externalTrafficPolicy: Local`. */
export const KUBE_EXTERNAL_IP_LOCAL = 'KUBE-EXTERNAL-IP-LOCAL';
/** Load-balancer IP + port. */
export const KUBE_LOAD_BALANCER = 'KUBE-LOAD-BALANCER';
/** Load-balancer IP + port, `externalTrafficPolicy: Local`. */
export const KUBE_LOAD_BALANCER_LOCAL = 'KUBE-LOAD-BALANCER-LOCAL';
/** Load-balancer IP + port of services with `loadBalancerSourceRanges`. */
export const KUBE_LOAD_BALANCER_FW = 'KUBE-LOAD-BALANCER-FW';
/** Load-balancer IP + port + the LB IP itself as source (node access allowed). */
export const KUBE_LOAD_BALANCER_SOURCE_IP = 'KUBE-LOAD-BALANCER-SOURCE-IP';
/** Load-balancer IP + port + allowed source CIDR. */
export const KUBE_LOAD_BALANCER_SOURCE_CIDR = 'KUBE-LOAD-BALANCER-SOURCE-CIDR';
/** TCP node ports. */
export const KUBE_NODE_PORT_TCP = 'KUBE-NODE-PORT-TCP';
/** TCP node ports with `externalTrafficPolicy: Local`. */
export const KUBE_NODE_PORT_LOCAL_TCP = 'KUBE-NODE-PORT-LOCAL-TCP';
/** UDP node ports. */
export const KUBE_NODE_PORT_UDP = 'KUBE-NODE-PORT-UDP';
/** UDP node ports with `externalTrafficPolicy: Local`. */
export const KUBE_NODE_PORT_LOCAL_UDP = 'KUBE-NODE-PORT-LOCAL-UDP';
/** SCTP node ports (node IP + port: bitmap:port cannot tell SCTP apart). */
export const KUBE_NODE_PORT_SCTP_HASH = 'KUBE-NODE-PORT-SCTP-HASH';
/** SCTP node ports with `externalTrafficPolicy: Local`. */
export const KUBE_NODE_PORT_LOCAL_SCTP_HASH = 'KUBE-NODE-PORT-LOCAL-SCTP-HASH';
/** Health-check node ports. */
export const KUBE_HEALTH_CHECK_NODE_PORT = 'KUBE-HEALTH-CHECK-NODE-PORT';
/** Every address bound on the dummy interface. */
export const KUBE_IPVS_IPS = 'KUBE-IPVS-IPS';

/** One of kube-proxy's sets: base name, type and the comment of the iptables rules using it. */
export interface IPSetDefinition {
  /** The IPv4 name (see {@link ipsetName} for IPv6). */
  readonly baseName: string;
  /** The set type. */
  readonly type: IPSetType;
  /** The comment kube-proxy writes on iptables rules that match this set. */
  readonly comment: string;
}

/** kube-proxy's sets in the order it declares them. */
export const IPSET_DEFINITIONS: readonly IPSetDefinition[] = [
  {
    baseName: KUBE_LOOP_BACK,
    type: 'hash:ip,port,ip',
    comment: 'Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose',
  },
  {
    baseName: KUBE_CLUSTER_IP,
    type: 'hash:ip,port',
    comment: 'Kubernetes service cluster ip + port for masquerade purpose',
  },
  {
    baseName: KUBE_EXTERNAL_IP,
    type: 'hash:ip,port',
    comment: 'Kubernetes service external ip + port for masquerade and filter purpose',
  },
  {
    baseName: KUBE_EXTERNAL_IP_LOCAL,
    type: 'hash:ip,port',
    comment: 'Kubernetes service external ip + port with externalTrafficPolicy=local',
  },
  { baseName: KUBE_LOAD_BALANCER, type: 'hash:ip,port', comment: 'Kubernetes service lb portal' },
  {
    baseName: KUBE_LOAD_BALANCER_FW,
    type: 'hash:ip,port',
    comment: 'Kubernetes service load balancer ip + port for load balancer with sourceRange',
  },
  {
    baseName: KUBE_LOAD_BALANCER_LOCAL,
    type: 'hash:ip,port',
    comment: 'Kubernetes service load balancer ip + port with externalTrafficPolicy=local',
  },
  {
    baseName: KUBE_LOAD_BALANCER_SOURCE_IP,
    type: 'hash:ip,port,ip',
    comment: 'Kubernetes service load balancer ip + port + source IP for packet filter purpose',
  },
  {
    baseName: KUBE_LOAD_BALANCER_SOURCE_CIDR,
    type: 'hash:ip,port,net',
    comment: 'Kubernetes service load balancer ip + port + source cidr for packet filter purpose',
  },
  {
    baseName: KUBE_NODE_PORT_TCP,
    type: 'bitmap:port',
    comment: 'Kubernetes nodeport TCP port for masquerade purpose',
  },
  {
    baseName: KUBE_NODE_PORT_LOCAL_TCP,
    type: 'bitmap:port',
    comment: 'Kubernetes nodeport TCP port with externalTrafficPolicy=local',
  },
  {
    baseName: KUBE_NODE_PORT_UDP,
    type: 'bitmap:port',
    comment: 'Kubernetes nodeport UDP port for masquerade purpose',
  },
  {
    baseName: KUBE_NODE_PORT_LOCAL_UDP,
    type: 'bitmap:port',
    comment: 'Kubernetes nodeport UDP port with externalTrafficPolicy=local',
  },
  {
    baseName: KUBE_NODE_PORT_SCTP_HASH,
    type: 'hash:ip,port',
    comment: "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'",
  },
  {
    baseName: KUBE_NODE_PORT_LOCAL_SCTP_HASH,
    type: 'hash:ip,port',
    comment: "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'",
  },
  {
    baseName: KUBE_HEALTH_CHECK_NODE_PORT,
    type: 'bitmap:port',
    comment: 'Kubernetes health check node port',
  },
  { baseName: KUBE_IPVS_IPS, type: 'hash:ip', comment: 'Addresses on the ipvs interface' },
];

/**
 * The set name for a family: unchanged for IPv4; for IPv6 `KUBE-` becomes `KUBE-6-` and the
 * result is cut to 31 characters (`KUBE-6-LOAD-BALANCER-SOURCE-CID`), as kube-proxy does.
 */
export function ipsetName(baseName: string, family: IPFamily): string {
  if (family === 4 || !baseName.startsWith('KUBE-')) return baseName;
  return `KUBE-6-${baseName.slice('KUBE-'.length)}`.slice(0, IPSET_MAX_NAME_LENGTH);
}

/** `ip,proto:port` — a hash:ip,port entry. */
export function ipPortEntry(ip: string, protocol: string, port: number): string {
  return `${ip},${protocol.toLowerCase()}:${port}`;
}

/** `ip,proto:port,ip2` — a hash:ip,port,ip entry. */
export function ipPortIpEntry(ip: string, protocol: string, port: number, ip2: string): string {
  return `${ip},${protocol.toLowerCase()}:${port},${ip2}`;
}

/** `ip,proto:port,cidr` — a hash:ip,port,net entry. */
export function ipPortNetEntry(ip: string, protocol: string, port: number, cidr: string): string {
  return `${ip},${protocol.toLowerCase()}:${port},${cidr}`;
}

/** A parsed ipset entry (fields absent for types that do not have them). */
export interface ParsedIPSetEntry {
  /** The first IP (hash types). */
  readonly ip?: string;
  /** The protocol, lower case (types with a port, except bitmap:port). */
  readonly protocol?: string;
  /** The port. */
  readonly port?: number;
  /** The second IP (hash:ip,port,ip). */
  readonly ip2?: string;
  /** The network (hash:ip,port,net). */
  readonly net?: string;
}

/** Parses an entry of a set of `type`; undefined when it does not have that type's shape. */
export function parseIPSetEntry(type: IPSetType, entry: string): ParsedIPSetEntry | undefined {
  const portOf = (s: string): number | undefined => {
    if (!/^[0-9]{1,5}$/.test(s)) return undefined;
    const n = Number(s);
    return n <= 65535 ? n : undefined;
  };
  if (type === 'bitmap:port') {
    const port = portOf(entry);
    return port === undefined ? undefined : { port };
  }
  const parts = entry.split(',');
  if (type === 'hash:ip') return parts.length === 1 && parts[0] !== '' ? { ip: parts[0]! } : undefined;
  const want = type === 'hash:ip,port' ? 2 : 3;
  if (parts.length !== want) return undefined;
  const [ip = '', pp = '', third = ''] = parts;
  const m = /^(tcp|udp|sctp):([0-9]{1,5})$/.exec(pp);
  const port = m ? portOf(m[2]!) : undefined;
  if (ip === '' || !m || port === undefined) return undefined;
  const base = { ip, protocol: m[1]!, port };
  if (type === 'hash:ip,port') return base;
  if (third === '') return undefined;
  return type === 'hash:ip,port,ip' ? { ...base, ip2: third } : { ...base, net: third };
}

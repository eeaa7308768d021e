/**
 * kube-proxy's nftables chain and set naming: `hashAndTruncate` (8 characters of
 * base32(SHA-256) + `-` + readable name, truncated to fit nft's name limit) with the
 * `service-`, `local-`, `external-`, `endpoint-`, `affinity-` and `firewall-` prefixes.
 *
 * @module
 */
import { chainNameHash, type Protocol } from '@nodeagent/proxy-state';

/** nft's maximum object name length is 256 bytes; kube-proxy keeps 16 for prefixes. */
export const CHAIN_NAME_BASE_MAX_LENGTH = 240;

/**
 * kube-proxy's `hashAndTruncate`: `base32(sha256(name))[:8] + "-" + name`, cut to
 * {@link CHAIN_NAME_BASE_MAX_LENGTH} bytes with a trailing `...` when longer.
 */
export function hashAndTruncate(name: string): string {
  const full = `${chainNameHash(name, 8)}-${name}`;
  // Byte length is at most 3 × UTF-16 length: only long names need the exact count.
  if (full.length * 3 <= CHAIN_NAME_BASE_MAX_LENGTH || Buffer.byteLength(full) <= CHAIN_NAME_BASE_MAX_LENGTH)
    return full;
  return `${Buffer.from(full)
    .subarray(0, CHAIN_NAME_BASE_MAX_LENGTH - 3)
    .toString('latin1')}...`;
}

/** The parts of a service port name that go into chain names. */
export interface ChainNameParts {
  /** Namespace. */
  readonly namespace: string;
  /** Service name. */
  readonly name: string;
  /** Port name (`''` for an unnamed port). */
  readonly port: string;
  /** Protocol (upper case, as the API spells it). */
  readonly protocol: Protocol;
}

/** `ns/name/proto/portName`: the readable base of a service port's chains. */
export function servicePortChainNameBase(p: ChainNameParts): string {
  return `${p.namespace}/${p.name}/${p.protocol.toLowerCase()}/${p.port}`;
}

/**
 * `ns/name/proto/portName__IP/port` for an endpoint `ip:port` (IPv6 as `[ip]:port`); colons
 * of IPv6 addresses become dots because nft names may not contain `:`.
 */
export function endpointChainNameBase(p: ChainNameParts, endpoint: string): string {
  const cut = endpoint.lastIndexOf(':');
  let ip = endpoint.slice(0, cut);
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  const port = endpoint.slice(cut + 1);
  return `${servicePortChainNameBase(p)}__${ip.replaceAll(':', '.')}/${port}`;
}

/** `service-<hash>-ns/name/proto/port`: the Cluster-policy chain. */
export function serviceChainName(p: ChainNameParts): string {
  return `service-${hashAndTruncate(servicePortChainNameBase(p))}`;
}

/** `local-<hash>-ns/name/proto/port`: the Local-policy chain. */
export function localChainName(p: ChainNameParts): string {
  return `local-${hashAndTruncate(servicePortChainNameBase(p))}`;
}

/** `external-<hash>-ns/name/proto/port`: the external-traffic chain. */
export function externalChainName(p: ChainNameParts): string {
  return `external-${hashAndTruncate(servicePortChainNameBase(p))}`;
}

/** `firewall-<hash>-ns/name/proto/port`: the LoadBalancer source-range chain. */
export function firewallChainName(p: ChainNameParts): string {
  return `firewall-${hashAndTruncate(servicePortChainNameBase(p))}`;
}

/** `endpoint-<hash>-ns/name/proto/port__ip/port`: one endpoint's DNAT chain. */
export function endpointChainName(p: ChainNameParts, endpoint: string): string {
  return `endpoint-${hashAndTruncate(endpointChainNameBase(p, endpoint))}`;
}

/** `affinity-<hash>-...`: one endpoint's session-affinity set (same hash as its chain). */
export function affinitySetName(p: ChainNameParts, endpoint: string): string {
  return `affinity-${hashAndTruncate(endpointChainNameBase(p, endpoint))}`;
}

/** True for chain names kube-proxy treats as per-service chains (they contain `/`). */
export function isServiceChainName(name: string): boolean {
  return name.includes('/');
}

/**
 * Characters that may appear in a namespace, service or port name so that every derived
 * chain name is a valid unquoted nft identifier (nft 1.0 does not accept quoted chain names).
 * Kubernetes names (DNS labels, IANA service names) always pass.
 */
export const SAFE_NAME_PART = /^[A-Za-z0-9_.-]*$/;

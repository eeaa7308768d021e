/**
 * kube-proxy's chain names: fixed chains, and per-service / per-endpoint chains named by a
 * hash of the service port so the name fits iptables' 28-character limit.
 *
 * @module
 */
import { chainNameHash } from '@nodeagent/proxy-state';

/** nat + filter: dispatch by destination (nat) / reject services without endpoints (filter). */
export const KUBE_SERVICES = 'KUBE-SERVICES';
/** filter: REJECT/DROP for external IPs, LB IPs and node ports without (local) endpoints. */
export const KUBE_EXTERNAL_SERVICES = 'KUBE-EXTERNAL-SERVICES';
/** nat: node-port dispatch; filter: health-check node port ACCEPT rules. */
export const KUBE_NODEPORTS = 'KUBE-NODEPORTS';
/** nat: masquerades packets carrying the masquerade mark. */
export const KUBE_POSTROUTING = 'KUBE-POSTROUTING';
/** nat: sets the masquerade mark. */
export const KUBE_MARK_MASQ = 'KUBE-MARK-MASQ';
/** filter: forwarding rules (INVALID drop, accept marked / established). */
export const KUBE_FORWARD = 'KUBE-FORWARD';
/** filter: drops load-balancer traffic that fell off a `KUBE-FW-*` chain. */
export const KUBE_PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';
/** filter: kubelet's anti-martian rule for localhost node ports (duplicated by kube-proxy). */
export const KUBE_FIREWALL = 'KUBE-FIREWALL';
/** Empty chain in mangle/nat/filter whose disappearance reveals a flush by someone else. */
export const KUBE_PROXY_CANARY = 'KUBE-PROXY-CANARY';

/** Prefix of a service port's "Cluster" traffic-policy chain. */
export const SVC_PREFIX = 'KUBE-SVC-';
/** Prefix of a service port's "Local" traffic-policy chain. */
export const SVL_PREFIX = 'KUBE-SVL-';
/** Prefix of a service port's external-traffic chain. */
export const EXT_PREFIX = 'KUBE-EXT-';
/** Prefix of a service port's load-balancer source-range firewall chain. */
export const FW_PREFIX = 'KUBE-FW-';
/** Prefix of an endpoint chain. */
export const SEP_PREFIX = 'KUBE-SEP-';

const SERVICE_CHAIN_PREFIXES = [SVC_PREFIX, SVL_PREFIX, SEP_PREFIX, FW_PREFIX, EXT_PREFIX] as const;

/**
 * kube-proxy's `portProtoHash`: base32(SHA-256(`servicePortName + protocol`))[:16].
 * @param servicePortName `ns/name:port` (`ns/name` for an unnamed port).
 * @param protocol lower-case `tcp`, `udp` or `sctp`.
 */
export function portProtoHash(servicePortName: string, protocol: string): string {
  return chainNameHash(servicePortName + protocol, 16);
}

/** `KUBE-SVC-<hash>`: the service port's chain for "Cluster" traffic policy. */
export function serviceClusterChainName(servicePortName: string, protocol: string): string {
  return SVC_PREFIX + portProtoHash(servicePortName, protocol);
}

/** `KUBE-SVL-<hash>`: the service port's chain for "Local" traffic policy. */
export function serviceLocalChainName(servicePortName: string, protocol: string): string {
  return SVL_PREFIX + portProtoHash(servicePortName, protocol);
}

/** `KUBE-EXT-<hash>`: the service port's chain for external destinations. */
export function serviceExternalChainName(servicePortName: string, protocol: string): string {
  return EXT_PREFIX + portProtoHash(servicePortName, protocol);
}

/** `KUBE-FW-<hash>`: the service port's load-balancer source-range chain. */
export function serviceFirewallChainName(servicePortName: string, protocol: string): string {
  return FW_PREFIX + portProtoHash(servicePortName, protocol);
}

/**
 * `KUBE-SEP-<hash>`: an endpoint's chain, hashing `servicePortName + protocol + endpoint`.
 * @param endpoint `ip:port`, IPv6 as `[ip]:port`.
 */
export function endpointChainName(servicePortName: string, protocol: string, endpoint: string): string {
  return SEP_PREFIX + chainNameHash(servicePortName + protocol + endpoint, 16);
}

/** True for chain names kube-proxy owns per service or endpoint (the five hashed prefixes). */
export function isServiceChainName(chain: string): boolean {
  for (const p of SERVICE_CHAIN_PREFIXES) if (chain.startsWith(p)) return true;
  return false;
}

/**
 * kube-proxy's chain names: fixed chains, and per-service / per-endpoint chains named by a
 * hash of the service port so the name fits iptables' 28-character limit.
 *
 * @module
 */
import { hash } from 'node:crypto';

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

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Base32 of every 10-bit value (two characters each): a constant table. */
const BASE32_PAIRS: readonly string[] = Array.from(
  { length: 1024 },
  (_, v) => BASE32_ALPHABET[v >> 5]! + BASE32_ALPHABET[v & 31]!,
);

/** The value of a lower-case hex digit's char code. */
function hexDigit(c: number): number {
  return c <= 57 ? c - 48 : c - 87;
}

/** Four base32 characters for the 20 bits of the 5 hex digits at `hex[at..at+5)`. */
function base32Of5Hex(hex: string, at: number): string {
  const v =
    (hexDigit(hex.charCodeAt(at)) << 16) |
    (hexDigit(hex.charCodeAt(at + 1)) << 12) |
    (hexDigit(hex.charCodeAt(at + 2)) << 8) |
    (hexDigit(hex.charCodeAt(at + 3)) << 4) |
    hexDigit(hex.charCodeAt(at + 4));
  return BASE32_PAIRS[v >> 10]! + BASE32_PAIRS[v & 1023]!;
}

/** The first 16 RFC 4648 base32 characters of SHA-256(input): 80 bits, i.e. 20 hex digits. */
function hash16(input: string): string {
  // One-shot hashing with hex output: several times cheaper than createHash(), and cheaper
  // than a Buffer digest (no Buffer allocation) for the ~100,000 endpoint chains of a full
  // render at 10,000 services; the digits are turned into base32 through a 1,024-entry table.
  const hex = hash('sha256', input, 'hex');
  return base32Of5Hex(hex, 0) + base32Of5Hex(hex, 5) + base32Of5Hex(hex, 10) + base32Of5Hex(hex, 15);
}

/**
 * kube-proxy's `portProtoHash`: base32(SHA-256(`servicePortName + protocol`))[:16].
 * @param servicePortName `ns/name:port` (`ns/name` for an unnamed port).
 * @param protocol lower-case `tcp`, `udp` or `sctp`.
 */
export function portProtoHash(servicePortName: string, protocol: string): string {
  return hash16(servicePortName + protocol);
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
  return SEP_PREFIX + hash16(servicePortName + protocol + endpoint);
}

/** True for chain names kube-proxy owns per service or endpoint (the five hashed prefixes). */
export function isServiceChainName(chain: string): boolean {
  for (const p of SERVICE_CHAIN_PREFIXES) if (chain.startsWith(p)) return true;
  return false;
}

/**
 * Address helpers on top of `@nodeagent/proxy-state`'s parser: canonical text, family checks
 * and CIDR containment (for the `loadBalancerSourceRanges` ⊇ node IP rule and the tracer).
 *
 * @module
 */
import { type IPFamily, parseCIDR, parseIP, parseIPValue } from '@nodeagent/proxy-state';

/** The canonical form of `text` if it is an IP of `family`, else undefined. */
export function canonicalIP(text: string, family?: IPFamily): string | undefined {
  const p = parseIP(text);
  if (p === null || (family !== undefined && p.family !== family)) return undefined;
  return p.ip;
}

/** The canonical (network-masked) form of `text` if it is a CIDR of `family`, else undefined. */
export function canonicalCIDR(text: string, family?: IPFamily): string | undefined {
  const p = parseCIDR(text);
  if (p === null || (family !== undefined && p.family !== family)) return undefined;
  return p.cidr;
}

/** The numeric value of an IP and its bit width. */
function ipValue(text: string): { value: bigint; bits: number } | undefined {
  const p = parseIPValue(text);
  return p === null ? undefined : { value: p.value, bits: p.family === 4 ? 32 : 128 };
}

/** True when the IP `ip` lies inside `cidr` (same family). Invalid input is never contained. */
export function cidrContains(cidr: string, ip: string): boolean {
  const slash = cidr.indexOf('/');
  if (slash < 0) return false;
  const net = ipValue(cidr.slice(0, slash));
  const addr = ipValue(ip);
  const prefix = Number(cidr.slice(slash + 1));
  if (!net || !addr || net.bits !== addr.bits || !Number.isInteger(prefix)) return false;
  const shift = BigInt(net.bits - prefix);
  return net.value >> shift === addr.value >> shift;
}

/** True when two IP texts denote the same address. */
export function sameIP(a: string, b: string): boolean {
  const x = parseIP(a);
  const y = parseIP(b);
  return x !== null && y !== null && x.ip === y.ip;
}

/** True for 127.0.0.0/8 and ::1. */
export function isLoopback(ip: string): boolean {
  return cidrContains('127.0.0.0/8', ip) || sameIP(ip, '::1');
}

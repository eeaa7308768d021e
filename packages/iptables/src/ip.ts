/**
 * IP address and CIDR parsing with the normalisation kube-proxy applies to API input
 * (`ParseIPSloppy`: IPv4 octets with leading zeros read as decimal, `172.30.0.041` →
 * `172.30.0.41`; CIDRs reduced to their network address, `203.0.113.000/025` →
 * `203.0.113.0/25`) and Go's textual forms (RFC 5952 for IPv6).
 *
 * @module
 */
import { formatIPValue, parseCIDRValue, parseIPValue } from '@nodeagent/proxy-state';

/** The address family of a ruleset: one renderer output is for one family. */
export type IpFamily = 'IPv4' | 'IPv6';

/** A parsed address: the family and its value as a bigint (32 or 128 bits). */
export interface ParsedIP {
  /** Address family. */
  readonly family: IpFamily;
  /** The address as an unsigned integer. */
  readonly value: bigint;
}

const toFamily = (f: 4 | 6): IpFamily => (f === 4 ? 'IPv4' : 'IPv6');
const KEEP_MAPPED = { keepV4Mapped: true } as const;

/**
 * Parses an IPv4 or IPv6 address leniently (as kube-proxy does; surrounding whitespace is
 * ignored and `::ffff:a.b.c.d` stays IPv6); undefined if invalid.
 */
export function parseIP(s: string): ParsedIP | undefined {
  const v = parseIPValue(s.trim(), KEEP_MAPPED);
  return v === null ? undefined : { family: toFamily(v.family), value: v.value };
}

/** Formats an address as Go's `net.IP.String()` does (dotted quad; RFC 5952 for IPv6). */
export function formatIP(ip: ParsedIP): string {
  return formatIPValue({ family: ip.family === 'IPv4' ? 4 : 6, value: ip.value });
}

const CANONICAL_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Parses and re-formats an address; undefined if it is not an IP address. */
export function normalizeIP(s: string): string | undefined {
  // Fast path: an IPv4 address already in canonical form is its own normal form.
  if (CANONICAL_IPV4.test(s)) return s;
  const ip = parseIP(s);
  return ip ? formatIP(ip) : undefined;
}

/** The family of a normalised address. */
export function familyOf(normalized: string): IpFamily {
  return normalized.includes(':') ? 'IPv6' : 'IPv4';
}

/** A parsed CIDR: its network address and prefix length. */
export interface ParsedCIDR {
  /** The network address (host bits cleared). */
  readonly ip: ParsedIP;
  /** Prefix length in bits. */
  readonly prefixLength: number;
}

/** Parses `ip/len` leniently, clearing host bits; undefined if invalid. */
export function parseCIDR(s: string): ParsedCIDR | undefined {
  const c = parseCIDRValue(s.trim(), KEEP_MAPPED);
  if (c === null) return undefined;
  return { ip: { family: toFamily(c.family), value: c.base }, prefixLength: c.prefixLength };
}

/** Formats a CIDR as Go's `net.IPNet.String()` does. */
export function formatCIDR(c: ParsedCIDR): string {
  return `${formatIP(c.ip)}/${c.prefixLength}`;
}

/** Normalises a CIDR string; undefined if invalid. */
export function normalizeCIDR(s: string): string | undefined {
  const c = parseCIDR(s);
  return c ? formatCIDR(c) : undefined;
}

/** True if `ip` lies inside `cidr` (both parsed, same family). */
export function cidrContains(cidr: ParsedCIDR, ip: ParsedIP): boolean {
  if (cidr.ip.family !== ip.family) return false;
  const bits = ip.family === 'IPv4' ? 32 : 128;
  const shift = BigInt(bits - cidr.prefixLength);
  return ip.value >> shift === cidr.ip.value >> shift;
}

/** `ip:port`, with IPv6 in brackets (Go's `net.JoinHostPort`). */
export function joinHostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

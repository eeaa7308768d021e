/**
 * Address arithmetic for the tracer: IPs and CIDRs as bigints, family-aware.
 *
 * @module
 */
import { type IPValue, parseCIDRValue, parseIPValue } from '@nodeagent/proxy-state';

/** A parsed address (`@nodeagent/proxy-state`'s numeric form). */
export type Addr = IPValue;

/** A parsed network. */
export interface Net {
  /** 4 or 6. */
  readonly family: 4 | 6;
  /** Network address. */
  readonly base: bigint;
  /** Prefix length. */
  readonly bits: number;
}

/** Parses an address (canonicalised by proxy-state's parser); null when invalid. */
export function parseAddr(text: string): Addr | null {
  return parseIPValue(text);
}

/**
 * Dotted-quad check without allocation: 4 parts of 1-3 decimal digits, each ≤ 255 (exactly the
 * IPv4 text proxy-state's parser accepts).
 */
function isIPv4Text(text: string): boolean {
  let parts = 0;
  let digits = 0;
  let value = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 46; // a final '.' closes the last part
    if (c === 46) {
      if (digits === 0 || value > 255) return false;
      parts++;
      digits = 0;
      value = 0;
    } else if (c >= 48 && c <= 57) {
      if (++digits > 3) return false;
      value = value * 10 + (c - 48);
    } else return false;
  }
  return parts === 4;
}

/** The family of a valid address (as {@link parseAddr} would parse it), or null; fast for IPv4. */
export function addrFamily(text: string): 4 | 6 | null {
  if (isIPv4Text(text)) return 4;
  return parseAddr(text)?.family ?? null;
}

/** Parses a CIDR, or a bare address as a host network; null when invalid. */
export function parseNet(text: string): Net | null {
  if (!text.includes('/')) {
    const a = parseAddr(text);
    return a === null ? null : { family: a.family, base: a.value, bits: a.family === 4 ? 32 : 128 };
  }
  const c = parseCIDRValue(text);
  return c === null ? null : { family: c.family, base: c.base, bits: c.prefixLength };
}

/** True when `net` contains `addr`. */
export function netContains(net: Net, addr: Addr): boolean {
  if (net.family !== addr.family) return false;
  const width = net.family === 4 ? 32 : 128;
  const shift = BigInt(width - net.bits);
  return addr.value >> shift === net.base >> shift;
}

/** `ip:port`, IPv6 bracketed. */
export function joinHostPort(ip: string, port: number | string): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** Splits `ip:port` / `[ip]:port`. */
export function splitHostPort(s: string): { ip: string; port: number } {
  const cut = s.lastIndexOf(':');
  let ip = s.slice(0, cut);
  if (ip.startsWith('[')) ip = ip.slice(1, -1);
  return { ip, port: Number(s.slice(cut + 1)) };
}

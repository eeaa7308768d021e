/**
 * Address arithmetic for the tracer: IPs and CIDRs as bigints, family-aware.
 *
 * @module
 */
import { parseCIDR, parseIP } from '@nodeagent/proxy-state';

/** A parsed address. */
export interface Addr {
  /** 4 or 6. */
  readonly family: 4 | 6;
  /** The address as an unsigned integer. */
  readonly value: bigint;
}

/** A parsed network. */
export interface Net {
  /** 4 or 6. */
  readonly family: 4 | 6;
  /** Network address. */
  readonly base: bigint;
  /** Prefix length. */
  readonly bits: number;
}

function toBig(text: string, family: 4 | 6): bigint {
  if (family === 4) return text.split('.').reduce((acc, p) => (acc << 8n) | BigInt(Number(p)), 0n);
  const [head = '', tail] = text.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(Number.parseInt(g, 16)), 0n);
}

/** Parses an address (canonicalised by proxy-state's parser); null when invalid. */
export function parseAddr(text: string): Addr | null {
  const p = parseIP(text);
  if (p === null) return null;
  // IPv4-mapped IPv6 or dotted forms are printed canonically by parseIP.
  if (p.family === 6 && p.ip.includes('.')) return null;
  return { family: p.family, value: toBig(p.ip, p.family) };
}

/** Parses a CIDR, or a bare address as a host network; null when invalid. */
export function parseNet(text: string): Net | null {
  if (!text.includes('/')) {
    const a = parseAddr(text);
    return a === null ? null : { family: a.family, base: a.value, bits: a.family === 4 ? 32 : 128 };
  }
  const c = parseCIDR(text);
  if (c === null) return null;
  const [ip = '', bits = '0'] = c.cidr.split('/');
  if (c.family === 6 && ip.includes('.')) return null;
  return { family: c.family, base: toBig(ip, c.family), bits: Number(bits) };
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

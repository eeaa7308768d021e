/**
 * IP address and CIDR parsing with the normalisation kube-proxy applies to API input
 * (`ParseIPSloppy`: IPv4 octets with leading zeros read as decimal, `172.30.0.041` →
 * `172.30.0.41`; CIDRs reduced to their network address, `203.0.113.000/025` →
 * `203.0.113.0/25`) and Go's textual forms (RFC 5952 for IPv6).
 *
 * @module
 */

/** The address family of a ruleset: one renderer output is for one family. */
export type IpFamily = 'IPv4' | 'IPv6';

/** A parsed address: the family and its value as a bigint (32 or 128 bits). */
export interface ParsedIP {
  /** Address family. */
  readonly family: IpFamily;
  /** The address as an unsigned integer. */
  readonly value: bigint;
}

function parseIPv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseIPv6(s: string): bigint | undefined {
  if (!/^[0-9A-Fa-f:.]+$/.test(s)) return undefined;
  const dbl = s.indexOf('::');
  if (dbl !== -1 && s.indexOf('::', dbl + 1) !== -1) return undefined;
  const parseGroups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const groups = part.split(':');
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i]!;
      if (i === groups.length - 1 && g.includes('.')) {
        const v4 = parseIPv4(g);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
        continue;
      }
      if (!/^[0-9A-Fa-f]{1,4}$/.test(g)) return undefined;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  let groups: number[];
  if (dbl === -1) {
    const g = parseGroups(s);
    if (g?.length !== 8) return undefined;
    groups = g;
  } else {
    const head = parseGroups(s.slice(0, dbl));
    const tail = parseGroups(s.slice(dbl + 2));
    if (!head || !tail || head.length + tail.length > 7) return undefined;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(g);
  return v;
}

/** Parses an IPv4 or IPv6 address leniently (as kube-proxy does); undefined if invalid. */
export function parseIP(s: string): ParsedIP | undefined {
  const t = s.trim();
  if (t.includes(':')) {
    const v = parseIPv6(t);
    return v === undefined ? undefined : { family: 'IPv6', value: v };
  }
  const v = parseIPv4(t);
  return v === undefined ? undefined : { family: 'IPv4', value: v };
}

/** Formats an address as Go's `net.IP.String()` does (dotted quad; RFC 5952 for IPv6). */
export function formatIP(ip: ParsedIP): string {
  if (ip.family === 'IPv4') {
    const v = Number(ip.value);
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((ip.value >> BigInt(i * 16)) & 0xffffn));
  // Longest run of ≥ 2 zero groups, leftmost on ties.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (g: number): string => g.toString(16);
  if (bestStart === -1) return groups.map(hex).join(':');
  const head = groups.slice(0, bestStart).map(hex).join(':');
  const tail = groups
    .slice(bestStart + bestLen)
    .map(hex)
    .join(':');
  return `${head}::${tail}`;
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
  const t = s.trim();
  const slash = t.indexOf('/');
  if (slash === -1) return undefined;
  const ip = parseIP(t.slice(0, slash));
  const lenText = t.slice(slash + 1);
  if (!ip || !/^[0-9]{1,3}$/.test(lenText)) return undefined;
  const len = Number(lenText);
  const bits = ip.family === 'IPv4' ? 32 : 128;
  if (len > bits) return undefined;
  const mask = len === 0 ? 0n : ((1n << BigInt(len)) - 1n) << BigInt(bits - len);
  return { ip: { family: ip.family, value: ip.value & mask }, prefixLength: len };
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

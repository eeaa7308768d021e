/**
 * IP and CIDR parsing with kube-proxy's normalisation: IPv4 octets with leading zeros are read
 * as decimal (`172.30.0.041` → `172.30.0.41`, as Go's `ParseIPSloppy`), IPv6 is printed in RFC
 * 5952 form, IPv4-mapped IPv6 (`::ffff:1.2.3.4`) counts as IPv4 (as Go's `To4()`), and CIDRs
 * are masked to their network address (`10.0.0.5/8` → `10.0.0.0/8`).
 *
 * @module
 */
/** An IP family: 4 or 6. */
export type IPFamily = 4 | 6;

/** A parsed, normalised IP address. */
export interface ParsedIP {
  /** The canonical text form. */
  readonly ip: string;
  /** Its family. */
  readonly family: IPFamily;
}

/** A parsed CIDR masked to its network address. */
export interface ParsedCIDR {
  /** The canonical text form `network/prefix`. */
  readonly cidr: string;
  /** Its family. */
  readonly family: IPFamily;
}

function parseIPv4Bytes(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!;
    if (!/^[0-9]{1,3}$/.test(part)) return null;
    const value = Number.parseInt(part, 10);
    if (value > 255) return null;
    bytes[i] = value;
  }
  return bytes;
}

function parseHexGroups(text: string): number[] | null {
  if (text === '') return [];
  const groups: number[] = [];
  for (const group of text.split(':')) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    groups.push(Number.parseInt(group, 16));
  }
  return groups;
}

function parseIPv6Bytes(text: string): Uint8Array | null {
  let body = text;
  const lastColon = body.lastIndexOf(':');
  if (body.indexOf('.', lastColon) > 0) {
    // An embedded IPv4 tail ('::ffff:1.2.3.4') becomes the last two hex groups.
    const tail = parseIPv4Bytes(body.slice(lastColon + 1));
    if (tail === null) return null;
    const high = ((tail[0]! << 8) | tail[1]!).toString(16);
    const low = ((tail[2]! << 8) | tail[3]!).toString(16);
    body = `${body.slice(0, lastColon + 1)}${high}:${low}`;
  }
  const ellipsis = body.indexOf('::');
  let groups: number[];
  if (ellipsis >= 0) {
    if (body.indexOf('::', ellipsis + 1) >= 0) return null;
    const head = parseHexGroups(body.slice(0, ellipsis));
    const rest = parseHexGroups(body.slice(ellipsis + 2));
    if (head === null || rest === null) return null;
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return null;
    groups = [...head, ...new Array<number>(missing).fill(0), ...rest];
  } else {
    const all = parseHexGroups(body);
    if (all === null || all.length !== 8) return null;
    groups = all;
  }
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  return bytes;
}

function isV4Mapped(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

function formatIPv6(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  // RFC 5952: compress the longest run (≥ 2) of zero groups, the first one on a tie.
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

function parseBytes(text: string): Uint8Array | null {
  if (text.includes(':')) return parseIPv6Bytes(text);
  return parseIPv4Bytes(text);
}

function toParsed(bytes: Uint8Array): ParsedIP {
  if (bytes.length === 4) return { ip: bytes.join('.'), family: 4 };
  if (isV4Mapped(bytes)) return { ip: Array.from(bytes.subarray(12)).join('.'), family: 4 };
  return { ip: formatIPv6(bytes), family: 6 };
}

/** Parses an IP address as kube-proxy does; null when `text` is not an IP (zones such as `%eth0` are refused). */
export function parseIP(text: string): ParsedIP | null {
  const bytes = parseBytes(text);
  return bytes === null ? null : toParsed(bytes);
}

function parseCIDRBytes(text: string, keepV4Mapped: boolean): { bytes: Uint8Array; prefix: number } | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const bytes = parseBytes(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (bytes === null || !/^[0-9]{1,3}$/.test(prefixText)) return null;
  const prefix = Number.parseInt(prefixText, 10);
  if (!keepV4Mapped && bytes.length === 16 && isV4Mapped(bytes)) return null;
  if (prefix > bytes.length * 8) return null;
  for (let bit = prefix; bit < bytes.length * 8; bit++) {
    bytes[bit >> 3]! &= ~(0x80 >> (bit & 7));
  }
  return { bytes, prefix };
}

/** Parses a CIDR (`ip/prefix`, prefix leading zeros allowed) and masks it to its network; null when invalid. */
export function parseCIDR(text: string): ParsedCIDR | null {
  const c = parseCIDRBytes(text, false);
  if (c === null) return null;
  const parsed = toParsed(c.bytes);
  return { cidr: `${parsed.ip}/${c.prefix}`, family: parsed.family };
}

/** An IP address as a number, for containment checks and arithmetic. */
export interface IPValue {
  /** Its family: 32-bit value for 4, 128-bit for 6. */
  readonly family: IPFamily;
  /** The address as an unsigned integer. */
  readonly value: bigint;
}

/** A CIDR as numbers: its network address (host bits cleared) and prefix length. */
export interface CIDRValue {
  /** Its family. */
  readonly family: IPFamily;
  /** The network address as an unsigned integer. */
  readonly base: bigint;
  /** Prefix length in bits. */
  readonly prefixLength: number;
}

/** Options of {@link parseIPValue} and {@link parseCIDRValue}. */
export interface IPValueOptions {
  /**
   * Keep an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) as a 128-bit IPv6 value (and accept
   * such CIDRs) instead of reading it as IPv4 like {@link parseIP} does.
   * @default false
   */
  readonly keepV4Mapped?: boolean;
}

function bytesValue(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/** Parses an IP address with {@link parseIP}'s rules to its numeric value; null when invalid. */
export function parseIPValue(text: string, options: IPValueOptions = {}): IPValue | null {
  const bytes = parseBytes(text);
  if (bytes === null) return null;
  if (bytes.length === 4) return { family: 4, value: bytesValue(bytes) };
  if (!options.keepV4Mapped && isV4Mapped(bytes)) return { family: 4, value: bytesValue(bytes.subarray(12)) };
  return { family: 6, value: bytesValue(bytes) };
}

/** Parses a CIDR with {@link parseCIDR}'s rules (masked to its network) to numbers; null when invalid. */
export function parseCIDRValue(text: string, options: IPValueOptions = {}): CIDRValue | null {
  const c = parseCIDRBytes(text, options.keepV4Mapped === true);
  if (c === null) return null;
  return { family: c.bytes.length === 4 ? 4 : 6, base: bytesValue(c.bytes), prefixLength: c.prefix };
}

/** True when `ip` lies inside `cidr` (never across families). */
export function cidrValueContains(cidr: CIDRValue, ip: IPValue): boolean {
  if (cidr.family !== ip.family) return false;
  const shift = BigInt((ip.family === 4 ? 32 : 128) - cidr.prefixLength);
  return ip.value >> shift === cidr.base >> shift;
}

/**
 * True for a loopback address, as Go's `net.IP.IsLoopback`: 127.0.0.0/8 (also IPv4-mapped,
 * `::ffff:127.0.0.1`) and `::1`; false for anything that does not parse.
 */
export function isLoopbackIP(text: string): boolean {
  const v = parseIPValue(text);
  if (v === null) return false;
  return v.family === 4 ? v.value >> 24n === 127n : v.value === 1n;
}

/**
 * The canonical text of a numeric address (dotted quad; RFC 5952 for IPv6, where an
 * IPv4-mapped value kept by `keepV4Mapped` prints as `::ffff:102:304`).
 */
export function formatIPValue(ip: IPValue): string {
  const len = ip.family === 4 ? 4 : 16;
  const bytes = new Uint8Array(len);
  let v = ip.value;
  for (let i = len - 1; i >= 0; i--) {
    bytes[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return ip.family === 4 ? bytes.join('.') : formatIPv6(bytes);
}

/**
 * A text that was required to be an IP address or a CIDR and is not. The message names the
 * field ({@link InvalidIPError.field}), quotes the input and says what would be valid. It is a
 * `TypeError` (a value of the wrong form), so callers that caught the tracers' earlier
 * `TypeError`s still catch it.
 */
export class InvalidIPError extends TypeError {
  override readonly name = 'InvalidIPError';
  /**
   * @param input - The text that did not parse.
   * @param expected - What it should have been.
   * @param field - What the text is (`'spec.clusterIP'`, `'--bind-address'`); `'value'` when unset.
   */
  constructor(
    readonly input: string,
    readonly expected: 'IP address' | 'CIDR',
    readonly field = 'value',
  ) {
    super(
      `${field} ${JSON.stringify(input)} is not a valid ${expected}${
        expected === 'CIDR' ? ' (want address/prefix, e.g. 10.0.0.0/8 or fd00::/64)' : ''
      }`,
    );
  }
}

/** {@link parseIP} that throws {@link InvalidIPError} naming `field` instead of returning null. */
export function mustParseIP(text: string, field?: string): ParsedIP {
  const p = parseIP(text);
  if (p === null) throw new InvalidIPError(text, 'IP address', field);
  return p;
}

/** {@link parseCIDR} that throws {@link InvalidIPError} naming `field` instead of returning null. */
export function mustParseCIDR(text: string, field?: string): ParsedCIDR {
  const c = parseCIDR(text);
  if (c === null) throw new InvalidIPError(text, 'CIDR', field);
  return c;
}

/** The family of an IP address text (IPv4-mapped IPv6 counts as 4, as {@link parseIP}); null when not an IP. */
export function ipFamilyOf(text: string): IPFamily | null {
  return parseIP(text)?.family ?? null;
}

/**
 * True when the address `ip` lies inside `cidr` (both as text, parsed with {@link parseIP}'s
 * rules); false when either is invalid or they are of different families.
 */
export function cidrContains(cidr: string, ip: string): boolean {
  const c = parseCIDRValue(cidr);
  const a = parseIPValue(ip);
  return c !== null && a !== null && cidrValueContains(c, a);
}

/**
 * A CIDR, or a bare address as its host network (`/32`, `/128`), as ipset, nft and iptables'
 * `-s` read them; null when invalid.
 */
export function parseCIDROrHostValue(text: string, options: IPValueOptions = {}): CIDRValue | null {
  if (text.includes('/')) return parseCIDRValue(text, options);
  const a = parseIPValue(text, options);
  return a === null ? null : { family: a.family, base: a.value, prefixLength: a.family === 4 ? 32 : 128 };
}

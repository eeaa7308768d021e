/**
 * The hash kube-proxy puts in its per-service and per-endpoint chain names: the first
 * characters of the RFC 4648 base32 encoding of SHA-256 (iptables' `portProtoHash` and
 * `servicePortEndpointChainName` keep 16, nftables' `hashAndTruncate` keeps 8).
 *
 * @module
 */
import { hash } from 'node:crypto';

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

/**
 * `base32(sha256(input))[:length]` (Go's `base32.StdEncoding`), as kube-proxy names chains.
 * @param input - The text hashed (UTF-8).
 * @param length - Characters kept: a multiple of 4 from 4 to 48 (16 for iptables, 8 for nftables).
 */
export function chainNameHash(input: string, length: number): string {
  if (!Number.isInteger(length) || length < 4 || length > 48 || length % 4 !== 0) {
    throw new RangeError(`chain name hash length ${length} is not a multiple of 4 in 4-48`);
  }
  // One-shot hashing with hex output is several times cheaper than createHash().digest() for
  // the ~100,000 short names of a render at 10,000 services; 5 hex digits = 4 base32 characters.
  const hex = hash('sha256', input, 'hex');
  let out = '';
  for (let at = 0; out.length < length; at += 5) out += base32Of5Hex(hex, at);
  return out;
}

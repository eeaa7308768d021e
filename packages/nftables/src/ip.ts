/**
 * nft's address text on top of `@nodeagent/core`'s parser: set elements and source ranges
 * may be a CIDR or a bare address, which nft treats as a host network.
 *
 * @module
 */
import { type CIDRValue, parseCIDRValue, parseIPValue } from '@nodeagent/core';

/** A CIDR, or a bare address as its host network (`/32`, `/128`), as nft reads them; null when invalid. */
export function cidrOrHostValue(text: string): CIDRValue | null {
  if (text.includes('/')) return parseCIDRValue(text);
  const a = parseIPValue(text);
  return a === null ? null : { family: a.family, base: a.value, prefixLength: a.family === 4 ? 32 : 128 };
}

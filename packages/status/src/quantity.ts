/**
 * Resource quantities as the node status needs them: parsing `--kube-reserved`-style values
 * (`100m`, `1Gi`, `10%` is not a quantity) and writing values in the canonical form the API
 * server would (`16331052Ki`, `1900m`, `110`).
 *
 * @module
 */

/** A text that is not a Kubernetes quantity. */
export class InvalidQuantityError extends Error {
  override readonly name = 'InvalidQuantityError';
  /** @param quantity the rejected text. @param what where it came from (`kube-reserved memory`). */
  constructor(
    readonly quantity: string,
    what: string,
  ) {
    super(
      `${what}: invalid quantity ${JSON.stringify(quantity)}: expected e.g. "100m", "1.5", "128Mi", "2G"`,
    );
  }
}

const PATTERN = /^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;
const BINARY: Readonly<Record<string, bigint>> = {
  Ki: 1024n,
  Mi: 1024n ** 2n,
  Gi: 1024n ** 3n,
  Ti: 1024n ** 4n,
  Pi: 1024n ** 5n,
  Ei: 1024n ** 6n,
};
const DECIMAL: Readonly<Record<string, number>> = { m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** The quantity × 1000, rounded up (upstream `MilliValue`). @throws InvalidQuantityError */
export function parseMilli(text: string, what = 'quantity'): bigint {
  const m = PATTERN.exec(text.trim());
  if (m === null) throw new InvalidQuantityError(text, what);
  const [, digits = '', suffix = ''] = m;
  const [whole = '', frac = ''] = digits.split('.');
  let num = BigInt((whole || '0') + frac) * 1000n;
  let den = 10n ** BigInt(frac.length);
  const binary = BINARY[suffix];
  if (binary !== undefined) num *= binary;
  else {
    const exp = /^[eE]/.test(suffix) ? Number(suffix.slice(1)) : (DECIMAL[suffix] ?? 0);
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  }
  return (num + den - 1n) / den;
}

/** The quantity rounded up to an integer (upstream `Value`). @throws InvalidQuantityError */
export function parseValue(text: string, what = 'quantity'): bigint {
  return (parseMilli(text, what) + 999n) / 1000n;
}

/** Bytes in the canonical binary form: the largest of Ki…Ei that divides exactly, else plain. */
export function formatBinary(bytes: bigint): string {
  if (bytes <= 0n) return '0';
  for (const suffix of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki']) {
    const unit = BINARY[suffix] as bigint;
    if (bytes % unit === 0n) return `${bytes / unit}${suffix}`;
  }
  return String(bytes);
}

/** Millis in the canonical decimal form: `2`, `1900m`. */
export function formatMilli(milli: bigint): string {
  if (milli <= 0n) return '0';
  return milli % 1000n === 0n ? String(milli / 1000n) : `${milli}m`;
}

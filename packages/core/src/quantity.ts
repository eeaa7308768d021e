/**
 * Kubernetes resource quantities (`100m`, `0.5`, `128Mi`, `1G`, `1e3`) as exact values, the
 * way `resource.Quantity` reads them: `milliValue` and `value` round up, like upstream.
 *
 * @module
 */

/** A quantity string that is not a valid Kubernetes quantity. */
export class InvalidQuantityError extends Error {
  override readonly name = 'InvalidQuantityError';
  /** @param quantity the rejected text */
  constructor(readonly quantity: string) {
    super(
      `invalid resource quantity ${JSON.stringify(quantity)}: expected e.g. "100m", "1.5", "128Mi", "2G"`,
    );
  }
}

const BINARY: Readonly<Record<string, bigint>> = {
  Ki: 1024n,
  Mi: 1024n ** 2n,
  Gi: 1024n ** 3n,
  Ti: 1024n ** 4n,
  Pi: 1024n ** 5n,
  Ei: 1024n ** 6n,
};
const DECIMAL_EXP: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/** An exact rational `num / den` (den > 0). */
interface Rational {
  readonly num: bigint;
  readonly den: bigint;
}

const PATTERN =
  /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?[0-9]+))?$/;

function parse(text: string | number): Rational {
  const s = typeof text === 'number' ? String(text) : text.trim();
  const m = PATTERN.exec(s);
  if (m === null) throw new InvalidQuantityError(String(text));
  const [, sign, digits = '', suffix = '', exp] = m;
  const [whole = '', frac = ''] = digits.split('.');
  let num = BigInt((whole || '0') + frac) * (sign === '-' ? -1n : 1n);
  let den = 10n ** BigInt(frac.length);
  const binary = BINARY[suffix];
  if (binary !== undefined) num *= binary;
  else {
    const e = exp !== undefined ? Number(exp) : (DECIMAL_EXP[suffix] ?? 0);
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  }
  return { num, den };
}

function ceilDiv(num: bigint, den: bigint): bigint {
  const q = num / den;
  return num % den !== 0n && num > 0n ? q + 1n : q;
}

/** The quantity × 1000, rounded up (upstream `Quantity.MilliValue`). @throws InvalidQuantityError */
export function milliValue(quantity: string | number | undefined): bigint {
  if (quantity === undefined) return 0n;
  const r = parse(quantity);
  return ceilDiv(r.num * 1000n, r.den);
}

/** The quantity rounded up to an integer (upstream `Quantity.Value`). @throws InvalidQuantityError */
export function quantityValue(quantity: string | number | undefined): bigint {
  if (quantity === undefined) return 0n;
  const r = parse(quantity);
  return ceilDiv(r.num, r.den);
}

/** Whether `quantity` parses as a Kubernetes quantity. */
export function isValidQuantity(quantity: string): boolean {
  return PATTERN.test(quantity.trim());
}

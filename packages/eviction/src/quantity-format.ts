/**
 * Printing integer quantities as `resource.Quantity.String()` does for the two formats the
 * eviction manager uses: BinarySI (`100Mi`, `1536`) and DecimalSI (`5k`, `1234`).
 *
 * @module
 */

/** Quantity formats (upstream `resource.Format`). */
export type QuantityFormat = 'BinarySI' | 'DecimalSI';

const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;
const DECIMAL_SUFFIXES = ['', 'k', 'M', 'G', 'T', 'P', 'E'] as const;

/**
 * The canonical text of an integer quantity: the largest suffix that divides it exactly.
 * Binary values between -1024 and 1024 print as plain decimals, as upstream does.
 */
export function formatQuantity(value: bigint, format: QuantityFormat): string {
  if (value === 0n) return '0';
  const negative = value < 0n;
  let n = negative ? -value : value;
  let i = 0;
  if (format === 'BinarySI') {
    if (n < 1024n) return String(value);
    while (i < BINARY_SUFFIXES.length - 1 && n % 1024n === 0n) {
      n /= 1024n;
      i += 1;
    }
    return `${negative ? '-' : ''}${n}${BINARY_SUFFIXES[i]}`;
  }
  while (i < DECIMAL_SUFFIXES.length - 1 && n % 1000n === 0n) {
    n /= 1000n;
    i += 1;
  }
  return `${negative ? '-' : ''}${n}${DECIMAL_SUFFIXES[i]}`;
}

/** The format a parsed quantity keeps: binary when its suffix is binary (`Ki`…`Ei`). */
export function formatOfQuantityText(text: string): QuantityFormat {
  return /[KMGTPE]i$/.test(text.trim()) ? 'BinarySI' : 'DecimalSI';
}

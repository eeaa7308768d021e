/**
 * Endpoint-selection probabilities formatted as kube-proxy does (Go's `%0.10f` of `1/n`).
 *
 * @module
 */

/**
 * Rounds the exact decimal value of a double to `digits` fractional digits, ties to even,
 * which is what Go's `strconv` does and what `Number.prototype.toFixed` does not
 * (toFixed breaks exact ties upwards: 1/2048 → `0.0004882813`, Go → `0.0004882812`).
 */
function formatFixedHalfEven(x: number, digits: number): string {
  // toFixed(100) is the exact expansion for the magnitudes we format (1/n, n ≤ 2^40).
  const exact = x.toFixed(100);
  const dot = exact.indexOf('.');
  const keep = exact.slice(0, dot + 1 + digits);
  const rest = exact.slice(dot + 1 + digits);
  const first = rest.charCodeAt(0) - 48;
  const tail = rest.slice(1);
  const tie = first === 5 && /^0*$/.test(tail);
  const lastDigit = keep.charCodeAt(keep.length - 1) - 48;
  const roundUp = first > 5 || (first === 5 && !tie) || (tie && lastDigit % 2 === 1);
  if (!roundUp) return keep;
  // Add one unit in the last place, carrying through the digits.
  const chars = keep.split('');
  for (let i = chars.length - 1; i >= 0; i--) {
    if (chars[i] === '.') continue;
    if (chars[i] === '9') {
      chars[i] = '0';
      continue;
    }
    chars[i] = String.fromCharCode(chars[i]!.charCodeAt(0) + 1);
    return chars.join('');
  }
  return '1' + chars.join('');
}

/**
 * kube-proxy's `computeProbability(n)`: `1/n` with ten decimals (`1` → `1.0000000000`,
 * `10` → `0.1000000000`, `100001` → `0.0000099999`).
 * @param n number of endpoints still to choose from (≥ 1).
 */
export function computeProbability(n: number): string {
  return formatFixedHalfEven(1 / n, 10);
}

/** A per-renderer cache of {@link computeProbability} results (kube-proxy keeps one too). */
export class ProbabilityCache {
  readonly #cache: string[] = [];

  /** The formatted probability `1/n`. */
  get(n: number): string {
    let s = this.#cache[n];
    if (s === undefined) {
      s = computeProbability(n);
      this.#cache[n] = s;
    }
    return s;
  }
}

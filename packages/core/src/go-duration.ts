/**
 * Go's `time.Duration.String()` format, so health messages read exactly like the kubelet's
 * (`pleg was last seen active 3m0.1s ago; threshold is 3m0s`).
 *
 * @module
 */

const NS_PER_US = 1_000;
const NS_PER_MS = 1_000_000;
const NS_PER_S = 1_000_000_000;

/** `value / 10^prec` with trailing zeros (and a bare dot) removed, as Go's `fmtFrac`+`fmtInt`. */
function fraction(value: number, prec: number): string {
  const unit = 10 ** prec;
  const whole = Math.floor(value / unit);
  const frac = value % unit;
  if (frac === 0) return String(whole);
  const digits = String(frac).padStart(prec, '0').replace(/0+$/, '');
  return `${whole}.${digits}`;
}

/**
 * Formats a duration given in milliseconds (rounded to whole nanoseconds) as Go prints a
 * `time.Duration`: `0s`, `750ns`, `1.5µs`, `250ms`, `1.5s`, `3m0.1s`, `1h0m0s`.
 */
export function formatGoDuration(ms: number): string {
  const totalNs = Math.round(ms * NS_PER_MS);
  if (totalNs === 0) return '0s';
  const sign = totalNs < 0 ? '-' : '';
  const ns = Math.abs(totalNs);
  if (ns < NS_PER_S) {
    if (ns < NS_PER_US) return `${sign}${ns}ns`;
    if (ns < NS_PER_MS) return `${sign}${fraction(ns, 3)}µs`;
    return `${sign}${fraction(ns, 6)}ms`;
  }
  const seconds = `${fraction(ns % (60 * NS_PER_S), 9)}s`;
  const totalMinutes = Math.floor(ns / (60 * NS_PER_S));
  if (totalMinutes === 0) return `${sign}${seconds}`;
  const minutes = totalMinutes % 60;
  const hours = Math.floor(totalMinutes / 60);
  return hours === 0 ? `${sign}${minutes}m${seconds}` : `${sign}${hours}h${minutes}m${seconds}`;
}

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

/** Thrown by {@link parseGoDuration} for text that Go's `time.ParseDuration` refuses. */
export class InvalidDurationError extends Error {
  override readonly name = 'InvalidDurationError';
  /** @param text the refused input. */
  constructor(readonly text: string) {
    super(`invalid duration ${JSON.stringify(text)}: want a Go duration such as 300ms, 1.5h or 2h45m`);
  }
}

/**
 * Parses a Go duration (`time.ParseDuration`: an optional sign, then one or more decimal
 * numbers each with a unit `ns`, `us`/`µs`, `ms`, `s`, `m`, `h`, e.g. `1m30s`, `-1.5h`,
 * `300ms`; a bare `0` is allowed) into milliseconds.
 *
 * @throws {@link InvalidDurationError} for anything else (`10`, `1d`, `''`, `1.s5`).
 *
 * @example
 * ```ts
 * parseGoDuration('1m30s'); // 90_000
 * ```
 */
export function parseGoDuration(text: string): number {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw new InvalidDurationError(text);
  let totalMs = 0;
  const term = /^(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (rest !== '') {
    const match = term.exec(rest);
    if (match === null) throw new InvalidDurationError(text);
    totalMs += Number(match[1]) * (UNIT_MS[match[2] as string] as number);
    rest = rest.slice(match[0].length);
  }
  return sign * totalMs;
}

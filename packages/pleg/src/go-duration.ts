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

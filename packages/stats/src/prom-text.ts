/**
 * The Prometheus text exposition format (0.0.4) as client_golang's gatherer writes it:
 * families sorted by name, series sorted by label values, label pairs sorted by name, values
 * in Go's shortest `%g` form (`1e+06`, `1.6243962483020916e+09`), optional millisecond
 * timestamps, families without series left out.
 *
 * @module
 */

/** One series. */
export interface PromSample {
  /** Label pairs (any order; rendered sorted by name). */
  readonly labels: readonly (readonly [string, string])[];
  /** The value. */
  readonly value: number;
  /** Timestamp, ms since the epoch. */
  readonly timestampMs?: number;
}

/** One metric family. */
export interface PromFamily {
  /** Metric name. */
  readonly name: string;
  /** HELP text (stability prefix included, e.g. `[STABLE] ...`). */
  readonly help: string;
  /** TYPE. */
  readonly type: 'counter' | 'gauge';
  /** Series. */
  readonly samples: PromSample[];
}

/** A number as Go's `strconv.FormatFloat(v, 'g', -1, 64)` writes it (client_golang's value format). */
export function formatPromValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const exp = v.toExponential(); // shortest round-trip digits
  const e = exp.indexOf('e');
  const exponent = Number(exp.slice(e + 1));
  if (exponent < -4 || exponent >= 6) {
    const mantissa = exp.slice(0, e);
    const sign = exponent < 0 ? '-' : '+';
    const abs = Math.abs(exponent);
    return `${mantissa}e${sign}${abs < 10 ? `0${abs}` : abs}`;
  }
  return String(v);
}

const escapeLabel = (v: string): string =>
  v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function compareSamples(a: PromSample, b: PromSample): number {
  const n = Math.min(a.labels.length, b.labels.length);
  for (let i = 0; i < n; i++) {
    const av = (a.labels[i] as readonly [string, string])[1];
    const bv = (b.labels[i] as readonly [string, string])[1];
    if (av !== bv) return av < bv ? -1 : 1;
  }
  return a.labels.length - b.labels.length;
}

/** Renders families in gatherer order. */
export function renderFamilies(families: readonly PromFamily[]): string {
  const parts: string[] = [];
  const sorted = [...families].filter((f) => f.samples.length > 0).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const f of sorted) {
    parts.push(`# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`);
    const samples = f.samples.map((s) => ({
      ...s,
      labels: [...s.labels].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)),
    }));
    samples.sort(compareSamples);
    for (const s of samples) {
      let line = f.name;
      if (s.labels.length > 0) {
        line += `{${s.labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
      }
      line += ` ${formatPromValue(s.value)}`;
      if (s.timestampMs !== undefined) line += ` ${Math.floor(s.timestampMs)}`;
      parts.push(`${line}\n`);
    }
  }
  return parts.join('');
}

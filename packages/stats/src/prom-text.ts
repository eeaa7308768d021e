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

const NEEDS_ESCAPE = /[\\\n"]/;
const escapeLabel = (v: string): string =>
  NEEDS_ESCAPE.test(v) ? v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : v;
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

type Labels = readonly (readonly [string, string])[];

/** A label set sorted by name and rendered once (`{a="x",b="y"}`), shared by every series using the same array. */
interface PreparedLabels {
  readonly sorted: Labels;
  readonly text: string;
}

const byName = (x: readonly [string, string], y: readonly [string, string]): number =>
  x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0;

function sortedByName(labels: Labels): Labels {
  for (let i = 1; i < labels.length; i++) {
    if (byName(labels[i - 1] as readonly [string, string], labels[i] as readonly [string, string]) > 0) {
      return [...labels].sort(byName);
    }
  }
  return labels;
}

function compareLabelValues(a: Labels, b: Labels): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const av = (a[i] as readonly [string, string])[1];
    const bv = (b[i] as readonly [string, string])[1];
    if (av !== bv) return av < bv ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * Renders families in gatherer order. Series that share one label array (a container's labels
 * on each of its metrics) have it sorted and escaped once.
 */
export function renderFamilies(families: readonly PromFamily[]): string {
  const parts: string[] = [];
  const prepared = new Map<Labels, PreparedLabels>();
  const prepare = (labels: Labels): PreparedLabels => {
    let p = prepared.get(labels);
    if (p === undefined) {
      const sorted = sortedByName(labels);
      const text =
        sorted.length === 0 ? '' : `{${sorted.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
      p = { sorted, text };
      prepared.set(labels, p);
    }
    return p;
  };
  const sorted = [...families].filter((f) => f.samples.length > 0).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const f of sorted) {
    parts.push(`# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`);
    const rows = f.samples.map((s) => ({ s, p: prepare(s.labels) }));
    rows.sort((a, b) => compareLabelValues(a.p.sorted, b.p.sorted));
    for (const { s, p } of rows) {
      const ts = s.timestampMs === undefined ? '' : ` ${Math.floor(s.timestampMs)}`;
      parts.push(`${f.name}${p.text} ${formatPromValue(s.value)}${ts}\n`);
    }
  }
  return parts.join('');
}

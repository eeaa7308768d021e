/**
 * Timestamps as the API server stores them: `metav1.Time` is RFC 3339 with whole seconds,
 * `metav1.MicroTime` (Lease `renewTime`) RFC 3339 with microseconds.
 *
 * @module
 */

/** `ms` since the epoch as RFC 3339 with whole seconds (`2025-01-02T03:04:05Z`), truncated. */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `ms` since the epoch as a `MicroTime` (`2025-01-02T03:04:05.678000Z`). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

const FRACTION = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A `metav1.Time` value (RFC 3339 string, possibly with a fraction, or a `Date`) truncated to
 * whole seconds in UTC, as the API server would store it (upstream `Time.Rfc3339Copy`).
 * Anything else is returned unchanged.
 */
export function truncateTime(value: unknown): unknown {
  if (value instanceof Date) return rfc3339Seconds(value.getTime());
  if (typeof value !== 'string') return value;
  const m = FRACTION.exec(value);
  if (m === null) return value;
  if (m[2] === 'Z') return `${m[1]}Z`;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value : rfc3339Seconds(ms);
}

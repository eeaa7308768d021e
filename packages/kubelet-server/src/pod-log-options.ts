/**
 * `PodLogOptions` from a query string and its validation, as the kubelet decodes and checks
 * `/containerLogs` requests (v1 `PodLogOptions`, `ValidatePodLogOptions`). The legacy `tail`
 * parameter maps to `tailLines` (`tail=all` means no limit), as upstream.
 *
 * @module
 */

/** The v1 `PodLogOptions` the kubelet reads. */
export interface PodLogOptions {
  /** Container to read (apiserver side; the kubelet takes it from the path). */
  readonly container?: string;
  /** Keep streaming new lines until the container stops or the client goes. */
  readonly follow: boolean;
  /** The previous instance of the container. */
  readonly previous: boolean;
  /** Only lines newer than this many seconds. */
  readonly sinceSeconds?: number;
  /** Only lines at or after this time (RFC 3339 as sent). */
  readonly sinceTime?: string;
  /** Prefix every line with its RFC3339Nano timestamp. */
  readonly timestamps: boolean;
  /** Only the last N lines. */
  readonly tailLines?: number;
  /** Stop after this many bytes. */
  readonly limitBytes?: number;
  /** `insecureSkipTLSVerifyBackend` (apiserver to kubelet). */
  readonly insecureSkipTLSVerifyBackend: boolean;
}

/** A query parameter that does not decode (the kubelet answers 400 `Unable to decode query.`). */
export class PodLogOptionsDecodeError extends Error {
  override readonly name = 'PodLogOptionsDecodeError';
}

const GO_BOOL: Readonly<Record<string, boolean>> = {
  '1': true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  '0': false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
};

function bool(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null || v === '') return false;
  const b = GO_BOOL[v];
  if (b === undefined)
    throw new PodLogOptionsDecodeError(`strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
  return b;
}

function int(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^[+-]?[0-9]+$/.test(v))
    throw new PodLogOptionsDecodeError(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Number(v);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Nanoseconds since the epoch of an RFC 3339 (optionally fractional) timestamp; `undefined` when malformed. */
export function rfc3339ToNs(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${zone === 'z' ? 'Z' : zone}`);
  if (Number.isNaN(ms)) return undefined;
  const nanos = BigInt((frac ?? '.').slice(1).padEnd(9, '0').slice(0, 9) || '0');
  return BigInt(ms) * 1_000_000n + nanos;
}

/**
 * Decodes the query of a `/containerLogs` (or `pods/log`) request.
 *
 * @throws {@link PodLogOptionsDecodeError} for a parameter of the wrong type, e.g.
 * `sinceTime=garbage` or `tailLines=x`.
 */
export function parsePodLogOptions(query: URLSearchParams): PodLogOptions {
  const q = new URLSearchParams(query);
  const tail = q.get('tail');
  if (tail !== null && tail !== '') {
    if (tail === 'all') q.delete('tailLines');
    else q.set('tailLines', tail);
  }
  const sinceTime = q.get('sinceTime');
  if (sinceTime !== null && sinceTime !== '' && rfc3339ToNs(sinceTime) === undefined) {
    throw new PodLogOptionsDecodeError(
      `parsing time ${JSON.stringify(sinceTime)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(sinceTime)} as "2006"`,
    );
  }
  const container = q.get('container');
  const sinceSeconds = int(q, 'sinceSeconds');
  const tailLines = int(q, 'tailLines');
  const limitBytes = int(q, 'limitBytes');
  return {
    follow: bool(q, 'follow'),
    previous: bool(q, 'previous'),
    timestamps: bool(q, 'timestamps'),
    insecureSkipTLSVerifyBackend: bool(q, 'insecureSkipTLSVerifyBackend'),
    ...(container !== null && container !== '' ? { container } : {}),
    ...(sinceSeconds !== undefined ? { sinceSeconds } : {}),
    ...(sinceTime !== null && sinceTime !== '' ? { sinceTime } : {}),
    ...(tailLines !== undefined ? { tailLines } : {}),
    ...(limitBytes !== undefined ? { limitBytes } : {}),
  };
}

/**
 * The field errors of `opts` (upstream `ValidatePodLogOptions`), each as Go's
 * `field.Error.Error()` renders it; empty when valid.
 */
export function validatePodLogOptions(opts: PodLogOptions): string[] {
  const errs: string[] = [];
  if (opts.tailLines !== undefined && opts.tailLines < 0) {
    errs.push(`tailLines: Invalid value: ${opts.tailLines}: must be greater than or equal to 0`);
  }
  if (opts.limitBytes !== undefined && opts.limitBytes < 1) {
    errs.push(`limitBytes: Invalid value: ${opts.limitBytes}: must be greater than 0`);
  }
  if (opts.sinceSeconds !== undefined && opts.sinceTime !== undefined) {
    errs.push(': Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified');
  } else if (opts.sinceSeconds !== undefined && opts.sinceSeconds < 1) {
    errs.push(`sinceSeconds: Invalid value: ${opts.sinceSeconds}: must be greater than 0`);
  }
  return errs;
}

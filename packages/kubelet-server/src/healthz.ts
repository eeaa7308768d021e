/**
 * The healthz handler of the kubelet's servers (apiserver `healthz` format): `/healthz` runs
 * every check and answers `ok` (200) or 500 with `[+]name ok` / `[-]name failed: reason`
 * lines; `?verbose` lists the checks on success too and `?exclude=name` skips one;
 * `/healthz/<name>` runs one check.
 *
 * @module
 */

/** One named check: `undefined` when healthy, else the reason it is not. */
export type HealthCheck = () => string | undefined;

/** A rendered healthz answer. */
export interface HealthzResponse {
  /** HTTP status code. */
  readonly code: number;
  /** Plain-text body. */
  readonly body: string;
}

/** The `ping` check: always healthy. */
export const pingHealthz: HealthCheck = () => undefined;

/** The `log` check (upstream `LogHealthz`): healthy while the process can log; always healthy here. */
export const logHealthz: HealthCheck = () => undefined;

/** Renders `/healthz` over `checks`, skipping the names in `exclude`. */
export function renderHealthz(
  checks: Readonly<Record<string, HealthCheck>>,
  verbose: boolean,
  exclude: readonly string[] = [],
): HealthzResponse {
  const lines: string[] = [];
  let failed = false;
  for (const [name, check] of Object.entries(checks)) {
    if (exclude.includes(name)) {
      lines.push(`[+]${name} excluded: ok`);
      continue;
    }
    const reason = check();
    if (reason === undefined) lines.push(`[+]${name} ok`);
    else {
      failed = true;
      lines.push(`[-]${name} failed: ${reason}`);
    }
  }
  if (!failed && !verbose) return { code: 200, body: 'ok' };
  lines.push(failed ? 'healthz check failed' : 'healthz check passed');
  return { code: failed ? 500 : 200, body: `${lines.join('\n')}\n` };
}

/**
 * Answers a healthz path (`/healthz`, `/healthz/`, `/healthz/<name>`) with its query, or
 * `undefined` when `pathname` is not under `/healthz`.
 */
export function serveHealthz(
  checks: Readonly<Record<string, HealthCheck>>,
  pathname: string,
  query: URLSearchParams,
): HealthzResponse | undefined {
  if (pathname === '/healthz' || pathname === '/healthz/') {
    return renderHealthz(checks, query.has('verbose'), query.getAll('exclude'));
  }
  if (!pathname.startsWith('/healthz/')) return undefined;
  const name = pathname.slice('/healthz/'.length);
  const check = checks[name];
  if (check === undefined) return { code: 404, body: '404 page not found\n' };
  const reason = check();
  return reason === undefined
    ? { code: 200, body: 'ok' }
    : { code: 500, body: `internal server error: ${reason}\n` };
}

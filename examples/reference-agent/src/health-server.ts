/**
 * `/healthz` in the apiserver/kubelet healthz format: `ok` (200) when every check passes,
 * else 500 with `[-]<name> failed: <reason>` lines; `?verbose` lists every check. Checks:
 * `ping`, `pleg` (PLEG relisted within its threshold) and `syncloop` (housekeeping ran within
 * max(2 × syncFrequency, 5 min), as the kubelet's `SyncLoopHealthCheck`).
 *
 * @module
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One named check: `undefined` when healthy, else the reason. */
export type HealthCheck = () => string | undefined;

/** Renders the healthz body and status code for `checks`. */
export function renderHealthz(
  checks: Readonly<Record<string, HealthCheck>>,
  verbose: boolean,
): { readonly code: number; readonly body: string } {
  const lines: string[] = [];
  let failed = false;
  for (const [name, check] of Object.entries(checks)) {
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

/** A running health server. */
export interface HealthServer {
  /** `http://<host>:<port>`. */
  readonly url: string;
  /** Closes the server and its connections. */
  close(): Promise<void>;
}

/** Serves `/healthz` on `host:port` (port 0: a free one). */
export async function startHealthServer(
  checks: Readonly<Record<string, HealthCheck>>,
  port: number,
  host = '127.0.0.1',
): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/healthz') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    const { code, body } = renderHealthz(checks, url.searchParams.has('verbose'));
    res
      .writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' })
      .end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

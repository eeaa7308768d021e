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
import { type Lifecycle, StartOnce } from '@nodeagent/core';

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

/** Options of {@link HealthServer}. */
export interface HealthServerOptions {
  /** The checks `/healthz` runs, by name. */
  readonly checks: Readonly<Record<string, HealthCheck>>;
  /** Port to listen on (0: a free one). */
  readonly port: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
}

/** Serves `/healthz` on `host:port` from {@link HealthServer.start} until {@link HealthServer.stop}. */
export class HealthServer implements Lifecycle {
  readonly #once = new StartOnce('HealthServer');
  readonly #options: HealthServerOptions;
  readonly #server: http.Server;
  #url: string | undefined;

  /** @param options see {@link HealthServerOptions}. */
  constructor(options: HealthServerOptions) {
    this.#options = options;
    this.#server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname !== '/healthz') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
        return;
      }
      const { code, body } = renderHealthz(options.checks, url.searchParams.has('verbose'));
      res
        .writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' })
        .end(body);
    });
  }

  /** `http://<host>:<port>`; throws before {@link HealthServer.start} resolved. */
  get url(): string {
    if (this.#url === undefined) throw new Error('HealthServer is not listening');
    return this.#url;
  }

  /** Listens; resolves once it accepts connections. `signal` bounds that wait only. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        const host = this.#options.host ?? '127.0.0.1';
        await new Promise<void>((resolve, reject) => {
          this.#server.once('error', reject);
          this.#server.listen(this.#options.port, host, () => resolve());
        });
        this.#url = `http://${host}:${(this.#server.address() as AddressInfo).port}`;
      },
      () => this.stop(),
    );
  }

  /** Closes the server and its connections. Idempotent; safe before start. */
  stop(): Promise<void> {
    if (!this.#server.listening) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#server.closeAllConnections();
      this.#server.close(() => resolve());
    });
  }
}

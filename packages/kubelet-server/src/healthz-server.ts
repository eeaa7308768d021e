/**
 * A listener that serves only `/healthz` (the kubelet's `--healthz-port`, 10248): for agents
 * that want the health endpoint without the rest of the kubelet API. {@link KubeletServer}
 * serves the same handler on its own healthz port.
 *
 * @module
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Lifecycle, StartOnce } from '@nodeagent/core';
import { type HealthCheck, logHealthz, pingHealthz, serveHealthz } from './healthz.js';

/** Options of {@link HealthzServer}. */
export interface HealthzServerOptions {
  /** Checks besides `ping` and `log`. @default none */
  readonly checks?: Readonly<Record<string, HealthCheck>>;
  /** Port; 0 picks a free one. */
  readonly port: number;
  /** Bind address. @default '127.0.0.1' */
  readonly host?: string;
}

/** Serves `/healthz` (and `/healthz/<check>`) on `host:port` between start and stop. */
export class HealthzServer implements Lifecycle {
  readonly #once = new StartOnce('HealthzServer');
  readonly #options: HealthzServerOptions;
  readonly #server: Server;
  #url: string | undefined;

  /** @param options see {@link HealthzServerOptions}. */
  constructor(options: HealthzServerOptions) {
    this.#options = options;
    const checks = { ping: pingHealthz, log: logHealthz, ...(options.checks ?? {}) };
    this.#server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const answer = serveHealthz(checks, url.pathname, url.searchParams) ?? {
        code: 404,
        body: '404 page not found\n',
      };
      res
        .writeHead(answer.code, {
          'Content-Type': 'text/plain; charset=utf-8',
          'X-Content-Type-Options': 'nosniff',
        })
        .end(answer.body);
    });
  }

  /** `http://<host>:<port>`; throws before {@link HealthzServer.start} resolved. */
  get url(): string {
    if (this.#url === undefined) throw new Error('HealthzServer is not listening');
    return this.#url;
  }

  /** Listens; resolves once it accepts connections. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        const host = this.#options.host ?? '127.0.0.1';
        await new Promise<void>((resolve, reject) => {
          this.#server.once('error', reject);
          this.#server.listen(this.#options.port, host, () => {
            this.#server.off('error', reject);
            resolve();
          });
        });
        this.#url = `http://${host}:${(this.#server.address() as AddressInfo).port}`;
      },
      () => this.stop(),
    );
  }

  /** Closes the listener and its connections. Idempotent. */
  stop(): Promise<void> {
    if (!this.#server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.#server.closeAllConnections();
      this.#server.close(() => resolve());
    });
  }
}

/**
 * Health-check node ports for `externalTrafficPolicy: Local` services
 * (`pkg/proxy/healthcheck/service_health.go`): one HTTP server per service's
 * `healthCheckNodePort`, answering 200 while the node has ready local endpoints for it (and
 * the proxy is healthy), else 503, so cloud load balancers only send traffic to nodes that can
 * serve it without a second hop.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type Logger, noopLogger } from '@nodeagent/core';
import { closeServer, listen, parseBindAddress } from './http-util.js';

/** Options of {@link ServiceHealthServer}. */
export interface ServiceHealthServerOptions {
  /**
   * Addresses each health-check port listens on (kube-proxy: the `--nodeport-addresses` IPs,
   * else every address). `[]` listens on every address.
   * @default []
   */
  readonly bindAddresses?: readonly string[];
  /**
   * The proxy's own health (kube-proxy's healthz without node eligibility); reported as
   * `serviceProxyHealthy` and required for a 200.
   * @default () => true
   */
  readonly proxyHealthy?: () => boolean;
  /** Called when a port cannot be opened (it is retried on the next {@link ServiceHealthServer.syncServices}). */
  readonly onListenError?: (service: string, port: number, error: Error) => void;
  /** @default noopLogger */
  readonly logger?: Logger;
}

interface Instance {
  readonly service: string;
  readonly port: number;
  readonly servers: Server[];
  endpoints: number;
}

/**
 * Manages the per-service health-check HTTP servers. It is a handle (nothing to start: each
 * {@link ServiceHealthServer.syncServices} opens and closes servers), released with
 * {@link ServiceHealthServer.close}.
 */
export class ServiceHealthServer {
  readonly #options: ServiceHealthServerOptions;
  readonly #log: Logger;
  readonly #instances = new Map<string, Instance>();
  #chain: Promise<unknown> = Promise.resolve();

  /** @param options - Bind addresses and the proxy health source. */
  constructor(options: ServiceHealthServerOptions = {}) {
    this.#options = options;
    this.#log = (options.logger ?? noopLogger).child({ component: 'service-healthcheck' });
    for (const a of options.bindAddresses ?? []) parseBindAddress(a, 0); // validate early
  }

  /** Open servers: service (`ns/name`) → port. */
  get services(): ReadonlyMap<string, number> {
    return new Map([...this.#instances.values()].map((i) => [i.service, i.port]));
  }

  /**
   * Makes `wanted` (service `ns/name` → health-check node port) the set of open servers:
   * servers of services no longer wanted (or with another port) close, new ones open. A port
   * that cannot be opened is reported and retried on the next call. Calls are serialised.
   */
  syncServices(wanted: ReadonlyMap<string, number>): Promise<void> {
    const next = this.#chain.then(() => this.#syncServices(wanted));
    this.#chain = next.catch(() => {});
    return next;
  }

  /** Sets each open service's local-endpoint count; services missing from `counts` get 0. */
  syncEndpoints(counts: ReadonlyMap<string, number>): void {
    for (const inst of this.#instances.values()) inst.endpoints = counts.get(inst.service) ?? 0;
  }

  /** Closes every server. */
  async close(): Promise<void> {
    await this.syncServices(new Map());
  }

  async #syncServices(wanted: ReadonlyMap<string, number>): Promise<void> {
    for (const [svc, inst] of [...this.#instances]) {
      if (wanted.get(svc) === inst.port) continue;
      this.#log.info({ service: svc, port: inst.port }, 'closing health check');
      this.#instances.delete(svc);
      await Promise.all(inst.servers.map(closeServer));
    }
    for (const [svc, port] of wanted) {
      if (this.#instances.has(svc)) continue;
      const inst: Instance = { service: svc, port, servers: [], endpoints: 0 };
      try {
        const hosts = this.#options.bindAddresses?.length ? this.#options.bindAddresses : [''];
        for (const h of hosts) {
          const server = createServer((req, res) => this.#handle(inst, req, res));
          const address = h === '' ? { host: '', port } : { host: parseBindAddress(h, port).host, port };
          await listen(server, address);
          inst.servers.push(server);
        }
        this.#instances.set(svc, inst);
        this.#log.info({ service: svc, port }, 'opened health check');
      } catch (err) {
        await Promise.all(inst.servers.map(closeServer));
        const error = err instanceof Error ? err : new Error(String(err));
        this.#log.error({ service: svc, port, err: error }, 'failed to start health check');
        this.#options.onListenError?.(svc, port, error);
      }
    }
  }

  #handle(inst: Instance, _req: IncomingMessage, res: ServerResponse): void {
    const [namespace = '', name = ''] = splitName(inst.service);
    const count = inst.endpoints;
    const healthy = this.#options.proxyHealthy?.() ?? true;
    res.writeHead(count !== 0 && healthy ? 200 : 503, {
      'Content-Type': 'application/json',
      'X-Content-Type-Options': 'nosniff',
      'X-Load-Balancing-Endpoint-Weight': String(count),
    });
    // Upstream's body is indented with tabs; load balancers only look at the status code.
    res.end(
      [
        '{',
        '\t"service": {',
        `\t\t"namespace": ${JSON.stringify(namespace)},`,
        `\t\t"name": ${JSON.stringify(name)}`,
        '\t},',
        `\t"localEndpoints": ${count},`,
        `\t"serviceProxyHealthy": ${healthy}`,
        '}',
      ].join('\n'),
    );
  }
}

function splitName(key: string): [string, string] {
  const i = key.indexOf('/');
  return i < 0 ? ['', key] : [key.slice(0, i), key.slice(i + 1)];
}

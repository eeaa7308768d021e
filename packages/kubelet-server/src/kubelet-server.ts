/**
 * The kubelet's HTTP API (upstream `pkg/kubelet/server`): the authenticated HTTPS server on
 * `--port` (10250), the unauthenticated read-only server on `--read-only-port` (off by
 * default) with only the default handlers, and `/healthz` on `--healthz-port`.
 *
 * @module
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type Lifecycle, type Logger, noopLogger, StartOnce } from '@nodeagent/core';
import { RequestAuthenticator } from './authn.js';
import { type Authorizer, alwaysAllowAuthorizer } from './authz.js';
import { type LogStreamInfo, serveContainerLogs } from './container-logs-handler.js';
import { type HealthCheck, logHealthz, pingHealthz, serveHealthz } from './healthz.js';
import { podList, runningPods, sendJson, sendText, writeRaw } from './http-responses.js';
import type { KubeletServerOptions, MetricsTextProvider } from './kubelet-server-options.js';
import { KubeletRequestError } from './pod-containers.js';
import { requestAttributes, type UserInfo } from './request-attributes.js';
import { loadOrGenerateServingCertificate } from './serving-cert.js';
import { isUpgradeRequest } from './stream-proxy.js';
import { proxyToRuntime, type StreamingKind, streamingUrl } from './streaming-handler.js';
import { summaryFor } from './summary-handler.js';

/** Which handlers a listener serves. */
type ServerKind = 'main' | 'readOnly' | 'healthz';

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';
const STREAMING: Readonly<Record<string, StreamingKind>> = {
  exec: 'exec',
  attach: 'attach',
  portForward: 'portForward',
};

/**
 * The kubelet's servers. Create, {@link KubeletServer.start}, read the URLs, and
 * {@link KubeletServer.stop}.
 *
 * @example
 * ```ts
 * const server = new KubeletServer({ nodeName: 'n1', host, runtime: cri.runtime, port: 0, healthzPort: 0 });
 * await server.start();
 * console.log(await (await fetch(`${server.healthzUrl}/healthz`)).text()); // "ok"
 * await server.stop();
 * ```
 */
export class KubeletServer implements Lifecycle {
  readonly #once = new StartOnce('KubeletServer');
  readonly #options: KubeletServerOptions;
  readonly #log: Logger;
  readonly #authenticator: RequestAuthenticator;
  readonly #authorizer: Authorizer;
  readonly #checks: Readonly<Record<string, HealthCheck>>;
  readonly #servers: { kind: ServerKind; server: Server; url: string }[] = [];
  readonly #streams = new Set<{ path: string; bytesRead: number }>();
  /** Upgraded connections: detached from their server, so closed by {@link KubeletServer.stop} itself. */
  readonly #upgraded = new Set<Duplex>();
  readonly #lifetime = new AbortController();

  /** @param options see {@link KubeletServerOptions}. */
  constructor(options: KubeletServerOptions) {
    this.#options = options;
    this.#log = options.logger ?? noopLogger;
    this.#authenticator =
      options.authenticator ??
      new RequestAuthenticator({ x509: options.clientCa !== undefined, anonymous: true });
    this.#authorizer = options.authorizer ?? alwaysAllowAuthorizer;
    this.#checks = { ping: pingHealthz, log: logHealthz, ...(options.healthChecks ?? {}) };
  }

  /** `https://<address>:<port>` of the main server; throws before start and with `enableServer: false`. */
  get url(): string {
    return this.#urlOf('main');
  }

  /** `http://…` of the read-only server, when enabled. */
  get readOnlyUrl(): string | undefined {
    return this.#servers.find((s) => s.kind === 'readOnly')?.url;
  }

  /** `http://…` of the healthz server, when enabled. */
  get healthzUrl(): string | undefined {
    return this.#servers.find((s) => s.kind === 'healthz')?.url;
  }

  /** The port of the main server (for `daemonEndpoints.kubeletEndpoint.Port`); throws before start and with `enableServer: false`. */
  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** The container logs being streamed now, with the bytes read from each. */
  get logStreams(): readonly LogStreamInfo[] {
    return [...this.#streams].map((s) => ({ ...s }));
  }

  #urlOf(kind: ServerKind): string {
    const s = this.#servers.find((x) => x.kind === kind);
    if (s === undefined) throw new Error(`KubeletServer: the ${kind} server is not listening`);
    return s.url;
  }

  /** Listens on every enabled port; resolves once all accept connections. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        const o = this.#options;
        if (o.enableServer !== false) {
          const tls =
            o.tls ??
            (await loadOrGenerateServingCertificate({
              ...(o.certDir !== undefined ? { certDir: o.certDir } : {}),
            }));
          const main = createHttpsServer({
            cert: tls.cert,
            key: tls.key,
            ...(o.clientCa !== undefined
              ? { requestCert: true, rejectUnauthorized: false, ca: o.clientCa }
              : {}),
          });
          await this.#listen('main', main, o.address ?? '0.0.0.0', o.port ?? 10250, 'https');
        }
        if (o.readOnlyPort !== undefined) {
          await this.#listen('readOnly', createHttpServer(), o.address ?? '0.0.0.0', o.readOnlyPort, 'http');
        }
        if (o.healthzPort !== undefined) {
          await this.#listen(
            'healthz',
            createHttpServer(),
            o.healthzBindAddress ?? '127.0.0.1',
            o.healthzPort,
            'http',
          );
        }
      },
      () => this.stop(),
    );
  }

  async #listen(
    kind: ServerKind,
    server: Server,
    address: string,
    port: number,
    scheme: string,
  ): Promise<void> {
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      void this.#handle(kind, req, res);
    });
    if (kind === 'main') {
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        void this.#handleUpgrade(req, socket, head);
      });
    }
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const a = server.address() as AddressInfo;
    const hostPart =
      address === '0.0.0.0' || address === '::'
        ? '127.0.0.1'
        : address.includes(':')
          ? `[${address}]`
          : address;
    this.#servers.push({ kind, server, url: `${scheme}://${hostPart}:${a.port}` });
    this.#log.info({ kind, url: `${scheme}://${hostPart}:${a.port}` }, 'Kubelet server listening');
  }

  /** Authenticates and authorizes a main-server request; the refusal (code, body) or the user. */
  async #admit(req: IncomingMessage, path: string): Promise<{ code: number; body: string } | UserInfo> {
    const authn = await this.#authenticator.authenticate(req, this.#lifetime.signal);
    if (!authn.ok) return { code: 401, body: 'Unauthorized' };
    const attrs = requestAttributes(
      this.#options.nodeName,
      authn.user,
      req.method ?? 'GET',
      path,
      this.#options.fineGrainedAuthz ?? true,
    );
    const subresources = attrs.map((a) => a.subresource);
    for (const a of attrs) {
      try {
        if ((await this.#authorizer.authorize(a, this.#lifetime.signal)).allowed) return authn.user;
      } catch (err) {
        this.#log.error({ err, user: authn.user.name }, 'Authorization error');
        return {
          code: 500,
          body: `Authorization error (user=${authn.user.name}, verb=${a.verb}, resource=nodes, subresource(s)=[${subresources.join(' ')}])`,
        };
      }
    }
    return {
      code: 403,
      body: `Forbidden (user=${authn.user.name}, verb=${attrs[0]?.verb ?? ''}, resource=nodes, subresource(s)=[${subresources.join(' ')}])`,
    };
  }

  async #handle(kind: ServerKind, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    const abort = new AbortController();
    const onClose = (): void => abort.abort();
    res.on('close', onClose);
    const stop = (): void => abort.abort();
    this.#lifetime.signal.addEventListener('abort', stop, { once: true });
    try {
      if (kind === 'main') {
        const admitted = await this.#admit(req, path);
        if ('code' in admitted) return sendText(res, admitted.code, admitted.body);
      }
      await this.#route(kind, req, res, path, url.searchParams, abort.signal);
    } catch (err) {
      if (err instanceof KubeletRequestError) return sendText(res, err.code, err.message);
      this.#log.error({ err, path }, 'Kubelet server: request failed');
      sendText(res, 500, (err as Error).message);
    } finally {
      res.off('close', onClose);
      this.#lifetime.signal.removeEventListener('abort', stop);
    }
  }

  async #route(
    kind: ServerKind,
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
    signal: AbortSignal,
  ): Promise<void> {
    const health = serveHealthz(this.#checks, path, query);
    if (health !== undefined) return sendText(res, health.code, health.body);
    if (kind === 'healthz') return sendText(res, 404, '404 page not found\n');
    const method = req.method ?? 'GET';
    if (path === '/pods' || path === '/pods/') {
      if (method !== 'GET') return sendText(res, 405, 'Method Not Allowed');
      return sendJson(res, podList(this.#options.host.getPods()));
    }
    const o = this.#options;
    const metrics: Readonly<Record<string, MetricsTextProvider | undefined>> = {
      '/metrics': o.metrics,
      '/metrics/cadvisor': o.cadvisorMetrics,
      '/metrics/resource': o.resourceMetrics,
      '/metrics/probes': o.probeMetrics,
    };
    const provider = metrics[path];
    if (provider !== undefined) {
      return sendText(res, 200, await provider.metrics(), provider.contentType ?? PROMETHEUS_TEXT);
    }
    if ((path === '/stats/summary' || path === '/stats/summary/') && o.summary !== undefined) {
      if (method !== 'GET' && method !== 'POST') return sendText(res, 405, 'Method Not Allowed');
      // summary-handler.ts: only_cpu_and_memory, else a GET reads the cache and a POST updates.
      return sendJson(res, await summaryFor(o.summary, method, query));
    }
    if (kind !== 'main') return sendText(res, 404, '404 page not found\n');
    // Debugging handlers: the authenticated server only.
    if (path === '/runningpods/' || path === '/runningpods')
      return sendJson(res, podList(await runningPods(this.#options.runtime)));
    const segments = path
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
    if (segments[0] === 'containerLogs') {
      return serveContainerLogs(
        {
          host: o.host,
          runtime: o.runtime,
          streams: this.#streams,
          ...(o.clock !== undefined ? { clock: o.clock } : {}),
          ...(o.logPollMs !== undefined ? { pollMs: o.logPollMs } : {}),
        },
        segments.slice(1),
        query,
        res,
        signal,
      );
    }
    if (segments[0] !== undefined && STREAMING[segments[0]] !== undefined) {
      return sendText(res, 400, 'Upgrade request required');
    }
    sendText(res, 404, '404 page not found\n');
  }

  async #handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    this.#upgraded.add(socket);
    socket.once('close', () => this.#upgraded.delete(socket));
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const admitted = await this.#admit(req, url.pathname);
      if ('code' in admitted) return writeRaw(socket, admitted.code, admitted.body);
      const segments = url.pathname
        .split('/')
        .filter((s) => s !== '')
        .map(decodeURIComponent);
      const kind = STREAMING[segments[0] ?? ''];
      if (kind === undefined || !isUpgradeRequest(req)) return writeRaw(socket, 404, '404 page not found\n');
      const target = await streamingUrl(
        kind,
        segments.slice(1),
        url.searchParams,
        this.#options.host,
        this.#options.runtime,
      );
      await proxyToRuntime(req, socket, head, target, this.#options.streamingDialer);
    } catch (err) {
      if (err instanceof KubeletRequestError) return writeRaw(socket, err.code, err.message);
      this.#log.error({ err }, 'Kubelet server: streaming request failed');
      writeRaw(socket, 500, (err as Error).message);
    }
  }

  /** Closes every listener and ends open log streams and proxied connections. Idempotent. */
  async stop(): Promise<void> {
    this.#lifetime.abort();
    for (const s of this.#upgraded) s.destroy();
    this.#upgraded.clear();
    const servers = this.#servers.splice(0);
    await Promise.all(
      servers.map(
        ({ server }) =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      ),
    );
  }
}

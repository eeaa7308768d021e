/**
 * A small JSON REST client for the few writes the agent makes (Node, Lease, pod status,
 * final pod delete). Reads go through informers; this only needs GET/POST/PUT/PATCH/DELETE
 * with the kubeconfig's server, TLS material and credentials, keeping objects plain JSON.
 *
 * As a client-go REST client: every request first waits for a token of the client config's
 * shared limiter (`--kube-api-qps`/`--kube-api-burst`, the same one the informers use), and
 * is counted in `rest_client_requests_total{code,method,host}`,
 * `rest_client_request_duration_seconds{verb,host}` (the wait included, as client-go's
 * `request()`) and `rest_client_rate_limiter_duration_seconds{verb,host}`.
 *
 * @module
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  type Clock,
  definedFields,
  type Logger,
  type MetricsOptions,
  type RequestRateLimiter,
  realClock,
} from '@nodeagent/core';
import {
  createRestClientMetrics,
  noopRestClientMetrics,
  type RequestThrottle,
  type RestClientMetrics,
  throttleRequest,
} from '@nodeagent/informer';

/** A non-2xx answer from the API server, with its HTTP code and the Status `reason`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /**
   * @param code HTTP status code.
   * @param reason the Status body's `reason` (`NotFound`, `AlreadyExists`, `Conflict`, …), or `''`.
   * @param message what the request was and what the server said.
   */
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Patch content types the agent uses. */
export type PatchKind = 'merge' | 'strategic';

const PATCH_CONTENT_TYPE: Record<PatchKind, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

/** One request: method, path (with query) and an optional JSON body. */
interface ApiRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal | undefined;
}

/** Options of an {@link ApiClient}. */
export interface ApiClientOptions {
  /**
   * The client config's request limiter, shared with the informers (`restClientRateLimiter`
   * of `@nodeagent/informer`). No client-side limit when unset.
   */
  readonly rateLimiter?: RequestRateLimiter | undefined;
  /** Where client-go's `rest_client_*` metrics go; none when unset. */
  readonly metrics?: MetricsOptions | undefined;
  /** Where "Waited before sending request" goes. @default no logging */
  readonly logger?: Logger | undefined;
  /** Measures rate-limiter waits and request latency; pass the limiter's clock. @default realClock */
  readonly clock?: Clock | undefined;
}

/**
 * JSON over HTTP(S) to the API server named by a client-node `KubeConfig` (current
 * context). Connections are kept alive and closed by {@link ApiClient.close}.
 */
export class ApiClient {
  #agent: http.Agent | undefined;

  readonly #kubeConfig: KubeConfig;
  readonly #metrics: RestClientMetrics;
  readonly #throttle: RequestThrottle;
  readonly #clock: Clock;

  /**
   * @param kubeConfig the API server, TLS material and credentials (current context).
   * @param options the shared rate limiter, metrics and logger.
   */
  constructor(kubeConfig: KubeConfig, options: ApiClientOptions = {}) {
    this.#kubeConfig = kubeConfig;
    this.#metrics = options.metrics ? createRestClientMetrics(options.metrics) : noopRestClientMetrics;
    this.#clock = options.clock ?? realClock;
    this.#throttle = {
      limiter: options.rateLimiter,
      metrics: this.#metrics,
      clock: this.#clock,
      ...definedFields({ logger: options.logger }),
    };
  }

  /** GET `path`; resolves `undefined` on 404. */
  async get<T>(path: string, signal?: AbortSignal): Promise<T | undefined> {
    try {
      return await this.#request<T>({ method: 'GET', path, signal });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  /** POST `body` to the collection `path`. */
  create<T>(path: string, body: T, signal?: AbortSignal): Promise<T> {
    return this.#request<T>({ method: 'POST', path, body, signal });
  }

  /** PUT `body` to `path` (an update with `metadata.resourceVersion` as precondition). */
  replace<T>(path: string, body: T, signal?: AbortSignal): Promise<T> {
    return this.#request<T>({ method: 'PUT', path, body, signal });
  }

  /** PATCH `path` with a merge or strategic-merge patch. */
  patch<T>(path: string, kind: PatchKind, patch: unknown, signal?: AbortSignal): Promise<T> {
    return this.#request<T>({
      method: 'PATCH',
      path,
      body: patch,
      contentType: PATCH_CONTENT_TYPE[kind],
      signal,
    });
  }

  /** DELETE `path` with DeleteOptions (grace period, preconditions). */
  delete(path: string, options: Record<string, unknown> = {}, signal?: AbortSignal): Promise<unknown> {
    return this.#request({
      method: 'DELETE',
      path,
      body: { kind: 'DeleteOptions', apiVersion: 'v1', ...options },
      signal,
    });
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.#agent?.destroy();
    this.#agent = undefined;
  }

  async #request<T>(req: ApiRequest): Promise<T> {
    const cluster = this.#kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server);
    const [pathname = '', search = ''] = req.path.split('?');
    url.pathname = `${url.pathname.replace(/\/$/, '')}${pathname}`;
    url.search = search;
    const isHttps = url.protocol === 'https:';
    const applied: https.RequestOptions = {};
    try {
      await this.#kubeConfig.applyToHTTPSOptions(applied);
    } catch (err) {
      // client-node refuses plain-HTTP servers unless skipTLSVerify is set, after applying
      // the credentials; a loopback http:// server (the embedded one) is still fine.
      if (isHttps || !/HTTP protocol is not allowed/.test(String(err))) throw err;
    }
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': 'nodeagent-reference-agent',
    };
    for (const [k, v] of Object.entries(applied.headers ?? {})) {
      if (v !== undefined) headers[k] = (Array.isArray(v) ? v.join(', ') : String(v)).trim();
    }
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    if (payload) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      // Node sends DELETE bodies unframed unless the length is given.
      headers['Content-Length'] = String(payload.length);
    }
    this.#agent ??= isHttps
      ? new https.Agent({
          keepAlive: true,
          ...definedFields({ ca: applied.ca }),
          ...definedFields({ cert: applied.cert }),
          ...definedFields({ key: applied.key }),
          ...(applied.rejectUnauthorized === undefined
            ? {}
            : { rejectUnauthorized: applied.rejectUnauthorized }),
        })
      : new http.Agent({ keepAlive: true });
    const transport = isHttps ? https : http;
    const agent = this.#agent;
    const host = url.host;
    // As client-go's request(): the latency covers the limiter's wait and the whole body.
    const started = this.#clock.now();
    let answered = false;
    let status: number;
    let text: string;
    try {
      await throttleRequest(this.#throttle, req.method, url, req.signal);
      ({ status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const r = transport.request(
          url,
          { method: req.method, headers, agent, ...(req.signal ? { signal: req.signal } : {}) },
          (res) => {
            answered = true;
            this.#metrics.requestResult(res.statusCode, req.method, host);
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
            );
            res.on('error', reject);
          },
        );
        r.on('error', (err) => {
          if (!answered) this.#metrics.requestResult(undefined, req.method, host);
          reject(err);
        });
        r.end(payload);
      }));
    } finally {
      this.#metrics.requestLatency(req.method, host, (this.#clock.now() - started) / 1000);
    }
    const parsed = parseJson(text);
    if (status < 200 || status >= 300) {
      const body = (parsed ?? {}) as { reason?: string; message?: string };
      throw new ApiError(
        status,
        body.reason ?? '',
        `${req.method} ${req.path}: ${status} ${body.message ?? text.slice(0, 200)}`,
      );
    }
    return parsed as T;
  }
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A {@link ListerWatcher} over the Kubernetes REST API. `@kubernetes/client-node`'s
 * `KubeConfig` supplies the server URL, TLS material and credentials (re-applied on every
 * request); the requests themselves use Node's `http`/`https` with a keep-alive agent and
 * this package's streaming decoder.
 *
 * Token rotation: client-node's `tokenFile` provider (what `loadFromCluster()` uses) keeps
 * a token for 60 s before reading the file again. Like client-go, which resets its cached
 * token on a 401, a 401 answer makes the next request take its credentials from a fresh
 * copy of the KubeConfig, so the rotated file is read at once. The same goes for exec
 * credential plugins, whose token client-node keeps until its `expirationTimestamp`: like
 * client-go, a 401 re-runs the plugin.
 *
 * @module
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock, Logger, MetricsOptions, RequestRateLimiter } from '@nodeagent/core';
import { StatusError, TlsVerificationError } from './errors.js';
import type { ActivityCallback, ListerWatcher } from './lister-watcher.js';
import {
  createRestClientMetrics,
  noopRestClientMetrics,
  type RestClientMetrics,
} from './rest-client-metrics.js';
import { type RequestThrottle, throttleRequest } from './rest-client-throttle.js';
import type { KubeObject, ListOptions, ObjectList, Status, WatchEvent, WatchOptions } from './types.js';
import { WatchDecoder } from './watch-decoder.js';

/** Identifies a resource collection: `{ group: 'apps', version: 'v1', resource: 'deployments' }`. */
export interface ResourceRef {
  /** API group; `''` (or unset) for the core group. */
  readonly group?: string;
  readonly version: string;
  /** Plural resource name, e.g. `pods`. */
  readonly resource: string;
  /** Limit to one namespace; unset for all namespaces (or cluster-scoped resources). */
  readonly namespace?: string;
}

/** The collection path of a resource: `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/deployments`. */
export function collectionPath(ref: ResourceRef): string {
  const base = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  const ns = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : '';
  return `${base}${ns}/${ref.resource}`;
}

/** Options for {@link RestListerWatcher}. */
export interface RestListerWatcherOptions {
  /** Where to connect and how to authenticate (`kc.loadFromDefault()` or `loadFromCluster()`). */
  readonly kubeConfig: KubeConfig;
  /** The collection path, e.g. from {@link collectionPath}. */
  readonly path: string;
  /**
   * Abort a list request that has not completed after this long, in milliseconds.
   * Watches have no total timeout (the reflector's idle timeout covers them).
   * @default 60_000
   */
  readonly listTimeoutMs?: number;
  /** @default '@nodeagent/informer' */
  readonly userAgent?: string;
  /**
   * Where client-go's `rest_client_requests_total{code,method,host}` and
   * `rest_client_request_duration_seconds{verb,host}` go; none when unset.
   */
  readonly metrics?: MetricsOptions;
  /**
   * The client config's request limiter (client-go's `rest.Config` `QPS`/`Burst`, see
   * `restClientRateLimiter`), shared with every other client of that config. Lists wait for
   * a token; watches do not, as in client-go. No client-side limit when unset.
   */
  readonly rateLimiter?: RequestRateLimiter;
  /** Where "Waited before sending request" goes. @default no logging */
  readonly logger?: Logger;
  /** Measures rate-limiter waits; pass the limiter's clock. @default realClock */
  readonly clock?: Clock;
}

interface Prepared {
  readonly url: URL;
  readonly options: https.RequestOptions;
  readonly transport: typeof http | typeof https;
}

/** Lists and watches one collection over HTTP(S). */
export class RestListerWatcher<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  readonly #kc: KubeConfig;
  readonly #path: string;
  readonly #listTimeoutMs: number;
  readonly #userAgent: string;
  #agent: http.Agent | undefined;
  #agentKey: string | undefined;
  /** Credentials source after a 401 with a token file: a copy without client-node's token cache. */
  #credentials: KubeConfig | undefined;
  #credentialsStale = false;
  readonly #metrics: RestClientMetrics;
  readonly #throttle: RequestThrottle;

  constructor(options: RestListerWatcherOptions) {
    this.#metrics = options.metrics ? createRestClientMetrics(options.metrics) : noopRestClientMetrics;
    this.#throttle = {
      limiter: options.rateLimiter,
      metrics: this.#metrics,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    };
    this.#kc = options.kubeConfig;
    this.#path = options.path;
    this.#listTimeoutMs = options.listTimeoutMs ?? 60_000;
    this.#userAgent = options.userAgent ?? '@nodeagent/informer';
  }

  async list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    const query = new URLSearchParams();
    setIf(query, 'resourceVersion', options.resourceVersion);
    setIf(query, 'resourceVersionMatch', options.resourceVersionMatch);
    setIf(query, 'labelSelector', options.labelSelector);
    setIf(query, 'fieldSelector', options.fieldSelector);
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    setIf(query, 'continue', options.continue);
    // Like client-go's request(): the latency includes the rate limiter's wait, and the
    // timeout starts after it ("a throttled client [should not] return timeouts to callers
    // before it makes a single request").
    const started = performance.now();
    let res: http.IncomingMessage;
    let body: string;
    try {
      const prepared = await this.#prepare(query);
      await throttleRequest(this.#throttle, 'GET', prepared.url, signal);
      const listSignal = AbortSignal.any([signal, AbortSignal.timeout(this.#listTimeoutMs)]);
      ({ res } = await this.#send(prepared, listSignal));
      body = await readBody(res);
    } finally {
      // Like client-go's Do(): the latency covers the whole response, body included, and
      // failed requests too.
      this.#metrics.requestLatency('GET', this.#host(), (performance.now() - started) / 1000);
    }
    if (res.statusCode !== 200) throw this.#failed(res.statusCode ?? 0, body, `list ${this.#path}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      throw new Error(`list ${this.#path}: response is not JSON`, { cause: err });
    }
    if (
      typeof parsed !== 'object' ||
      parsed === null ||
      !Array.isArray((parsed as { items?: unknown }).items)
    ) {
      // `items: null` is how the server writes an empty list in some versions.
      if (typeof parsed === 'object' && parsed !== null && (parsed as { items?: unknown }).items === null) {
        return { ...(parsed as object), items: [] } as ObjectList<T>;
      }
      throw new Error(`list ${this.#path}: response has no items array`);
    }
    return parsed as ObjectList<T>;
  }

  async watch(
    options: WatchOptions,
    signal: AbortSignal,
    onActivity?: ActivityCallback,
  ): Promise<AsyncIterable<WatchEvent<T>>> {
    const query = new URLSearchParams({ watch: '1' });
    setIf(query, 'resourceVersion', options.resourceVersion);
    setIf(query, 'resourceVersionMatch', options.resourceVersionMatch);
    setIf(query, 'labelSelector', options.labelSelector);
    setIf(query, 'fieldSelector', options.fieldSelector);
    if (options.allowWatchBookmarks) query.set('allowWatchBookmarks', 'true');
    if (options.sendInitialEvents !== undefined)
      query.set('sendInitialEvents', String(options.sendInitialEvents));
    if (options.timeoutSeconds !== undefined) query.set('timeoutSeconds', String(options.timeoutSeconds));
    // client-go counts a watch in rest_client_requests_total but observes no latency for it,
    // and does not rate-limit it ("We specifically don't want to rate limit watches").
    const { res } = await this.#send(await this.#prepare(query), signal);
    if (res.statusCode !== 200) {
      const body = await readBody(res);
      throw this.#failed(res.statusCode ?? 0, body, `watch ${this.#path}`);
    }
    return decodeStream<T>(res, onActivity);
  }

  /** The `host` label: the server URL's `host[:port]` (client-go's `base.Host`), `none` without one. */
  #host(): string {
    const server = this.#kc.getCurrentCluster()?.server;
    if (!server) return 'none';
    try {
      return new URL(server).host;
    } catch {
      return 'none';
    }
  }

  async #prepare(query: URLSearchParams): Promise<Prepared> {
    const cluster = this.#kc.getCurrentCluster();
    if (!cluster) throw new Error('KubeConfig has no current cluster');
    const url = new URL(cluster.server);
    url.pathname = `${url.pathname.replace(/\/$/, '')}${this.#path}`;
    url.search = query.toString();
    // Applied per request: client-node's token-file provider re-reads a rotated token here.
    const applied: https.RequestOptions = {};
    const isHttps = url.protocol === 'https:';
    if (this.#credentialsStale) {
      this.#credentialsStale = false;
      this.#credentials = withoutCredentialCache(this.#kc);
    }
    try {
      await (this.#credentials ?? this.#kc).applyToHTTPSOptions(applied);
    } catch (err) {
      // client-node refuses plain-HTTP servers unless skipTLSVerify is set; it throws only
      // after it applied the credentials, so a loopback http:// server (tests, the
      // mini-apiserver) still works. Anything else is a real configuration error.
      if (isHttps || !/HTTP protocol is not allowed/.test(String(err))) throw err;
    }
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': this.#userAgent };
    for (const [k, v] of Object.entries(applied.headers ?? {})) {
      // Trimmed: client-node sends a token file's trailing newline, which Node refuses in a
      // header (client-go trims the token too).
      if (v !== undefined) headers[k] = (Array.isArray(v) ? v.join(', ') : String(v)).trim();
    }
    if (applied.auth) headers.Authorization = `Basic ${Buffer.from(applied.auth).toString('base64')}`;
    const proxyUrl = this.#kc.getCurrentCluster()?.proxyUrl ?? undefined;
    const options: https.RequestOptions = {
      method: 'GET',
      headers,
      agent: this.#agentFor(isHttps, applied, proxyUrl),
    };
    return { url, options, transport: isHttps ? https : http };
  }

  /**
   * One keep-alive agent, rebuilt only when the TLS material or the proxy changes (e.g. a
   * rotated client cert). With a kubeconfig `proxy-url`, the agent is the one client-node
   * built for it (HTTP CONNECT for https servers, a forwarding proxy for http ones, SOCKS
   * for `socks5://`), kept as long as the key does not change.
   */
  #agentFor(isHttps: boolean, applied: https.RequestOptions, proxyUrl: string | undefined): http.Agent {
    const tls = {
      ca: applied.ca,
      cert: applied.cert,
      key: applied.key,
      rejectUnauthorized: applied.rejectUnauthorized,
      servername: applied.servername,
    };
    const key = `${isHttps}|${proxyUrl ?? ''}|${JSON.stringify(tls)}`;
    if (this.#agent && this.#agentKey === key) return this.#agent;
    this.#agent?.destroy();
    if (proxyUrl && applied.agent instanceof http.Agent) {
      this.#agent = applied.agent;
      this.#agentKey = key;
      return this.#agent;
    }
    const agentOptions: https.AgentOptions = { keepAlive: true, keepAliveMsecs: 30_000 };
    for (const [k, v] of Object.entries(tls)) if (v !== undefined) Object.assign(agentOptions, { [k]: v });
    this.#agent = isHttps ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    this.#agentKey = key;
    return this.#agent;
  }

  async #send(
    prepared: Prepared,
    signal: AbortSignal,
  ): Promise<{ readonly res: http.IncomingMessage; readonly host: string }> {
    const { url, options, transport } = prepared;
    signal.throwIfAborted();
    const host = url.host;
    let answered = false;
    return new Promise<{ readonly res: http.IncomingMessage; readonly host: string }>((resolve, reject) => {
      const req = transport.request(url, { ...options, signal }, (res) => {
        answered = true;
        this.#metrics.requestResult(res.statusCode, 'GET', host);
        resolve({ res, host });
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        // An error after the response arrived (e.g. a watch cut later) was counted already.
        if (!answered) this.#metrics.requestResult(undefined, 'GET', host);
        reject(isTlsVerificationFailure(err) ? new TlsVerificationError(url.origin, err) : err);
      });
      // TCP keep-alive probes notice a dead peer even on a silent watch.
      req.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
      req.end();
    });
  }

  /**
   * A StatusError for a non-200 answer; a 401 for a user with a token file or an exec
   * plugin forces fresh credentials (client-go resets its file token and re-runs the exec
   * plugin on a 401 too).
   */
  #failed(code: number, body: string, context: string): StatusError {
    if (code === 401 && cachesCredentials(this.#kc)) this.#credentialsStale = true;
    return statusError(code, body, context);
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.#agent?.destroy();
    this.#agent = undefined;
    this.#agentKey = undefined;
  }
}

/**
 * True for users whose credentials client-node caches: the `tokenFile` auth provider (60 s)
 * and exec plugins (until the ExecCredential's `expirationTimestamp`).
 */
function cachesCredentials(kc: KubeConfig): boolean {
  const user = kc.getCurrentUser();
  const config = user?.authProvider?.config as Record<string, unknown> | undefined;
  if (typeof config?.tokenFile === 'string' && config.tokenFile !== '') return true;
  return Boolean(user?.exec) || Boolean(config?.exec);
}

/**
 * The same clusters, users and contexts in a new KubeConfig, whose built-in authenticators
 * (token-file provider, exec plugin runner) have no cached credential yet. Only used for
 * users of those built-in authenticators, so the copy authenticates exactly like the
 * original.
 */
function withoutCredentialCache(kc: KubeConfig): KubeConfig {
  // The caller's own class: no runtime import of client-node here, and no mix of copies.
  const copy = new (kc.constructor as new () => KubeConfig)();
  copy.loadFromOptions({
    clusters: kc.getClusters(),
    users: kc.getUsers(),
    contexts: kc.getContexts(),
    currentContext: kc.getCurrentContext(),
  });
  return copy;
}

const TLS_ERROR_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function isTlsVerificationFailure(err: NodeJS.ErrnoException): boolean {
  return typeof err.code === 'string' && TLS_ERROR_CODES.has(err.code);
}

function setIf(query: URLSearchParams, name: string, value: string | undefined): void {
  if (value !== undefined) query.set(name, value);
}

async function readBody(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function statusError(code: number, body: string, context: string): StatusError {
  let status: Status | undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null) status = parsed as Status;
  } catch {
    if (body.trim() !== '') status = { message: body.trim().slice(0, 500), code };
  }
  return new StatusError(code, status, context);
}

async function* decodeStream<T extends KubeObject>(
  res: http.IncomingMessage,
  onActivity: ActivityCallback | undefined,
): AsyncGenerator<WatchEvent<T>> {
  const decoder = new WatchDecoder();
  try {
    for await (const chunk of res) {
      onActivity?.();
      const { events, error } = decoder.push(chunk as Buffer);
      for (const event of events) yield event as WatchEvent<T>;
      if (error) throw error;
    }
    if (!res.complete) throw new Error('watch connection closed before the response completed');
    const { events, error } = decoder.end();
    for (const event of events) yield event as WatchEvent<T>;
    if (error) throw error;
  } finally {
    if (!res.complete) res.destroy();
  }
}

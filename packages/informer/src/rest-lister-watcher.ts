/**
 * A {@link ListerWatcher} over the Kubernetes REST API. `@kubernetes/client-node`'s
 * `KubeConfig` supplies the server URL, TLS material and credentials (re-applied on every
 * request, so a rotating in-cluster token file is re-read); the requests themselves use
 * Node's `http`/`https` with a keep-alive agent and this package's streaming decoder.
 *
 * @module
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { StatusError } from './errors.js';
import type { ActivityCallback, ListerWatcher } from './lister-watcher.js';
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
}

interface Prepared {
  readonly url: URL;
  readonly options: https.RequestOptions;
  readonly transport: typeof http | typeof https;
}

/** Lists and watches one collection over HTTP(S). */
export class RestListerWatcher<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  private readonly kc: KubeConfig;
  private readonly path: string;
  private readonly listTimeoutMs: number;
  private readonly userAgent: string;
  private agent: http.Agent | undefined;
  private agentKey: string | undefined;

  constructor(options: RestListerWatcherOptions) {
    this.kc = options.kubeConfig;
    this.path = options.path;
    this.listTimeoutMs = options.listTimeoutMs ?? 60_000;
    this.userAgent = options.userAgent ?? '@nodeagent/informer';
  }

  async list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    const query = new URLSearchParams();
    setIf(query, 'resourceVersion', options.resourceVersion);
    setIf(query, 'resourceVersionMatch', options.resourceVersionMatch);
    setIf(query, 'labelSelector', options.labelSelector);
    setIf(query, 'fieldSelector', options.fieldSelector);
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    setIf(query, 'continue', options.continue);
    const listSignal = AbortSignal.any([signal, AbortSignal.timeout(this.listTimeoutMs)]);
    const res = await this.send(query, listSignal);
    const body = await readBody(res);
    if (res.statusCode !== 200) throw statusError(res.statusCode ?? 0, body, `list ${this.path}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      throw new Error(`list ${this.path}: response is not JSON`, { cause: err });
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
      throw new Error(`list ${this.path}: response has no items array`);
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
    const res = await this.send(query, signal);
    if (res.statusCode !== 200) {
      const body = await readBody(res);
      throw statusError(res.statusCode ?? 0, body, `watch ${this.path}`);
    }
    return decodeStream<T>(res, onActivity);
  }

  private async prepare(query: URLSearchParams): Promise<Prepared> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error('KubeConfig has no current cluster');
    const url = new URL(cluster.server);
    url.pathname = `${url.pathname.replace(/\/$/, '')}${this.path}`;
    url.search = query.toString();
    // Applied per request: client-node's token-file provider re-reads a rotated token here.
    const applied: https.RequestOptions = {};
    const isHttps = url.protocol === 'https:';
    try {
      await this.kc.applyToHTTPSOptions(applied);
    } catch (err) {
      // client-node refuses plain-HTTP servers unless skipTLSVerify is set; it throws only
      // after it applied the credentials, so a loopback http:// server (tests, the
      // mini-apiserver) still works. Anything else is a real configuration error.
      if (isHttps || !/HTTP protocol is not allowed/.test(String(err))) throw err;
    }
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': this.userAgent };
    for (const [k, v] of Object.entries(applied.headers ?? {})) {
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
    }
    if (applied.auth) headers.Authorization = `Basic ${Buffer.from(applied.auth).toString('base64')}`;
    const options: https.RequestOptions = { method: 'GET', headers, agent: this.agentFor(isHttps, applied) };
    return { url, options, transport: isHttps ? https : http };
  }

  /** One keep-alive agent, rebuilt only when the TLS material changes (e.g. a rotated client cert). */
  private agentFor(isHttps: boolean, applied: https.RequestOptions): http.Agent {
    const tls = {
      ca: applied.ca,
      cert: applied.cert,
      key: applied.key,
      rejectUnauthorized: applied.rejectUnauthorized,
      servername: applied.servername,
    };
    const key = `${isHttps}|${JSON.stringify(tls)}`;
    if (this.agent && this.agentKey === key) return this.agent;
    this.agent?.destroy();
    const agentOptions: https.AgentOptions = { keepAlive: true, keepAliveMsecs: 30_000 };
    for (const [k, v] of Object.entries(tls)) if (v !== undefined) Object.assign(agentOptions, { [k]: v });
    this.agent = isHttps ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    this.agentKey = key;
    return this.agent;
  }

  private async send(query: URLSearchParams, signal: AbortSignal): Promise<http.IncomingMessage> {
    const { url, options, transport } = await this.prepare(query);
    signal.throwIfAborted();
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = transport.request(url, { ...options, signal }, (res) => resolve(res));
      req.on('error', reject);
      // TCP keep-alive probes notice a dead peer even on a silent watch.
      req.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
      req.end();
    });
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
    this.agentKey = undefined;
  }
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

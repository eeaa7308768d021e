/**
 * A minimal JSON client for the API server over Node's `http`/`https` (no client-node):
 * a base URL, optional TLS material and headers (e.g. a bearer token). Enough for the
 * event sink's POST and PATCH; kept-alive connections are closed by `close()`.
 *
 * @module
 */
import http from 'node:http';
import https from 'node:https';
import { EventSinkError, type JsonApiClient } from './sink.js';

/** Options of {@link HttpJsonClient}. */
export interface HttpJsonClientOptions {
  /** The API server, e.g. `https://10.0.0.1:6443` or `http://127.0.0.1:8080`. */
  readonly server: string;
  /** Extra request headers, e.g. `{ Authorization: 'Bearer …' }`. @default {} */
  readonly headers?: Readonly<Record<string, string>>;
  /** CA bundle (PEM) to verify an https server. @default Node's trust store */
  readonly ca?: string | Buffer;
  /** Client certificate (PEM). @default none */
  readonly cert?: string | Buffer;
  /** Client key (PEM). @default none */
  readonly key?: string | Buffer;
  /** Verify the server certificate. @default true */
  readonly rejectUnauthorized?: boolean;
  /** Abort a request that has not completed after this long, ms. Minimum: 1. @default 30_000 */
  readonly timeoutMs?: number;
  /** @default '@nodeagent/events' */
  readonly userAgent?: string;
}

/** JSON over HTTP(S) to one API server; non-2xx answers reject with {@link EventSinkError}. */
export class HttpJsonClient implements JsonApiClient {
  readonly #base: URL;
  readonly #options: HttpJsonClientOptions;
  readonly #agent: http.Agent;

  constructor(options: HttpJsonClientOptions) {
    this.#base = new URL(options.server);
    this.#options = options;
    this.#agent =
      this.#base.protocol === 'https:'
        ? new https.Agent({
            keepAlive: true,
            ...(options.ca === undefined ? {} : { ca: options.ca }),
            ...(options.cert === undefined ? {} : { cert: options.cert }),
            ...(options.key === undefined ? {} : { key: options.key }),
            rejectUnauthorized: options.rejectUnauthorized ?? true,
          })
        : new http.Agent({ keepAlive: true });
  }

  /** POSTs `body` to `path`. */
  create<T>(path: string, body: T, signal?: AbortSignal): Promise<T> {
    return this.#request<T>('POST', path, body, 'application/json', signal);
  }

  /** PATCHes `path` with a strategic merge patch. */
  patch<T>(path: string, _kind: 'strategic', patch: unknown, signal?: AbortSignal): Promise<T> {
    return this.#request<T>('PATCH', path, patch, 'application/strategic-merge-patch+json', signal);
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.#agent.destroy();
  }

  #request<T>(
    method: string,
    path: string,
    body: unknown,
    contentType: string,
    signal?: AbortSignal,
  ): Promise<T> {
    const url = new URL(`${this.#base.pathname.replace(/\/$/, '')}${path}`, this.#base);
    const payload = Buffer.from(JSON.stringify(body));
    const timeout = AbortSignal.timeout(this.#options.timeoutMs ?? 30_000);
    const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise<T>((resolve, reject) => {
      const req = transport.request(
        url,
        {
          method,
          agent: this.#agent,
          signal: combined,
          headers: {
            Accept: 'application/json',
            'Content-Type': contentType,
            'Content-Length': String(payload.length),
            'User-Agent': this.#options.userAgent ?? '@nodeagent/events',
            ...this.#options.headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown;
            try {
              parsed = text === '' ? undefined : JSON.parse(text);
            } catch {
              parsed = undefined;
            }
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              resolve(parsed as T);
              return;
            }
            const s = (parsed ?? {}) as { reason?: unknown; message?: unknown };
            reject(
              new EventSinkError(
                status,
                typeof s.reason === 'string' ? s.reason : '',
                `${method} ${path}: ${status} ${typeof s.message === 'string' ? s.message : text.slice(0, 200)}`,
              ),
            );
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }
}

/**
 * A minimal client for the two reviews the kubelet asks the API server for (`TokenReview`,
 * `SubjectAccessReview`): POST a JSON object, get the JSON answer. The kubelet uses its own
 * kubeconfig credentials; so does this (bearer token or client certificate).
 *
 * @module
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Posts `body` to `path` of the API server and resolves with the decoded answer. */
export type ApiPoster = (path: string, body: unknown, signal?: AbortSignal) => Promise<unknown>;

/** Where and how to reach the API server. */
export interface ApiServerConnection {
  /** Base URL, e.g. `https://10.0.0.1:6443`. */
  readonly server: string;
  /** Bearer token. */
  readonly token?: string;
  /** PEM CA bundle that signed the server's certificate. */
  readonly ca?: string;
  /** PEM client certificate. */
  readonly cert?: string;
  /** PEM client key. */
  readonly key?: string;
  /** Per-request timeout, ms. @default 10_000 */
  readonly timeoutMs?: number;
}

/** Thrown when the API server answers a review with a non-2xx status. */
export class ApiReviewError extends Error {
  override readonly name = 'ApiReviewError';
  /** @param path the path posted to. @param code HTTP status. @param body the answer's text. */
  constructor(
    readonly path: string,
    readonly code: number,
    body: string,
  ) {
    super(`POST ${path}: ${code} ${body.slice(0, 200)}`);
  }
}

/** An {@link ApiPoster} over HTTP(S) to `connection`. */
export function createApiPoster(connection: ApiServerConnection): ApiPoster {
  return (path, body, signal) =>
    new Promise((resolve, reject) => {
      const url = new URL(path, connection.server);
      const payload = JSON.stringify(body);
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'Content-Length': String(Buffer.byteLength(payload)),
      };
      if (connection.token !== undefined) headers.Authorization = `Bearer ${connection.token}`;
      const options = {
        method: 'POST',
        headers,
        timeout: connection.timeoutMs ?? 10_000,
        ...(signal !== undefined ? { signal } : {}),
      };
      const req =
        url.protocol === 'https:'
          ? httpsRequest(url, {
              ...options,
              ...(connection.ca !== undefined ? { ca: connection.ca } : {}),
              ...(connection.cert !== undefined ? { cert: connection.cert } : {}),
              ...(connection.key !== undefined ? { key: connection.key } : {}),
            })
          : httpRequest(url, options);
      req.on('timeout', () => req.destroy(new Error(`POST ${path}: timed out`)));
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code < 200 || code >= 300) return reject(new ApiReviewError(path, code, text));
          try {
            resolve(JSON.parse(text) as unknown);
          } catch (err) {
            reject(err);
          }
        });
      });
      req.end(payload);
    });
}

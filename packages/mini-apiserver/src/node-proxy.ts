/**
 * `nodes/{name}/proxy/{path}`: kube-apiserver's node proxy (`pkg/registry/core/node/rest/proxy.go`
 * and the node strategy's `ResourceLocation`). The name may carry a scheme and port
 * (`https:node:10250`, `node:10255`); without a port, or with the kubelet's own port, the
 * request goes to the node's kubelet endpoint (preferred address, `daemonEndpoints` port,
 * HTTPS with the API server's kubelet client certificate); another port is reached with the
 * requested scheme (default http) and no client certificate. Method, path, query, headers and
 * body are forwarded and the kubelet's answer is passed back as it is; a backend that cannot
 * be reached answers upstream's `error trying to reach service: ...` Status (500). Authorised
 * as `nodes/proxy` with the method's verb, like any subresource. Upgrade requests (exec over
 * the node proxy) are not forwarded.
 *
 * @module
 */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ApiStatusError, badRequest, failureStatus } from './errors.js';
import { type KubeletClientOptions, kubeletBase, tlsOptions } from './pod-node-proxy.js';
import type { ObjectStore } from './store.js';

/** A node proxy request: the node's name (as given, maybe `scheme:name:port`) and the path after `proxy`. */
export interface NodeProxyTarget {
  /** The `{name}` path segment, decoded. */
  readonly id: string;
  /** The path to request on the node, `''` for none. */
  readonly path: string;
}

const NODE_PROXY_PATH = /^\/api\/v1\/nodes\/([^/]+)\/proxy(\/.*)?$/;

/** The target of `/api/v1/nodes/{name}/proxy[/{path}]`, or `undefined` for any other path. */
export function parseNodeProxyPath(pathname: string): NodeProxyTarget | undefined {
  const m = NODE_PROXY_PATH.exec(pathname);
  if (m === null) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(m[1] as string);
  } catch {
    return undefined;
  }
  return { id, path: m[2] ?? '' };
}

/** `name`, `name:port` or `scheme:name:port` (upstream `SplitSchemeNamePort`), or `undefined` when invalid. */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0] as string;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return undefined;
  if (name === '' || (scheme !== '' && scheme !== 'http' && scheme !== 'https')) return undefined;
  if (parts.length > 1 && !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$|^\d+$/i.test(port)) return undefined;
  return { scheme, name, port };
}

/** Hop-by-hop and credential headers never forwarded (kube-apiserver drops Authorization after authentication). */
const DROPPED_HEADERS = new Set([
  'authorization',
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

/** Forwards one request to the node and streams the answer back. */
export async function serveNodeProxy(
  store: ObjectStore,
  client: KubeletClientOptions | undefined,
  target: NodeProxyTarget,
  search: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const parsed = splitSchemeNamePort(target.id);
  if (parsed === undefined) throw badRequest(`invalid node request "${target.id}"`);
  const kubelet = kubeletBase(store, parsed.name, client ?? {});
  const toKubelet = parsed.port === '' || parsed.port === kubelet.port;
  if (toKubelet && client === undefined)
    throw badRequest('mini-apiserver: no kubelet client configured (kubeletClient option)');
  const base = toKubelet
    ? kubelet
    : new URL(`${parsed.scheme === '' ? 'http' : parsed.scheme}://${kubelet.hostname}:${parsed.port}`);
  const url = new URL(`${target.path === '' ? '/' : target.path}${search}`, base);
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || DROPPED_HEADERS.has(k) || k.startsWith('impersonate-')) continue;
    headers[k] = v;
  }
  const tls = toKubelet && client !== undefined ? tlsOptions(client) : { rejectUnauthorized: false };
  await new Promise<void>((resolve, reject) => {
    const options = { method: req.method ?? 'GET', headers, ...tls };
    const out = url.protocol === 'https:' ? httpsRequest(url, options) : httpRequest(url, options);
    res.on('close', () => out.destroy());
    out.on('error', (err) => {
      if (res.headersSent) {
        res.destroy();
        resolve();
        return;
      }
      // ErrorToAPIStatus of a plain error: 500 with an empty (Unknown) reason.
      reject(new ApiStatusError(failureStatus(500, '', `error trying to reach service: ${err.message}`)));
    });
    out.on('response', (answer) => {
      const back: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers)) {
        if (v === undefined || k === 'connection' || k === 'keep-alive' || k === 'transfer-encoding')
          continue;
        back[k] = v;
      }
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
      answer.on('end', resolve);
      answer.on('error', () => {
        res.destroy();
        resolve();
      });
    });
    req.pipe(out);
  });
}

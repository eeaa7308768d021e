/**
 * The request of an `httpGet` probe (upstream `pkg/probe/http/request.go`): URL from scheme,
 * host (or the pod IP), port (number or named container port) and path; the probe's headers
 * with `User-Agent` and `Accept` defaults and `Host` as the request host.
 *
 * @module
 */
import type { V1Container, V1HTTPGetAction } from '@kubernetes/client-node';
import { joinHostPort } from '@nodeagent/core';
import { resolveContainerPort } from './resolve-port.js';

/** A prepared probe request. */
export interface HTTPProbeRequest {
  /** `http:` or `https:` (other schemes fail when sent, as in Go). */
  readonly scheme: string;
  /** The host to connect to (the probe's `host`, else the pod IP). */
  readonly host: string;
  /** The resolved port. */
  readonly port: number;
  /** Path and query as given (`/` when empty). */
  readonly path: string;
  /** The URL as Go prints it in errors (`http://10.1.2.3:8080/healthz`). */
  readonly url: string;
  /** Header name (canonical form) → values; `Host` excluded. */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  /** The `Host` header value, when one was given and is not empty. */
  readonly hostHeader: string | undefined;
}

/**
 * Builds the request of `action` for `container` in a pod with `podIP` (upstream
 * `NewRequestForHTTPGetAction`); `userAgent` is `kube-probe/<major>.<minor>`.
 * Throws (a probe error) when the port cannot be resolved.
 */
export function newHTTPProbeRequest(
  action: V1HTTPGetAction,
  container: V1Container,
  podIP: string,
  userAgent: string,
): HTTPProbeRequest {
  const scheme = String(action.scheme ?? '').toLowerCase() || 'http';
  const host = action.host || podIP;
  const port = resolveContainerPort(action.port, container);
  const rawPath = String(action.path ?? '');
  const path = rawPath === '' ? '/' : rawPath.startsWith('/') ? rawPath : `/${rawPath}`;
  const url = `${scheme}://${joinHostPort(host, port)}${rawPath === '' ? '' : path}`;
  const headers: Record<string, string[]> = {};
  for (const h of Array.isArray(action.httpHeaders) ? action.httpHeaders : []) {
    const name = canonicalHeaderKey(String(h.name));
    const values = headers[name] ?? [];
    values.push(String(h.value ?? ''));
    headers[name] = values;
  }
  if (headers['User-Agent'] === undefined) headers['User-Agent'] = [userAgent];
  if (headers.Accept === undefined) headers.Accept = ['*/*'];
  else if (headers.Accept[0] === '') delete headers.Accept;
  const hostValue = headers.Host?.[0];
  delete headers.Host;
  return { scheme, host, port, path, url, headers, hostHeader: hostValue === '' ? undefined : hostValue };
}

/** Go's `textproto.CanonicalMIMEHeaderKey`: `x-custom-header` → `X-Custom-Header`. */
export function canonicalHeaderKey(name: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

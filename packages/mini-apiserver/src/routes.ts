/**
 * URL parsing: which resource, namespace, name and subresource a path addresses.
 *
 * @module
 * @internal
 */
import { type ResourceType, resourceTypeForPath } from './resources.js';

/** A path addressing a served resource. */
export interface ResourceRoute {
  readonly kind: 'resource';
  readonly type: ResourceType;
  /** Namespace from the path (`undefined` for all namespaces or cluster-scoped types). */
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
  /** The legacy `/watch/` path form was used. */
  readonly legacyWatch: boolean;
}

/** A discovery or health path. */
export interface OtherRoute {
  readonly kind: 'api' | 'apis' | 'group' | 'resources' | 'version' | 'health' | 'openapi' | 'unknown';
  readonly group?: string;
  readonly version?: string;
}

/** Decodes a `%`-escaped path segment; a sequence that is not UTF-8 is kept as sent. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Parses a request path. */
export function parseRoute(pathname: string): ResourceRoute | OtherRoute {
  const parts = pathname
    .split('/')
    .filter((p) => p !== '')
    .map(decodeSegment);
  const [root] = parts;
  if (parts.length === 0) return { kind: 'unknown' };
  if (root === 'version' && parts.length === 1) return { kind: 'version' };
  if (root === 'healthz' || root === 'livez' || root === 'readyz') return { kind: 'health' };
  if (root === 'openapi') return { kind: 'openapi' };
  let group: string;
  let version: string | undefined;
  let rest: string[];
  if (root === 'api') {
    if (parts.length === 1) return { kind: 'api' };
    group = '';
    version = parts[1];
    rest = parts.slice(2);
  } else if (root === 'apis') {
    if (parts.length === 1) return { kind: 'apis' };
    group = parts[1] as string;
    if (parts.length === 2) return { kind: 'group', group };
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return { kind: 'unknown' };
  }
  if (version === undefined) return { kind: 'unknown' };
  if (rest.length === 0) return { kind: 'resources', group, version };
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  // `namespaces/<ns>/<resource>...` addresses a namespaced resource; `namespaces/<name>[/status]`
  // addresses the namespace object itself.
  if (rest[0] === 'namespaces' && rest.length >= 3 && group + version !== '' && rest[2] !== undefined) {
    const candidate = resourceTypeForPath(group, version, rest[2]);
    if (candidate?.namespaced) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
  }
  const [resource, name, subresource, ...extra] = rest;
  if (resource === undefined || extra.length > 0) return { kind: 'unknown' };
  const type = resourceTypeForPath(group, version, resource);
  if (!type) return { kind: 'unknown' };
  if (namespace !== undefined && !type.namespaced) return { kind: 'unknown' };
  return { kind: 'resource', type, namespace, name, subresource, legacyWatch };
}

/**
 * What a request asks to do, as kube-apiserver's `RequestInfoFactory` reads it from the
 * method, path and query: a resource request (verb, API group, version, namespace, resource,
 * subresource, name) or a non-resource request (path and the lower-case method). The
 * authorizer decides on these attributes.
 *
 * @module
 */

import { isTrueParam } from './query-params.js';

/** The attributes of one request the authorizer decides on. */
export interface RequestInfo {
  /** Whether the path addresses an API resource (`/api/v1/...`, `/apis/<group>/<version>/...`). */
  readonly isResourceRequest: boolean;
  /** The request path (without query). */
  readonly path: string;
  /** `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`; for non-resource requests the lower-case method. */
  readonly verb: string;
  /** API group (`''` for the core group). */
  readonly apiGroup: string;
  /** API version. */
  readonly apiVersion: string;
  /** Namespace (`''` when none; a namespace's own name for `namespaces/<name>`). */
  readonly namespace: string;
  /** Plural resource. */
  readonly resource: string;
  /** Subresource, e.g. `status`. */
  readonly subresource: string;
  /** Object name (`''` for collections; from an exact `metadata.name` field selector on list/watch). */
  readonly name: string;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const SPECIAL_VERBS = new Set(['proxy', 'watch']);
const METHOD_VERBS: Readonly<Record<string, string>> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

function isValidPathSegmentName(name: string): boolean {
  return name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
}

function exactNameSelector(fieldSelector: string | null): string | undefined {
  if (!fieldSelector) return undefined;
  const terms = fieldSelector.split(',').filter((t) => t !== '');
  for (const t of terms) {
    const m = /^metadata\.name(==?)(.*)$/.exec(t.trim());
    if (m) return m[2];
  }
  return undefined;
}

/** Reads the request attributes from a method, a decoded path and the query. */
export function requestInfo(method: string, pathname: string, query: URLSearchParams): RequestInfo {
  const parts = pathname.split('/').filter((p) => p !== '');
  const nonResource: RequestInfo = {
    isResourceRequest: false,
    path: pathname,
    verb: method.toLowerCase(),
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return nonResource;
  let rest = parts.slice(1);
  let apiGroup = '';
  if (parts[0] === 'apis') {
    if (rest.length < 3) return nonResource;
    apiGroup = rest[0] as string;
    rest = rest.slice(1);
  }
  const apiVersion = rest[0] as string;
  rest = rest.slice(1);
  let verb: string;
  if (SPECIAL_VERBS.has(rest[0] as string)) {
    if (rest.length < 2) return nonResource;
    verb = rest[0] as string;
    rest = rest.slice(1);
  } else {
    verb = METHOD_VERBS[method.toUpperCase()] ?? '';
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1] as string;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] as string)) rest = rest.slice(2);
  }
  const resource = rest[0] ?? '';
  let name = rest[1] ?? '';
  const subresource = rest.length >= 3 && verb !== 'proxy' ? (rest[2] as string) : '';
  if (name === '' && verb === 'get') {
    verb = isTrueParam(query.get('watch')) ? 'watch' : 'list';
    const selected = exactNameSelector(query.get('fieldSelector'));
    if (selected !== undefined && isValidPathSegmentName(selected)) name = selected;
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';
  return {
    isResourceRequest: true,
    path: pathname,
    verb,
    apiGroup,
    apiVersion,
    namespace,
    resource,
    subresource,
    name,
  };
}

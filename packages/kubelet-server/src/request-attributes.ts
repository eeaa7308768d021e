/**
 * What a request to the kubelet API asks for, in authorization terms (upstream
 * `nodeAuthorizerAttributesGetter.GetRequestAttributes`): always `nodes/<subresource>` of
 * this node, the verb from the HTTP method, the subresource from the path — `stats`,
 * `metrics`, `log` (`/logs/`), `checkpoint`, else `proxy`; with fine-grained authorization
 * (`KubeletFineGrainedAuthz`) `/pods`, `/runningpods`, `/healthz` and `/configz` are
 * checked first as `pods`, `pods`, `healthz`, `configz` and fall back to `proxy`.
 *
 * @module
 */

/** The user a request was authenticated as (`user.Info`). */
export interface UserInfo {
  /** User name, e.g. `system:node:n1` or `system:anonymous`. */
  readonly name: string;
  /** Groups, e.g. `system:authenticated`. */
  readonly groups: readonly string[];
  /** UID, when the authenticator knows it. */
  readonly uid?: string;
  /** Extra attributes (TokenReview `extra`). */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** One authorization question (`authorizer.Attributes` of a resource request). */
export interface RequestAttributes {
  /** Who asks. */
  readonly user: UserInfo;
  /** `get`, `create`, `update`, `patch`, `delete` (empty for other methods). */
  readonly verb: string;
  /** Always `nodes`. */
  readonly resource: 'nodes';
  /** `proxy`, `stats`, `metrics`, `log`, `checkpoint`, `pods`, `healthz` or `configz`. */
  readonly subresource: string;
  /** This node's name. */
  readonly name: string;
  /** Always `v1`. */
  readonly apiVersion: 'v1';
  /** The request path. */
  readonly path: string;
}

/** The API verb of an HTTP method, as the kubelet maps it (others give ''). */
export function apiVerbOf(method: string): string {
  switch (method.toUpperCase()) {
    case 'POST':
      return 'create';
    case 'GET':
      return 'get';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return '';
  }
}

/** `subpath` is `path` or below it (upstream `isSubpath`). */
export function isSubpath(subpath: string, path: string): boolean {
  const p = path.endsWith('/') ? path.slice(0, -1) : path;
  return subpath === p || (subpath.startsWith(p) && subpath[p.length] === '/');
}

/**
 * The attributes to check for a request, in order; the kubelet allows the request when any
 * one of them is allowed (the fine-grained one first, then `proxy`).
 */
export function requestAttributes(
  nodeName: string,
  user: UserInfo,
  method: string,
  path: string,
  fineGrained: boolean,
): RequestAttributes[] {
  const verb = apiVerbOf(method);
  const at = (subresource: string): RequestAttributes => ({
    user,
    verb,
    resource: 'nodes',
    subresource,
    name: nodeName,
    apiVersion: 'v1',
    path,
  });
  if (isSubpath(path, '/stats')) return [at('stats')];
  if (isSubpath(path, '/metrics')) return [at('metrics')];
  if (isSubpath(path, '/logs')) return [at('log')];
  if (isSubpath(path, '/checkpoint')) return [at('checkpoint')];
  if (fineGrained) {
    if (isSubpath(path, '/pods') || isSubpath(path, '/runningpods/')) return [at('pods'), at('proxy')];
    if (isSubpath(path, '/healthz')) return [at('healthz'), at('proxy')];
    if (isSubpath(path, '/configz')) return [at('configz'), at('proxy')];
  }
  return [at('proxy')];
}

/**
 * kube-apiserver's impersonation filter (`Impersonate-User`, `Impersonate-Group`,
 * `Impersonate-Uid` headers; `kubectl --as`, `--as-group`): the caller must be allowed the
 * `impersonate` verb on `users` (or `serviceaccounts` for `system:serviceaccount:<ns>:<name>`),
 * `groups` and `uids`; the request then runs as the impersonated user, with
 * `system:authenticated` added (and the service account groups for a service account), as
 * upstream. A refusal is upstream's 403 (`users "bob" is forbidden: User "alice" cannot
 * impersonate resource "users" in API group "" at the cluster scope`). `Impersonate-Extra-*`
 * headers are refused with 400 (not implemented).
 *
 * @module
 * @internal
 */
import type { IncomingMessage } from 'node:http';
import type { Authorizer } from './access-review.js';
import { badRequest, forbidden } from './errors.js';
import { forbiddenMessage, type UserInfo } from './rbac.js';
import type { RequestInfo } from './request-info.js';

const SA_PREFIX = 'system:serviceaccount:';

function headerValues(req: IncomingMessage, name: string): string[] {
  const v = req.headers[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * The user a request runs as: `user`, or the one it impersonates when allowed.
 * @throws ApiStatusError 403 when an impersonation is not allowed, 400 for groups or a UID
 *   without a user, or `Impersonate-Extra-*`.
 */
export function impersonatedUser(
  req: IncomingMessage,
  user: UserInfo,
  authorizer: Authorizer | undefined,
): UserInfo {
  const name = headerValues(req, 'impersonate-user')[0];
  const groups = headerValues(req, 'impersonate-group');
  const uid = headerValues(req, 'impersonate-uid')[0];
  const extras = Object.keys(req.headers).filter((h) => h.startsWith('impersonate-extra-'));
  if (name === undefined) {
    if (groups.length > 0 || uid !== undefined || extras.length > 0) {
      const what = [
        ...groups.map((g) => `group=${g}`),
        ...(uid !== undefined ? [`uid=${uid}`] : []),
        ...extras.map((e) => e),
      ];
      throw badRequest(`requested [${what.join(' ')}] without impersonating a user`);
    }
    return user;
  }
  if (extras.length > 0) {
    throw badRequest('mini-apiserver does not implement Impersonate-Extra-* headers');
  }
  const check = (info: RequestInfo) => {
    if (authorizer === undefined) return;
    const decision = authorizer.authorize(user, info);
    if (!decision.allowed) {
      throw forbidden(info.apiGroup, info.resource, info.name, forbiddenMessage(user, info, decision.reason));
    }
  };
  const attrs = (apiGroup: string, resource: string, objName: string, namespace = ''): RequestInfo => ({
    isResourceRequest: true,
    path: '',
    verb: 'impersonate',
    apiGroup,
    apiVersion: '',
    namespace,
    resource,
    subresource: '',
    name: objName,
  });
  const outGroups: string[] = [];
  if (name.startsWith(SA_PREFIX)) {
    const [ns = '', sa = ''] = name.slice(SA_PREFIX.length).split(':');
    check(attrs('', 'serviceaccounts', sa, ns));
    outGroups.push('system:serviceaccounts', `system:serviceaccounts:${ns}`);
  } else {
    check(attrs('', 'users', name));
  }
  for (const g of groups) {
    check(attrs('', 'groups', g));
    if (!outGroups.includes(g)) outGroups.push(g);
  }
  if (uid !== undefined) check(attrs('authentication.k8s.io', 'uids', uid));
  if (name === 'system:anonymous') {
    if (!outGroups.includes('system:unauthenticated')) outGroups.push('system:unauthenticated');
  } else if (!outGroups.includes('system:authenticated')) {
    outGroups.push('system:authenticated');
  }
  return { name, groups: outGroups };
}

/**
 * kube-apiserver's RBAC privilege-escalation prevention (the `policybased` storages of
 * roles, clusterroles, rolebindings and clusterrolebindings): in RBAC mode a user may only
 * write a Role/ClusterRole whose rules it already holds (in the namespace of the role, or
 * cluster-wide), unless it may `escalate` it; and may only bind a role whose rules it holds,
 * unless it may `bind` it. Members of `system:masters` are never checked. A ClusterRole
 * with an `aggregationRule` needs every permission. Refusals are 403 with upstream's text:
 * `clusterroles.rbac.authorization.k8s.io "x" is forbidden: user "u" (groups=["g"]) is
 * attempting to grant RBAC permissions not currently held:` and one compact rule a line.
 *
 * @module
 * @internal
 */
import type { Authorizer } from './access-review.js';
import { ApiStatusError, failureStatus, forbidden } from './errors.js';
import { isPlainObject, type KubeObject } from './object.js';
import { type PolicyRule, SYSTEM_MASTERS, type UserInfo } from './rbac.js';
import {
  aggregateErrors,
  compactRules,
  compactString,
  goQuoteList,
  roleReferenceRules,
  rulesFor,
  rulesOfRole,
  uncoveredRules,
} from './rbac-rules.js';
import type { RequestInfo } from './request-info.js';
import type { AdmitFunc, ObjectStore } from './store.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/**
 * Upstream `ConfirmNoEscalation`: the message of the refusal when `user`'s rules in
 * `namespace` do not cover `rules`, or `undefined` when they do.
 */
export function escalationError(
  store: ObjectStore,
  user: UserInfo,
  namespace: string,
  rules: readonly PolicyRule[],
): string | undefined {
  const owner = rulesFor(store, user, namespace);
  const missing = uncoveredRules(owner.rules, rules);
  if (missing.length === 0) return undefined;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${JSON.stringify(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (owner.errors.length > 0) msg += `; resolution errors: [${aggregateErrors(owner.errors)}]`;
  return msg;
}

const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : isPlainObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canonical(v[k])]),
        )
      : v;

/** Upstream `IsOnlyMutatingGCFields`: only ownerReferences/finalizers differ. */
function onlyGcFields(obj: KubeObject, old: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const meta: Record<string, unknown> = isPlainObject(o.metadata) ? { ...o.metadata } : {};
    for (const k of ['ownerReferences', 'finalizers', 'resourceVersion', 'managedFields', 'generation'])
      delete meta[k];
    const { kind: _k, apiVersion: _a, ...rest } = o;
    return JSON.stringify(canonical({ ...rest, metadata: meta }));
  };
  return strip(obj) === strip(old);
}

const nameOf = (o: KubeObject) => (typeof o.metadata?.name === 'string' ? o.metadata.name : '');

/**
 * The admission step for a write of an RBAC object by `user`, or `undefined` when none
 * applies (another resource, a privileged user, AlwaysAllow mode).
 */
export function rbacEscalationAdmit(
  authorizer: Authorizer | undefined,
  store: ObjectStore,
  user: UserInfo,
  info: RequestInfo,
): AdmitFunc | undefined {
  if (authorizer === undefined || !info.isResourceRequest || info.apiGroup !== RBAC_GROUP) return undefined;
  if (user.groups.includes(SYSTEM_MASTERS)) return undefined;
  const resource = info.resource;
  const namespace = info.namespace;
  if (resource === 'roles' || resource === 'clusterroles') {
    // Upstream RoleEscalationAuthorized: `escalate` on the request's resource and name.
    const escalate = authorizer.authorize(user, { ...info, verb: 'escalate', apiVersion: '*' });
    if (escalate.allowed) return undefined;
    return (obj, old) => {
      if (old !== undefined && onlyGcFields(obj, old)) return;
      const msg = escalationError(store, user, namespace, rulesOfRole(obj));
      if (msg !== undefined) throw forbidden(RBAC_GROUP, resource, nameOf(obj), msg);
      if (
        resource === 'clusterroles' &&
        isPlainObject((obj as { aggregationRule?: unknown }).aggregationRule)
      ) {
        if (escalationError(store, user, namespace, FULL_AUTHORITY) !== undefined) {
          throw forbidden(
            RBAC_GROUP,
            resource,
            nameOf(obj),
            'must have cluster-admin privileges to use the aggregationRule',
          );
        }
      }
    };
  }
  if (resource === 'rolebindings' || resource === 'clusterrolebindings') {
    return (obj, old) => {
      if (old !== undefined && onlyGcFields(obj, old)) return;
      const ref = (obj as { roleRef?: unknown }).roleRef;
      const r = isPlainObject(ref) ? ref : {};
      const kind = r.kind === 'ClusterRole' ? 'clusterroles' : r.kind === 'Role' ? 'roles' : undefined;
      if (kind !== undefined) {
        // Upstream BindingAuthorized: `bind` on the role, in the binding's namespace.
        const bind = authorizer.authorize(user, {
          isResourceRequest: true,
          path: '',
          verb: 'bind',
          apiGroup: typeof r.apiGroup === 'string' ? r.apiGroup : '',
          apiVersion: '',
          namespace,
          resource: kind,
          subresource: '',
          name: typeof r.name === 'string' ? r.name : '',
        });
        if (bind.allowed) return;
      }
      const rules = roleReferenceRules(store, ref, namespace);
      if (typeof rules === 'string') {
        const missing = /^(cluster)?role\.rbac\.authorization\.k8s\.io ("(?:[^"\\]|\\.)*") not found$/.exec(
          rules,
        );
        if (missing)
          throw new ApiStatusError(
            failureStatus(404, 'NotFound', rules, {
              name: JSON.parse(missing[2] as string) as string,
              group: RBAC_GROUP,
              kind: missing[1] ? 'clusterrole' : 'role',
            }),
          );
        throw new ApiStatusError(failureStatus(500, 'InternalError', `Internal error occurred: ${rules}`));
      }
      const msg = escalationError(store, user, namespace, rules);
      if (msg !== undefined) throw forbidden(RBAC_GROUP, resource, nameOf(obj), msg);
    };
  }
  return undefined;
}

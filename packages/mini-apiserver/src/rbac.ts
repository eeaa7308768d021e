/**
 * kube-apiserver's RBAC authorizer over the Roles, ClusterRoles, RoleBindings and
 * ClusterRoleBindings in the store: a request is allowed when a rule of a role bound to the
 * user, one of its groups or its service account matches the verb, API group, resource
 * (`pods/status`, `*`, `*\/status`), resource name, or non-resource URL (`*`, a trailing `*`).
 * Members of `system:masters` are allowed everything, before RBAC, as upstream.
 *
 * @module
 */
import { isPlainObject, type KubeObject } from './object.js';
import type { RequestInfo } from './request-info.js';
import type { ObjectStore } from './store.js';

/** An authenticated user: its name and groups (`system:authenticated` included). */
export interface UserInfo {
  /** User name (a token's user, a client certificate's common name). */
  readonly name: string;
  /** Groups (client certificate organizations, token groups, `system:authenticated`). */
  readonly groups: readonly string[];
}

/** The group whose members every authorizer allows (kube-apiserver's privileged group). */
export const SYSTEM_MASTERS = 'system:masters';

/** One rule of a Role or ClusterRole (rbac.authorization.k8s.io/v1 `PolicyRule`). */
export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

/** An authorization decision and its reason (upstream's text). */
export interface Decision {
  readonly allowed: boolean;
  /** `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "u"`, or the errors met. */
  readonly reason: string;
}

const has = (list: readonly string[] | undefined, v: string): boolean =>
  list !== undefined && (list.includes('*') || list.includes(v));

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (
      subresource !== '' &&
      r.length === subresource.length + 2 &&
      r.startsWith('*/') &&
      r.endsWith(subresource)
    )
      return true;
  }
  return false;
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true;
  }
  return false;
}

/** Whether one rule allows a request (upstream `RuleAllows`). */
export function ruleAllows(info: RequestInfo, rule: PolicyRule): boolean {
  if (info.isResourceRequest) {
    return (
      has(rule.verbs, info.verb) &&
      has(rule.apiGroups, info.apiGroup) &&
      resourceMatches(rule, info.resource, info.subresource) &&
      (rule.resourceNames === undefined ||
        rule.resourceNames.length === 0 ||
        rule.resourceNames.includes(info.name))
    );
  }
  return has(rule.verbs, info.verb) && nonResourceURLMatches(rule, info.path);
}

interface Subject {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

function subjectsOf(binding: KubeObject): Subject[] {
  const subjects = (binding as { subjects?: unknown }).subjects;
  return Array.isArray(subjects) ? subjects.filter(isPlainObject).map((s) => s as unknown as Subject) : [];
}

function appliesTo(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount':
      return user.name === `system:serviceaccount:${s.namespace || bindingNamespace}:${s.name}`;
    default:
      return false;
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount')
    return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

function rulesOf(role: KubeObject): PolicyRule[] {
  const rules = (role as { rules?: unknown }).rules;
  return Array.isArray(rules) ? rules.filter(isPlainObject).map((r) => r as unknown as PolicyRule) : [];
}

/** Decides requests with the RBAC objects in a store. */
export class RbacAuthorizer {
  constructor(readonly store: ObjectStore) {}

  /** Upstream's decision for `user` doing `info`. */
  authorize(user: UserInfo, info: RequestInfo): Decision {
    if (user.groups.includes(SYSTEM_MASTERS)) return { allowed: true, reason: '' };
    const errors: string[] = [];
    const bindings: Array<{ binding: KubeObject; kind: 'ClusterRoleBinding' | 'RoleBinding' }> = [
      ...this.store
        .list('clusterrolebindings')
        .map((binding) => ({ binding, kind: 'ClusterRoleBinding' as const })),
      ...(info.namespace !== ''
        ? this.store
            .list('rolebindings', info.namespace)
            .map((binding) => ({ binding, kind: 'RoleBinding' as const }))
        : []),
    ];
    for (const { binding, kind } of bindings) {
      const ns = binding.metadata?.namespace ?? '';
      const subject = subjectsOf(binding).find((s) => appliesTo(user, s, ns));
      if (!subject) continue;
      const ref = (binding as { roleRef?: { kind?: string; name?: string } }).roleRef ?? {};
      const roleKind = ref.kind ?? '';
      const roleName = ref.name ?? '';
      const role =
        roleKind === 'ClusterRole'
          ? this.store.tryGet('clusterroles', undefined, roleName)
          : kind === 'RoleBinding' && roleKind === 'Role'
            ? this.store.tryGet('roles', ns, roleName)
            : undefined;
      if (!role) {
        errors.push(
          `${roleKind.toLowerCase()}.rbac.authorization.k8s.io ${JSON.stringify(roleName)} not found`,
        );
        continue;
      }
      if (rulesOf(role).some((r) => ruleAllows(info, r))) {
        const bindingName =
          kind === 'RoleBinding' ? `${binding.metadata?.name}/${ns}` : (binding.metadata?.name ?? '');
        return {
          allowed: true,
          reason: `RBAC: allowed by ${kind} ${JSON.stringify(bindingName)} of ${roleKind} ${JSON.stringify(roleName)} to ${describeSubject(subject, ns)}`,
        };
      }
    }
    const reason =
      errors.length === 0 ? '' : `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`;
    return { allowed: false, reason };
  }
}

/** kube-apiserver's message of a 403 for `info` (`forbiddenMessage` + the authorizer's reason). */
export function forbiddenMessage(user: UserInfo | undefined, info: RequestInfo, reason: string): string {
  const name = user?.name ?? '';
  let msg: string;
  if (!info.isResourceRequest) {
    msg = `User ${JSON.stringify(name)} cannot ${info.verb} path ${JSON.stringify(info.path)}`;
  } else {
    const resource = info.subresource === '' ? info.resource : `${info.resource}/${info.subresource}`;
    const scope =
      info.namespace !== '' ? `in the namespace ${JSON.stringify(info.namespace)}` : 'at the cluster scope';
    msg = `User ${JSON.stringify(name)} cannot ${info.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(info.apiGroup)} ${scope}`;
  }
  return reason === '' ? msg : `${msg}: ${reason}`;
}

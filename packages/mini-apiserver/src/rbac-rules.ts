/**
 * kube-apiserver's RBAC rule resolution and comparison, for what needs a user's whole rule
 * set rather than one decision: `SelfSubjectRulesReview` (`kubectl auth can-i --list`) and
 * the escalation check on Role/ClusterRole/RoleBinding/ClusterRoleBinding writes
 * (upstream `DefaultRuleResolver.RulesFor`, `Covers`, `CompactRules`, `CompactString`).
 *
 * @module
 */
import { isPlainObject, type KubeObject } from './object.js';
import type { PolicyRule, UserInfo } from './rbac.js';
import type { ObjectStore } from './store.js';

/** The rules that apply to a user in a namespace, and the errors met resolving them. */
export interface ResolvedRules {
  /** Every rule of every role bound to the user (cluster-wide, then in the namespace). */
  readonly rules: PolicyRule[];
  /** Bindings whose role could not be found (`clusterrole.rbac.authorization.k8s.io "x" not found`). */
  readonly errors: string[];
}

interface Subject {
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
}

function subjectApplies(user: UserInfo, s: Subject, namespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user.name;
    case 'Group':
      return typeof s.name === 'string' && user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || namespace;
      return ns !== '' && user.name === `system:serviceaccount:${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

const stringList = (v: unknown): string[] | undefined =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;

/** A rule as stored, with every list field checked (anything else dropped). */
export function policyRuleOf(raw: unknown): PolicyRule {
  const r = isPlainObject(raw) ? raw : {};
  const out: {
    verbs: string[];
    apiGroups?: string[];
    resources?: string[];
    resourceNames?: string[];
    nonResourceURLs?: string[];
  } = { verbs: stringList(r.verbs) ?? [] };
  for (const k of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
    const v = stringList(r[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** The rules of a Role or ClusterRole object. */
export function rulesOfRole(role: KubeObject): PolicyRule[] {
  const rules = (role as { rules?: unknown }).rules;
  return Array.isArray(rules) ? rules.map(policyRuleOf) : [];
}

/**
 * The rules of the role a binding refers to (upstream `GetRoleReferenceRules`): a
 * ClusterRole, or a Role in the binding's namespace.
 * @returns the rules, or the error text of a missing role or an unsupported kind.
 */
export function roleReferenceRules(
  store: ObjectStore,
  roleRef: unknown,
  bindingNamespace: string,
): PolicyRule[] | string {
  const ref = isPlainObject(roleRef) ? roleRef : {};
  const kind = typeof ref.kind === 'string' ? ref.kind : '';
  const name = typeof ref.name === 'string' ? ref.name : '';
  if (kind === 'ClusterRole') {
    const role = store.tryGet('clusterroles', undefined, name);
    return role
      ? rulesOfRole(role)
      : `clusterrole.rbac.authorization.k8s.io ${JSON.stringify(name)} not found`;
  }
  if (kind === 'Role') {
    const role = bindingNamespace === '' ? undefined : store.tryGet('roles', bindingNamespace, name);
    return role ? rulesOfRole(role) : `role.rbac.authorization.k8s.io ${JSON.stringify(name)} not found`;
  }
  return `unsupported role reference kind: ${JSON.stringify(kind)}`;
}

/** Upstream `RulesFor`: the rules of the ClusterRoleBindings, then of the namespace's RoleBindings, that apply. */
export function rulesFor(store: ObjectStore, user: UserInfo, namespace: string): ResolvedRules {
  const rules: PolicyRule[] = [];
  const errors: string[] = [];
  const visit = (binding: KubeObject, bindingNamespace: string) => {
    const subjects = (binding as { subjects?: unknown }).subjects;
    const list = Array.isArray(subjects) ? subjects.filter(isPlainObject) : [];
    if (!list.some((s) => subjectApplies(user, s as Subject, bindingNamespace))) return;
    const got = roleReferenceRules(store, (binding as { roleRef?: unknown }).roleRef, bindingNamespace);
    if (typeof got === 'string') errors.push(got);
    else rules.push(...got);
  };
  for (const b of store.list('clusterrolebindings')) visit(b, '');
  if (namespace !== '') for (const b of store.list('rolebindings', namespace)) visit(b, namespace);
  return { rules, errors };
}

/** Upstream's aggregate of errors as one string (`e`, or `[e1, e2]`). */
export function aggregateErrors(errors: readonly string[]): string {
  return errors.length === 1 ? (errors[0] as string) : `[${errors.join(', ')}]`;
}

/** Upstream `BreakdownRule`: one rule per (group, resource, verb, name) and per (URL, verb). */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length > 0) {
          for (const n of names)
            out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [n] });
        } else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

const has = (set: readonly string[] | undefined, v: string) => (set ?? []).includes(v);
const hasAll = (set: readonly string[] | undefined, want: readonly string[] | undefined) =>
  (want ?? []).every((w) => has(set, w));

function resourcesCover(owner: readonly string[] | undefined, want: readonly string[] | undefined): boolean {
  if (has(owner, '*') || hasAll(owner, want)) return true;
  for (const path of want ?? []) {
    if (has(owner, path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!has(owner, `*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function urlsCover(owner: readonly string[] | undefined, want: readonly string[] | undefined): boolean {
  return (want ?? []).every((path) =>
    (owner ?? []).some((o) => o === path || (o.endsWith('*') && path.startsWith(o.replace(/\*+$/, '')))),
  );
}

/** Upstream `ruleCovers`: whether `owner` covers the broken-down `sub`. */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups);
  const ownerNames = owner.resourceNames ?? [];
  const names =
    (sub.resourceNames ?? []).length === 0
      ? ownerNames.length === 0
      : ownerNames.length === 0 || hasAll(ownerNames, sub.resourceNames);
  return (
    verbs &&
    groups &&
    resourcesCover(owner.resources, sub.resources) &&
    names &&
    urlsCover(owner.nonResourceURLs, sub.nonResourceURLs)
  );
}

/** Upstream `Covers`: the broken-down rules of `servant` that no rule of `owner` covers. */
export function uncoveredRules(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  return servant.flatMap(breakdownRule).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
}

/** Upstream `CompactRules`: merges single group/resource rules that differ only by verb. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, { apiGroups: string[]; resources: string[]; verbs: string[] }>();
  for (const r of rules) {
    const isSimple =
      (r.resourceNames ?? []).length === 0 &&
      (r.nonResourceURLs ?? []).length === 0 &&
      r.apiGroups?.length === 1 &&
      r.resources?.length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups?.[0], r.resources?.[0]]);
    const prev = simple.get(key);
    if (prev) prev.verbs.push(...r.verbs);
    else
      simple.set(key, {
        apiGroups: [...(r.apiGroups ?? [])],
        resources: [...(r.resources ?? [])],
        verbs: [...r.verbs],
      });
  }
  return [...out, ...simple.values()];
}

/** Go's `%q` of a string slice: `["a" "b"]`. */
export function goQuoteList(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;
}

/** Upstream `CompactString`: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if ((r.apiGroups ?? []).length > 0) parts.push(`APIGroups:${goQuoteList(r.apiGroups ?? [])}`);
  if ((r.resources ?? []).length > 0) parts.push(`Resources:${goQuoteList(r.resources ?? [])}`);
  if ((r.nonResourceURLs ?? []).length > 0)
    parts.push(`NonResourceURLs:${goQuoteList(r.nonResourceURLs ?? [])}`);
  if ((r.resourceNames ?? []).length > 0) parts.push(`ResourceNames:${goQuoteList(r.resourceNames ?? [])}`);
  if (r.verbs.length > 0) parts.push(`Verbs:${goQuoteList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

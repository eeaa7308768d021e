/**
 * The rest of authorization.k8s.io/v1 next to `SubjectAccessReview`:
 * `SelfSubjectRulesReview` (what the caller may do in a namespace; `kubectl auth can-i
 * --list`) and `LocalSubjectAccessReview` (a namespaced `SubjectAccessReview`). Answers are
 * kube-apiserver's: RBAC rules split into resource and non-resource rules, `incomplete`
 * false (RBAC resolves every rule), `evaluationError` naming roles that could not be found;
 * in AlwaysAllow mode, everything.
 *
 * @module
 * @internal
 */
import { ALWAYS_ALLOW, AUTHORIZATION_GROUP, type Authorizer, review } from './access-review.js';
import { badRequest, invalid } from './errors.js';
import { isPlainObject } from './object.js';
import type { UserInfo } from './rbac.js';
import { aggregateErrors, rulesFor } from './rbac-rules.js';
import type { RequestInfo } from './request-info.js';
import type { ObjectStore } from './store.js';

type Obj = Record<string, unknown>;

/**
 * Answers a `SelfSubjectRulesReview` for `user`: the rules of the RBAC objects in `store`
 * (or, with no store — AlwaysAllow — everything).
 * @throws ApiStatusError 400 `no namespace on request` without `spec.namespace`.
 */
export function selfSubjectRulesReview(body: Obj, user: UserInfo, store: ObjectStore | undefined): Obj {
  const spec = isPlainObject(body.spec) ? body.spec : {};
  const namespace = typeof spec.namespace === 'string' ? spec.namespace : '';
  if (namespace === '') throw badRequest('no namespace on request');
  const status: Obj = { resourceRules: [], nonResourceRules: [], incomplete: false };
  if (store === undefined) {
    status.resourceRules = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];
    status.nonResourceRules = [{ verbs: ['*'], nonResourceURLs: ['*'] }];
  } else {
    const { rules, errors } = rulesFor(store, user, namespace);
    const resourceRules: Obj[] = [];
    const nonResourceRules: Obj[] = [];
    for (const r of rules) {
      if ((r.resources ?? []).length > 0) {
        const rule: Obj = { verbs: r.verbs };
        if (r.apiGroups !== undefined) rule.apiGroups = r.apiGroups;
        rule.resources = r.resources;
        if ((r.resourceNames ?? []).length > 0) rule.resourceNames = r.resourceNames;
        resourceRules.push(rule);
      }
      if ((r.nonResourceURLs ?? []).length > 0) {
        nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
      }
    }
    status.resourceRules = resourceRules;
    status.nonResourceRules = nonResourceRules;
    if (errors.length > 0) status.evaluationError = aggregateErrors(errors);
  }
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: `${AUTHORIZATION_GROUP}/v1`,
    metadata: { creationTimestamp: null },
    spec: {},
    status,
  };
}

/**
 * Answers a `LocalSubjectAccessReview` posted to `namespace`.
 * @throws ApiStatusError 422 for non-resource attributes or a missing subject, 400 when
 * `metadata.namespace` differs from the URL's namespace.
 */
export function localSubjectAccessReview(
  namespace: string,
  body: Obj,
  caller: UserInfo,
  authorizer: Authorizer,
): Obj {
  const kind = 'LocalSubjectAccessReview';
  const spec = isPlainObject(body.spec) ? body.spec : {};
  if (isPlainObject(spec.nonResourceAttributes)) {
    throw invalid(AUTHORIZATION_GROUP, kind, '', [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(JSON.stringify(spec.nonResourceAttributes))}: disallowed on this kind of request`,
        field: 'spec.nonResourceAttributes',
      },
    ]);
  }
  const metadata: Obj = isPlainObject(body.metadata) ? { ...body.metadata } : {};
  if (metadata.namespace === undefined || metadata.namespace === '') metadata.namespace = namespace;
  if (metadata.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const answer = review('subjectaccessreviews', { ...body, metadata, spec }, caller, authorizer);
  return { ...answer, kind };
}

/**
 * The answer function for a request to one of these reviews (`POST` of a body read by the
 * caller), or `undefined` when `info` names another resource.
 */
export function authorizationReviewFor(
  info: RequestInfo,
  user: UserInfo,
  authorizer: Authorizer | undefined,
  store: ObjectStore,
): ((body: Obj) => Obj) | undefined {
  if (
    !info.isResourceRequest ||
    info.apiGroup !== AUTHORIZATION_GROUP ||
    info.apiVersion !== 'v1' ||
    info.name !== '' ||
    info.subresource !== ''
  )
    return undefined;
  if (info.resource === 'selfsubjectrulesreviews' && info.namespace === '') {
    return (body) => selfSubjectRulesReview(body, user, authorizer === undefined ? undefined : store);
  }
  if (info.resource === 'localsubjectaccessreviews' && info.namespace !== '') {
    return (body) => localSubjectAccessReview(info.namespace, body, user, authorizer ?? ALWAYS_ALLOW);
  }
  return undefined;
}

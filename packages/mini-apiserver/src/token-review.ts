/**
 * `TokenReview` (authentication.k8s.io/v1): authenticates the token of the review as
 * kube-apiserver's request authenticator would (the configured bearer tokens, audience
 * agnostic, then the service account tokens it issued) and reports the user, the audiences
 * and the error.
 *
 * @module
 * @internal
 */
import type { Authenticator } from './auth.js';
import { badRequest } from './errors.js';
import { isPlainObject } from './object.js';
import type { ServiceAccountTokens } from './serviceaccount-token.js';

/** The TokenReview answer for a review `body`. */
export function tokenReview(
  body: Record<string, unknown>,
  auth: Authenticator,
  tokens: ServiceAccountTokens,
): Record<string, unknown> {
  if (body.kind !== undefined && body.kind !== 'TokenReview') {
    throw badRequest(
      `the object provided is unrecognized (must be of type TokenReview): kind "${String(body.kind)}"`,
    );
  }
  const spec = isPlainObject(body.spec) ? body.spec : {};
  const token = typeof spec.token === 'string' ? spec.token : '';
  if (token === '') throw badRequest('token is required for TokenReview in authentication');
  const requested =
    Array.isArray(spec.audiences) && spec.audiences.length > 0 ? spec.audiences.map(String) : [];
  const target = requested.length > 0 ? requested : [...tokens.apiAudiences];
  const status: Record<string, unknown> = {};
  const staticUser = auth.staticToken(token);
  // The token-file authenticator is audience agnostic: it answers for the API audiences only.
  const staticAuds = target.filter((a) => tokens.apiAudiences.includes(a));
  if (staticUser && (target.length === 0 || staticAuds.length > 0)) {
    status.authenticated = true;
    status.user = { username: staticUser.name, groups: [...staticUser.groups] };
    if (staticAuds.length > 0) status.audiences = staticAuds;
  } else {
    const result = tokens.authenticate(token, target);
    if (result?.ok) {
      status.authenticated = true;
      status.user = result.user;
      status.audiences = result.audiences;
    } else {
      status.user = {};
      status.error = result?.error ?? 'invalid bearer token';
    }
  }
  return {
    kind: 'TokenReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { ...(isPlainObject(body.metadata) ? body.metadata : {}), creationTimestamp: null },
    spec: { ...spec },
    status,
  };
}

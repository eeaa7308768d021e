/**
 * Authorization of requests to the kubelet API: `AlwaysAllow`, or `Webhook` — a
 * `SubjectAccessReview` per {@link RequestAttributes}, answers cached 5 min when allowed and
 * 30 s when denied (the kubelet's `--authorization-webhook-cache-authorized-ttl` and
 * `-unauthorized-ttl` defaults).
 *
 * @module
 */
import { type Clock, realClock } from '@nodeagent/core';
import type { ApiPoster } from './api-poster.js';
import type { RequestAttributes } from './request-attributes.js';
import { TtlCache } from './ttl-cache.js';

/** An authorization decision. */
export interface AuthorizationDecision {
  /** Whether the request may proceed. */
  readonly allowed: boolean;
  /** Why (from the authorizer), possibly empty. */
  readonly reason: string;
}

/** Decides one {@link RequestAttributes}. */
export interface Authorizer {
  /** Rejects only when the decision could not be made (the kubelet answers 500 then). */
  authorize(attributes: RequestAttributes, signal?: AbortSignal): Promise<AuthorizationDecision>;
}

/** `--authorization-mode=AlwaysAllow`. */
export const alwaysAllowAuthorizer: Authorizer = {
  authorize: () => Promise.resolve({ allowed: true, reason: '' }),
};

/** The kubelet's default authorized TTL: 5 min. */
export const DEFAULT_AUTHORIZED_TTL_MS = 300_000;
/** The kubelet's default unauthorized TTL: 30 s. */
export const DEFAULT_UNAUTHORIZED_TTL_MS = 30_000;

/** Options of {@link SubjectAccessReviewAuthorizer}. */
export interface SubjectAccessReviewAuthorizerOptions {
  /** Posts the review (e.g. {@link createApiPoster}). */
  readonly post: ApiPoster;
  /** @default 300_000 */
  readonly authorizedTtlMs?: number;
  /** @default 30_000 */
  readonly unauthorizedTtlMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** Most decisions cached. @default 4096 */
  readonly maxCachedDecisions?: number;
}

/** `--authorization-mode=Webhook`: asks the API server with `authorization.k8s.io/v1` `SubjectAccessReview`s. */
export class SubjectAccessReviewAuthorizer implements Authorizer {
  readonly #options: SubjectAccessReviewAuthorizerOptions;
  readonly #cache: TtlCache<AuthorizationDecision>;

  /** @param options see {@link SubjectAccessReviewAuthorizerOptions}. */
  constructor(options: SubjectAccessReviewAuthorizerOptions) {
    this.#options = options;
    this.#cache = new TtlCache(options.clock ?? realClock, options.maxCachedDecisions ?? 4096);
  }

  /** Reviews `a` (from the cache when fresh). */
  async authorize(a: RequestAttributes, signal?: AbortSignal): Promise<AuthorizationDecision> {
    const spec = {
      user: a.user.name,
      groups: [...a.user.groups],
      ...(a.user.uid !== undefined ? { uid: a.user.uid } : {}),
      ...(a.user.extra !== undefined ? { extra: a.user.extra } : {}),
      resourceAttributes: {
        namespace: '',
        verb: a.verb,
        group: '',
        version: a.apiVersion,
        resource: a.resource,
        subresource: a.subresource,
        name: a.name,
      },
    };
    const key = JSON.stringify(spec);
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const answer = (await this.#options.post(
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
      signal,
    )) as { status?: { allowed?: boolean; reason?: string; evaluationError?: string } } | null;
    const decision = { allowed: answer?.status?.allowed === true, reason: answer?.status?.reason ?? '' };
    this.#cache.set(
      key,
      decision,
      decision.allowed
        ? (this.#options.authorizedTtlMs ?? DEFAULT_AUTHORIZED_TTL_MS)
        : (this.#options.unauthorizedTtlMs ?? DEFAULT_UNAUTHORIZED_TTL_MS),
    );
    return decision;
  }
}

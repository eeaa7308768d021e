/**
 * Authentication of requests to the kubelet API, as the kubelet's delegating
 * authenticator: a verified client certificate (`--client-ca-file`; user = CN, groups = O),
 * a bearer token reviewed by the API server (`--authentication-token-webhook`, a
 * `TokenReview` cached for `--authentication-token-webhook-cache-ttl`, 2 min by default),
 * and `system:anonymous` when `--anonymous-auth` is on and nothing else authenticated the
 * request. Authenticated users get the `system:authenticated` group.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { type Clock, realClock } from '@nodeagent/core';
import type { ApiPoster } from './api-poster.js';
import type { UserInfo } from './request-attributes.js';
import { TtlCache } from './ttl-cache.js';

/** The anonymous user (`system:anonymous` in `system:unauthenticated`). */
export const ANONYMOUS_USER: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

/** Reviews a bearer token: the user, or `undefined` when the token is not valid. */
export interface TokenAuthenticator {
  /** Resolves with the token's user, `undefined` for a token that does not authenticate. */
  authenticateToken(token: string, signal?: AbortSignal): Promise<UserInfo | undefined>;
}

/** The kubelet's default `--authentication-token-webhook-cache-ttl`: 2 min. */
export const DEFAULT_TOKEN_WEBHOOK_CACHE_TTL_MS = 120_000;

/** Options of {@link TokenReviewAuthenticator}. */
export interface TokenReviewAuthenticatorOptions {
  /** Posts the `TokenReview` (e.g. {@link createApiPoster}). */
  readonly post: ApiPoster;
  /** How long an answer (valid or not) is reused. Minimum: 0 (no cache). @default 120_000 */
  readonly cacheTtlMs?: number;
  /** Audiences to ask for. @default none (the API server's) */
  readonly audiences?: readonly string[];
  /** @default realClock */
  readonly clock?: Clock;
  /** Most tokens cached. @default 4096 */
  readonly maxCachedTokens?: number;
}

interface TokenReviewStatusLike {
  readonly authenticated?: boolean;
  readonly user?: {
    readonly username?: string;
    readonly uid?: string;
    readonly groups?: readonly string[];
    readonly extra?: Record<string, readonly string[]>;
  };
  readonly error?: string;
}

/** Thrown when the API server answers a TokenReview with an error. */
export class TokenReviewError extends Error {
  override readonly name = 'TokenReviewError';
}

/**
 * Authenticates bearer tokens by posting `authentication.k8s.io/v1` `TokenReview`s; answers
 * are cached by a hash of the token (never the token itself) for the cache TTL. Errors are
 * not cached.
 */
export class TokenReviewAuthenticator implements TokenAuthenticator {
  readonly #options: TokenReviewAuthenticatorOptions;
  readonly #cache: TtlCache<UserInfo | null>;
  readonly #ttlMs: number;

  /** @param options see {@link TokenReviewAuthenticatorOptions}. */
  constructor(options: TokenReviewAuthenticatorOptions) {
    this.#options = options;
    this.#ttlMs = options.cacheTtlMs ?? DEFAULT_TOKEN_WEBHOOK_CACHE_TTL_MS;
    this.#cache = new TtlCache(options.clock ?? realClock, options.maxCachedTokens ?? 4096);
  }

  /** Reviews `token` (from the cache when fresh). */
  async authenticateToken(token: string, signal?: AbortSignal): Promise<UserInfo | undefined> {
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached ?? undefined;
    const review = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, ...(this.#options.audiences ? { audiences: this.#options.audiences } : {}) },
    };
    const answer = (await this.#options.post(
      '/apis/authentication.k8s.io/v1/tokenreviews',
      review,
      signal,
    )) as { status?: TokenReviewStatusLike } | null;
    const status = answer?.status ?? {};
    if (status.error !== undefined && status.error !== '' && status.authenticated !== true) {
      throw new TokenReviewError(`token review failed: ${status.error}`);
    }
    const user: UserInfo | null =
      status.authenticated === true && status.user?.username
        ? {
            name: status.user.username,
            groups: [...(status.user.groups ?? [])],
            ...(status.user.uid ? { uid: status.user.uid } : {}),
            ...(status.user.extra ? { extra: status.user.extra } : {}),
          }
        : null;
    this.#cache.set(key, user, this.#ttlMs);
    return user ?? undefined;
  }
}

/** Options of {@link RequestAuthenticator}. */
export interface RequestAuthenticatorOptions {
  /** Accept verified client certificates (the server was given a client CA). @default false */
  readonly x509?: boolean;
  /** Reviews bearer tokens; none: tokens are not accepted. */
  readonly tokens?: TokenAuthenticator;
  /** `--anonymous-auth`: unauthenticated requests become `system:anonymous`. @default false */
  readonly anonymous?: boolean;
}

/** The outcome of authenticating one request. */
export type AuthenticationResult =
  | { readonly ok: true; readonly user: UserInfo }
  | { readonly ok: false; readonly error?: Error };

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  return user.groups.includes('system:authenticated')
    ? user
    : { ...user, groups: [...user.groups, 'system:authenticated'] };
}

/** Authenticates requests: client certificate, then bearer token, then anonymous. */
export class RequestAuthenticator {
  /** @param options see {@link RequestAuthenticatorOptions}. */
  constructor(readonly options: RequestAuthenticatorOptions) {}

  /** Who sent `req`; `ok: false` means 401 Unauthorized. */
  async authenticate(req: IncomingMessage, signal?: AbortSignal): Promise<AuthenticationResult> {
    let error: Error | undefined;
    const socket = req.socket as Partial<TLSSocket>;
    if (
      this.options.x509 === true &&
      socket.authorized === true &&
      typeof socket.getPeerCertificate === 'function'
    ) {
      const cert = socket.getPeerCertificate();
      const subject = cert?.subject as Record<string, string | string[]> | undefined;
      const cn = subject?.CN;
      const name = Array.isArray(cn) ? cn[0] : cn;
      if (name !== undefined && name !== '') {
        const o = subject?.O;
        const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
        return { ok: true, user: withAuthenticatedGroup({ name, groups }) };
      }
    }
    const header = req.headers.authorization;
    const bearer = header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    if (bearer !== undefined && this.options.tokens !== undefined) {
      try {
        const user = await this.options.tokens.authenticateToken(bearer, signal);
        if (user !== undefined) return { ok: true, user: withAuthenticatedGroup(user) };
      } catch (err) {
        error = err instanceof Error ? err : new Error(String(err));
      }
    }
    if (this.options.anonymous === true) return { ok: true, user: ANONYMOUS_USER };
    return error === undefined ? { ok: false } : { ok: false, error };
  }
}

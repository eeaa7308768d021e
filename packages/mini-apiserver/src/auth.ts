/**
 * Authentication of requests: bearer tokens (a set that can be replaced at runtime, for
 * token-rotation tests), service account tokens the server issued, and, on HTTPS, client certificates signed by the client CA, whose
 * common name is the user name — the real server's x509 and token-file authenticators.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { unauthorized } from './errors.js';
import { SYSTEM_MASTERS, type UserInfo } from './rbac.js';
import type { ServiceAccountTokens } from './serviceaccount-token.js';

/** A bearer token and the user it authenticates. */
export interface BearerToken {
  /** The token, as sent in `Authorization: Bearer <token>`. */
  readonly token: string;
  /** The user name recorded for requests with this token. */
  readonly user: string;
  /**
   * The user's groups (for RBAC); `system:authenticated` is added to every authenticated user.
   * @default []
   */
  readonly groups?: readonly string[];
}

/** User name of tokens given as bare strings. */
export const DEFAULT_TOKEN_USER = 'mini-apiserver-user';

/** Groups of tokens given as bare strings: the admin group, as a cluster's admin kubeconfig. */
export const DEFAULT_TOKEN_GROUPS: readonly string[] = [SYSTEM_MASTERS];

/** Group of every authenticated user. */
export const SYSTEM_AUTHENTICATED = 'system:authenticated';

/** The user of unauthenticated requests (when the server accepts them). */
export const ANONYMOUS_USER: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

/** Normalises `string | BearerToken` entries to a token → entry map. */
export function tokenMap(tokens: ReadonlyArray<string | BearerToken>): Map<string, BearerToken> {
  const map = new Map<string, BearerToken>();
  for (const t of tokens) {
    const entry: BearerToken =
      typeof t === 'string' ? { token: t, user: DEFAULT_TOKEN_USER, groups: DEFAULT_TOKEN_GROUPS } : t;
    if (entry.token === '') throw new TypeError('a bearer token must not be empty');
    map.set(entry.token, entry);
  }
  return map;
}

function authenticated(name: string, groups: readonly string[]): UserInfo {
  return {
    name,
    groups: groups.includes(SYSTEM_AUTHENTICATED) ? [...groups] : [...groups, SYSTEM_AUTHENTICATED],
  };
}

/**
 * The token of an `Authorization` header as kube-apiserver's bearer token authenticator
 * reads it: the scheme `bearer` in any case, one space, then the token up to the next space.
 * @returns `undefined` when the header carries no bearer token.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const [scheme, token] = header.trim().split(' ', 2);
  if (scheme?.toLowerCase() !== 'bearer' || token === undefined || token === '') return undefined;
  return token;
}

/** Checks credentials; holds the current token set. */
export class Authenticator {
  #tokens: Map<string, BearerToken>;

  /**
   * @param tokens initial bearer tokens
   * @param clientCertificates whether client certificates are verified and accepted
   */
  readonly #clientCertificates: boolean;
  readonly #serviceAccounts: ServiceAccountTokens | undefined;

  /**
   * @param tokens initial bearer tokens
   * @param clientCertificates whether client certificates are verified and accepted
   * @param serviceAccounts verifier of service account tokens (bound JWTs) also accepted
   */
  constructor(
    tokens: ReadonlyArray<string | BearerToken>,
    clientCertificates: boolean,
    serviceAccounts?: ServiceAccountTokens,
  ) {
    this.#clientCertificates = clientCertificates;
    this.#tokens = tokenMap(tokens);
    this.#serviceAccounts = serviceAccounts;
  }

  /** The configured bearer token entry of `token` (the token-file authenticator), if any. */
  staticToken(token: string): UserInfo | undefined {
    const entry = this.#tokens.get(token);
    return entry === undefined ? undefined : authenticated(entry.user, entry.groups ?? []);
  }

  /** Replaces the accepted bearer tokens (takes effect for the next request). */
  setTokens(tokens: ReadonlyArray<string | BearerToken>): void {
    this.#tokens = tokenMap(tokens);
  }

  /** The accepted tokens. */
  get tokenList(): readonly BearerToken[] {
    return [...this.#tokens.values()];
  }

  /**
   * Returns the user (undefined for anonymous access, allowed only when no token and no
   * client certificate is configured) or throws a 401 {@link ApiStatusError}. A client
   * certificate's organizations are the user's groups.
   */
  authenticate(req: IncomingMessage): UserInfo | undefined {
    if (this.#clientCertificates) {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate?.();
      // An empty object means no certificate was presented.
      if (peer && Object.keys(peer).length > 0) {
        if (!socket.authorized) {
          throw unauthorized(
            `Unauthorized: client certificate rejected: ${String(socket.authorizationError)}`,
          );
        }
        const cn = peer.subject?.CN;
        const user = Array.isArray(cn) ? cn[0] : cn;
        if (!user) throw unauthorized('Unauthorized: client certificate has no common name');
        const o = peer.subject?.O;
        return authenticated(user, o === undefined ? [] : Array.isArray(o) ? o : [o]);
      }
    }
    const header = req.headers.authorization;
    const token = bearerToken(header);
    if (token !== undefined) {
      const entry = this.#tokens.get(token);
      if (entry !== undefined) return authenticated(entry.user, entry.groups ?? []);
      const sa = this.#serviceAccounts?.authenticate(token);
      if (sa?.ok) return { name: sa.user.username, groups: [...sa.user.groups] };
      // A token of this issuer that does not verify is refused even when anonymous access is on.
      if (sa !== undefined) throw unauthorized();
    }
    if (this.#tokens.size > 0) throw unauthorized();
    if (this.#clientCertificates) throw unauthorized();
    return undefined;
  }
}

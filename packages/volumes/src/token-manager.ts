/**
 * The kubelet's service-account token manager (upstream `pkg/kubelet/token/token_manager.go`):
 * tokens from the TokenRequest API are cached per (service account, namespace, audiences,
 * expiration, bound pod) and requested again once they are older than 80 % of their lifetime
 * or older than 24 hours (each less a random jitter of up to 10 s). When a refresh fails the
 * cached token is still served until it expires.
 *
 * @module
 */
import type { Clock, Logger } from '@nodeagent/core';
import { noopLogger, realClock } from '@nodeagent/core';
import type { TokenRequestSpec, TokenRequestStatus, VolumeDataSource } from './data-source.js';
import { VolumeError } from './errors.js';

const MAX_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_JITTER_MS = 10_000;

/** Options of {@link TokenManager}. */
export interface TokenManagerOptions {
  /** Where tokens come from. */
  readonly source: Pick<VolumeDataSource, 'createToken'>;
  /** @default realClock */
  readonly clock?: Clock;
  /** A number in [0, 1) for the refresh jitter. @default Math.random */
  readonly random?: () => number;
  /** @default noopLogger */
  readonly logger?: Logger;
}

interface CachedToken {
  readonly status: TokenRequestStatus;
  readonly expiresAtMs: number;
  readonly spec: TokenRequestSpec;
}

function cacheKey(name: string, namespace: string, spec: TokenRequestSpec): string {
  return JSON.stringify([
    name,
    namespace,
    spec.audiences,
    spec.expirationSeconds,
    spec.boundObjectRef ?? null,
  ]);
}

/** Caches and refreshes service-account tokens. */
export class TokenManager {
  readonly #source: Pick<VolumeDataSource, 'createToken'>;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #log: Logger;
  readonly #cache = new Map<string, CachedToken>();

  /** @param options see {@link TokenManagerOptions} */
  constructor(options: TokenManagerOptions) {
    this.#source = options.source;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#log = (options.logger ?? noopLogger).child({ component: 'token-manager' });
  }

  /** Cached tokens (for tests and metrics). */
  get size(): number {
    return this.#cache.size;
  }

  /**
   * A token for `namespace/name` with `spec`: the cached one while fresh, else a new one.
   * @throws VolumeError `failed to fetch token: ...` when none can be had
   */
  async getServiceAccountToken(
    namespace: string,
    name: string,
    spec: TokenRequestSpec,
    signal?: AbortSignal,
  ): Promise<TokenRequestStatus> {
    this.#cleanup();
    const key = cacheKey(name, namespace, spec);
    const cached = this.#cache.get(key);
    if (cached !== undefined && !this.requiresRefresh(cached.status, spec.expirationSeconds))
      return cached.status;
    let fresh: TokenRequestStatus;
    try {
      fresh = await this.#source.createToken(namespace, name, spec, signal);
    } catch (err) {
      const message = (err as Error).message;
      if (cached === undefined)
        throw new VolumeError('failed', `failed to fetch token: ${message}`, { cause: err });
      if (this.#expired(cached)) {
        throw new VolumeError('failed', `token ${key} expired and refresh failed: ${message}`, {
          cause: err,
        });
      }
      this.#log.error({ cacheKey: key, err: message }, "Couldn't update token");
      return cached.status;
    }
    const expiresAtMs = Date.parse(fresh.expirationTimestamp);
    if (Number.isNaN(expiresAtMs))
      throw new VolumeError(
        'failed',
        `failed to fetch token: bad expirationTimestamp ${JSON.stringify(fresh.expirationTimestamp)}`,
      );
    this.#cache.set(key, { status: fresh, expiresAtMs, spec });
    return fresh;
  }

  /**
   * Upstream `requiresRefresh`: older than 24 h, or within 20 % of its lifetime of the expiry
   * (both less a jitter of up to 10 s).
   */
  requiresRefresh(status: TokenRequestStatus, expirationSeconds: number): boolean {
    const now = this.#clock.now();
    const exp = Date.parse(status.expirationTimestamp);
    const iat = exp - expirationSeconds * 1000;
    const jitterMs = Math.floor(this.#random() * (MAX_JITTER_MS / 1000)) * 1000;
    if (now > iat + MAX_TTL_MS - jitterMs) return true;
    return now > exp - Math.floor((expirationSeconds * 20) / 100) * 1000 - jitterMs;
  }

  /** Forgets the tokens bound to the pod `podUid` (upstream `DeleteServiceAccountToken`). */
  deleteServiceAccountToken(podUid: string): void {
    for (const [key, t] of this.#cache) if (t.spec.boundObjectRef?.uid === podUid) this.#cache.delete(key);
  }

  #expired(t: CachedToken): boolean {
    return this.#clock.now() > t.expiresAtMs;
  }

  #cleanup(): void {
    for (const [key, t] of this.#cache) if (this.#expired(t)) this.#cache.delete(key);
  }
}

/**
 * What the API-backed volumes read, as an injected interface: ConfigMaps and Secrets by
 * namespace/name, and service-account tokens through the TokenRequest API. Any API client can
 * stand behind it; {@link apiVolumeDataSource} adapts a small JSON REST client (the reference
 * agent's, `@nodeagent/status`'s `StatusApi`).
 *
 * @module
 */
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';

/** A TokenRequest's spec (authentication.k8s.io/v1). */
export interface TokenRequestSpec {
  /** Intended audiences; empty means the API server's. */
  readonly audiences: readonly string[];
  /** Requested lifetime, seconds. */
  readonly expirationSeconds: number;
  /** The object the token is bound to (the pod). */
  readonly boundObjectRef?: {
    readonly apiVersion: string;
    readonly kind: string;
    readonly name: string;
    readonly uid: string;
  };
}

/** A TokenRequest's status. */
export interface TokenRequestStatus {
  /** The token (a JWT). */
  readonly token: string;
  /** RFC 3339 expiry time. */
  readonly expirationTimestamp: string;
}

/** The data sources of configMap, secret and projected volumes. */
export interface VolumeDataSource {
  /** The ConfigMap, or `undefined` when it does not exist (404). Other failures reject. */
  getConfigMap(namespace: string, name: string, signal?: AbortSignal): Promise<V1ConfigMap | undefined>;
  /** The Secret, or `undefined` when it does not exist (404). Other failures reject. */
  getSecret(namespace: string, name: string, signal?: AbortSignal): Promise<V1Secret | undefined>;
  /**
   * `POST /api/v1/namespaces/{namespace}/serviceaccounts/{name}/token`.
   * @returns the granted token and its expiry
   */
  createToken(
    namespace: string,
    serviceAccountName: string,
    spec: TokenRequestSpec,
    signal?: AbortSignal,
  ): Promise<TokenRequestStatus>;
}

/**
 * The JSON REST client {@link apiVolumeDataSource} needs: GET (resolving `undefined` on 404)
 * and POST. `@nodeagent/status`'s `StatusApi` and the reference agent's `ApiClient` fit.
 */
export interface VolumeJsonApi {
  /** GET `path`; `undefined` on 404. */
  get<T>(path: string, signal?: AbortSignal): Promise<T | undefined>;
  /** POST `body` to `path`. */
  create<T>(path: string, body: T, signal?: AbortSignal): Promise<T>;
}

interface TokenRequestObject {
  apiVersion: string;
  kind: string;
  spec: {
    audiences: string[];
    expirationSeconds: number;
    boundObjectRef?: TokenRequestSpec['boundObjectRef'];
  };
  status?: { token?: string; expirationTimestamp?: string | Date };
}

const seg = (s: string) => encodeURIComponent(s);

/** A {@link VolumeDataSource} over a JSON REST client. */
export function apiVolumeDataSource(api: VolumeJsonApi): VolumeDataSource {
  return {
    getConfigMap: (ns, name, signal) =>
      api.get<V1ConfigMap>(`/api/v1/namespaces/${seg(ns)}/configmaps/${seg(name)}`, signal),
    getSecret: (ns, name, signal) =>
      api.get<V1Secret>(`/api/v1/namespaces/${seg(ns)}/secrets/${seg(name)}`, signal),
    async createToken(ns, sa, spec, signal) {
      const body: TokenRequestObject = {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          audiences: [...spec.audiences],
          expirationSeconds: spec.expirationSeconds,
          ...(spec.boundObjectRef === undefined ? {} : { boundObjectRef: spec.boundObjectRef }),
        },
      };
      const out = await api.create<TokenRequestObject>(
        `/api/v1/namespaces/${seg(ns)}/serviceaccounts/${seg(sa)}/token`,
        body,
        signal,
      );
      const token = out.status?.token;
      const exp = out.status?.expirationTimestamp;
      if (token === undefined || token === '' || exp === undefined)
        throw new Error(`TokenRequest for ${ns}/${sa} returned no token`);
      return { token, expirationTimestamp: exp instanceof Date ? exp.toISOString() : exp };
    },
  };
}

/**
 * Bound service account tokens as kube-apiserver issues and checks them: the
 * `serviceaccounts/token` subresource (TokenRequest) signs JWTs with the server's key
 * (RS256/ES256), and the token authenticator verifies them (signature, issuer, audiences,
 * expiry with go-jose's 1 minute leeway, and the service account, pod or secret they are
 * bound to still existing with the same UID), for `TokenReview` and for bearer tokens of
 * requests. Also the OIDC discovery document and the JWKS of the signing key.
 *
 * @module
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomUUID,
  sign,
  verify,
} from 'node:crypto';
import { type Clock, InvalidOptionsError } from '@nodeagent/core';
import { ApiStatusError, badRequest, failureStatus, invalid } from './errors.js';
import { isPlainObject, type KubeObject } from './object.js';
import type { ObjectStore } from './store.js';

/** Default issuer (`--service-account-issuer`) of the tokens: kubeadm's. */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** Expiration the ServiceAccount admission plugin asks for in projected token volumes (`WarnOnlyBoundTokenExpirationSeconds`). */
export const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7;

/** How long such a token really lives when `--service-account-extend-token-expiration` is on (`ExpirationExtensionSeconds`, one year). */
export const EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60;

/** Shortest `expirationSeconds` a TokenRequest may ask for (`MinTokenAgeSec`). */
export const MIN_TOKEN_AGE_SECONDS = 10 * 60;

/** Longest `expirationSeconds` a TokenRequest may ask for (`MaxTokenAgeSec`). */
export const MAX_TOKEN_AGE_SECONDS = 2 ** 32 - 1;

/** `expirationSeconds` of a TokenRequest that does not say. */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

/** go-jose's `DefaultLeeway` for `nbf`, `exp` and `iat`. */
const LEEWAY_SECONDS = 60;

/** The user.Info extra keys of service account tokens. */
export const SERVICE_ACCOUNT_EXTRA = {
  podName: 'authentication.kubernetes.io/pod-name',
  podUid: 'authentication.kubernetes.io/pod-uid',
  nodeName: 'authentication.kubernetes.io/node-name',
  nodeUid: 'authentication.kubernetes.io/node-uid',
  credentialId: 'authentication.kubernetes.io/credential-id',
} as const;

/** The user a token authenticates as (TokenReview's `status.user`). */
export interface TokenUser {
  /** `system:serviceaccount:<namespace>:<name>`. */
  readonly username: string;
  /** The service account's UID. */
  readonly uid?: string;
  /** `system:serviceaccounts`, `system:serviceaccounts:<namespace>`, `system:authenticated`. */
  readonly groups: readonly string[];
  /** Pod, node and credential facts ({@link SERVICE_ACCOUNT_EXTRA} keys). */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The outcome of authenticating one token, as kube-apiserver's authenticator response. */
export type TokenAuthentication =
  | { readonly ok: true; readonly user: TokenUser; readonly audiences: readonly string[] }
  | { readonly ok: false; readonly error: string | undefined };

/** Options of {@link ServiceAccountTokens}. */
export interface ServiceAccountTokenOptions {
  /** Where service accounts and bound objects are looked up. */
  readonly store: ObjectStore;
  /** Time of `iat`/`nbf`/`exp` and of expiry checks. */
  readonly clock: Clock;
  /** `iss` of issued tokens, and the issuer accepted. */
  readonly issuer: string;
  /** The API audiences (`--api-audiences`): the default audiences and those of requests. */
  readonly apiAudiences: readonly string[];
  /** PEM private key (RSA, or EC P-256/384/521); generated (RSA 2048) on first use when absent. */
  readonly signingKey: string | undefined;
  /** `--service-account-extend-token-expiration`. */
  readonly extendExpiration: boolean;
}

interface SigningKey {
  readonly alg: 'RS256' | 'ES256' | 'ES384' | 'ES512';
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly kid: string;
}

const EC_ALGS: Readonly<Record<string, SigningKey['alg']>> = {
  prime256v1: 'ES256',
  secp384r1: 'ES384',
  secp521r1: 'ES512',
};

function hashOf(alg: SigningKey['alg']): string {
  return alg === 'ES384' ? 'sha384' : alg === 'ES512' ? 'sha512' : 'sha256';
}

function signingKey(pem: string | undefined): SigningKey {
  let privateKey: KeyObject;
  if (pem === undefined) {
    privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  } else {
    try {
      privateKey = createPrivateKey(pem);
    } catch (err) {
      throw new InvalidOptionsError(
        'MiniApiServer',
        `serviceAccountSigningKey is not a PEM private key: ${(err as Error).message}`,
      );
    }
  }
  let alg: SigningKey['alg'] | undefined;
  if (privateKey.asymmetricKeyType === 'rsa') alg = 'RS256';
  else if (privateKey.asymmetricKeyType === 'ec') {
    alg = EC_ALGS[String(privateKey.asymmetricKeyDetails?.namedCurve)];
  }
  if (alg === undefined) {
    throw new InvalidOptionsError(
      'MiniApiServer',
      `serviceAccountSigningKey must be an RSA or EC P-256/P-384/P-521 key, got ${String(privateKey.asymmetricKeyType)}`,
    );
  }
  const publicKey = createPublicKey(privateKey);
  // kube-apiserver's key ID: the unpadded base64url SHA-256 of the PKIX DER public key.
  const kid = createHash('sha256')
    .update(publicKey.export({ format: 'der', type: 'spki' }))
    .digest('base64url');
  return { alg, privateKey, publicKey, kid };
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function parseSegment(s: string): Record<string, unknown> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    return isPlainObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Go's `%q` of a string slice: `["a" "b"]`. */
function goQuoteList(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;
}

function intersect(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  for (const x of a) if (b.includes(x) && !out.includes(x)) out.push(x);
  return out;
}

function rec(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** The user name of a service account (`MakeUsername`). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The groups of a service account (`MakeGroupNames`), before `system:authenticated`. */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Issues and verifies bound service account tokens for one server. */
export class ServiceAccountTokens {
  readonly #o: ServiceAccountTokenOptions;
  #key: SigningKey | undefined;

  /** @throws InvalidOptionsError for a signing key that is not a usable PEM private key. */
  constructor(options: ServiceAccountTokenOptions) {
    this.#o = options;
    if (options.signingKey !== undefined) this.#key = signingKey(options.signingKey);
  }

  /** The issuer (`iss`). */
  get issuer(): string {
    return this.#o.issuer;
  }

  /** The API audiences. */
  get apiAudiences(): readonly string[] {
    return this.#o.apiAudiences;
  }

  get #signing(): SigningKey {
    this.#key ??= signingKey(undefined);
    return this.#key;
  }

  /** The signing algorithm (`RS256`, `ES256`...). */
  get algorithm(): string {
    return this.#signing.alg;
  }

  /** The public key as PEM (SPKI), for verifying tokens elsewhere. */
  get publicKeyPem(): string {
    return this.#signing.publicKey.export({ format: 'pem', type: 'spki' }).toString();
  }

  /** The JSON Web Key Set served at `/openid/v1/jwks`. */
  jwks(): { keys: Array<Record<string, unknown>> } {
    const k = this.#signing;
    const jwk = k.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
    return { keys: [{ use: 'sig', ...jwk, kid: k.kid, alg: k.alg }] };
  }

  /** The OIDC discovery document served at `/.well-known/openid-configuration`. */
  openIdConfiguration(): Record<string, unknown> {
    return {
      issuer: this.#o.issuer,
      jwks_uri: `${this.#o.issuer.replace(/\/+$/, '')}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [this.#signing.alg],
    };
  }

  /**
   * Handles `POST .../serviceaccounts/<name>/token`: validates the TokenRequest, checks the
   * service account and the bound object, and answers the TokenRequest with its status.
   * @throws ApiStatusError 422 for a bad expiration, 404 for a missing service account or
   *   bound object, 400 for a pod of another service account or an unsupported kind, 409
   *   for a UID that does not match.
   */
  createToken(namespace: string, name: string, body: unknown): Record<string, unknown> {
    const input = rec(body);
    if (input.kind !== undefined && input.kind !== 'TokenRequest') {
      throw badRequest(
        `the object provided is unrecognized (must be of type TokenRequest): kind "${String(input.kind)}"`,
      );
    }
    const spec = { ...rec(input.spec) };
    const requestedExp = spec.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS;
    if (typeof requestedExp !== 'number' || !Number.isInteger(requestedExp)) {
      throw badRequest(
        `TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal ${typeof requestedExp === 'number' ? 'number' : typeof requestedExp === 'boolean' ? 'bool' : Array.isArray(requestedExp) ? 'array' : typeof requestedExp === 'object' ? 'object' : 'string'} into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64`,
      );
    }
    const meta = rec(input.metadata);
    for (const [key, want] of [
      ['name', name],
      ['namespace', namespace],
    ] as const) {
      const given = str(meta[key]);
      if (given !== '' && given !== want) {
        throw invalid('authentication.k8s.io', 'TokenRequest', name, [
          {
            reason: 'FieldValueInvalid',
            message: `Invalid value: ${JSON.stringify(given)}: must match the service account ${key} if specified`,
            field: `metadata.${key}`,
          },
        ]);
      }
    }
    const store = this.#o.store;
    const sa = store.get('serviceaccounts', namespace, name);
    const causes = [];
    if (requestedExp < MIN_TOKEN_AGE_SECONDS) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${requestedExp}: may not specify a duration less than 10 minutes`,
        field: 'spec.expirationSeconds',
      });
    }
    if (requestedExp > MAX_TOKEN_AGE_SECONDS) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${requestedExp}: may not specify a duration larger than 2^32 seconds`,
        field: 'spec.expirationSeconds',
      });
    }
    if (causes.length > 0) throw invalid('authentication.k8s.io', 'TokenRequest', '', causes);
    let pod: KubeObject | undefined;
    let secret: KubeObject | undefined;
    let node: KubeObject | undefined;
    const ref = isPlainObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined;
    if (ref) {
      const apiVersion = str(ref.apiVersion);
      const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
      const kind = str(ref.kind);
      const refName = str(ref.name);
      let uid: string;
      if (group === '' && kind === 'Pod') {
        pod = store.get('pods', namespace, refName);
        const podSa = str(rec(pod.spec).serviceAccountName);
        if (name !== podSa) {
          throw badRequest(
            `cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with different serviceaccount name.`,
          );
        }
        uid = str(pod.metadata?.uid);
        const nodeName = str(rec(pod.spec).nodeName);
        // A missing Node still gives its name (without uid), as upstream.
        if (nodeName !== '')
          node = store.tryGet('nodes', undefined, nodeName) ?? { metadata: { name: nodeName } };
      } else if (group === '' && kind === 'Node') {
        node = store.get('nodes', undefined, refName);
        uid = str(node.metadata?.uid);
      } else if (group === '' && kind === 'Secret') {
        secret = store.get('secrets', namespace, refName);
        uid = str(secret.metadata?.uid);
      } else {
        const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
        throw badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`);
      }
      const refUid = str(ref.uid);
      if (refUid !== '' && refUid !== uid) {
        throw new ApiStatusError(
          failureStatus(
            409,
            'Conflict',
            `Operation cannot be fulfilled on ${kind}${group === '' ? '' : `.${group}`} ${JSON.stringify(refName)}: the UID in the bound object reference (${refUid}) does not match the UID in record. The object might have been deleted and then recreated`,
            { name: refName, kind },
          ),
        );
      }
    }
    const audiences =
      Array.isArray(spec.audiences) && spec.audiences.length > 0
        ? spec.audiences.map(String)
        : [...this.#o.apiAudiences];
    spec.audiences = audiences;
    spec.expirationSeconds = requestedExp;
    if (!('boundObjectRef' in spec)) spec.boundObjectRef = null;
    // The admission plugin's 3607 s marks projected volume tokens: they live a year and only
    // warn after the requested time, for pods that do not reread their token.
    let exp = requestedExp;
    let warnAfter = 0;
    const kubeAudiences = audiences.every((a) => this.#o.apiAudiences.includes(a));
    if (
      this.#o.extendExpiration &&
      pod !== undefined &&
      requestedExp === WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS &&
      kubeAudiences
    ) {
      warnAfter = requestedExp;
      exp = EXPIRATION_EXTENSION_SECONDS;
    }
    const nowMs = this.#o.clock.now();
    const now = Math.floor(nowMs / 1000);
    const k8s: Record<string, unknown> = {
      namespace,
      serviceaccount: { name, uid: str(sa.metadata?.uid) },
    };
    const ref2 = (o: KubeObject): Record<string, string> => {
      const out: Record<string, string> = { name: str(o.metadata?.name) };
      if (str(o.metadata?.uid) !== '') out.uid = str(o.metadata?.uid);
      return out;
    };
    if (pod) {
      k8s.pod = ref2(pod);
      if (node) k8s.node = ref2(node);
    } else if (secret) {
      k8s.secret = ref2(secret);
    } else if (node) {
      k8s.node = ref2(node);
    }
    if (warnAfter !== 0) k8s.warnafter = now + warnAfter;
    // go-jose merges the claim sets through a Go map: every object's keys come out sorted.
    const sorted = Object.fromEntries(Object.entries(k8s).sort(([a], [b]) => (a < b ? -1 : 1)));
    const claims = {
      aud: audiences,
      exp: now + exp,
      iat: now,
      iss: this.#o.issuer,
      jti: randomUUID(),
      'kubernetes.io': sorted,
      nbf: now,
      sub: serviceAccountUsername(namespace, name),
    };
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { ...meta, name, namespace, creationTimestamp: isoSeconds(nowMs) },
      spec,
      status: {
        token: this.sign(claims),
        expirationTimestamp: isoSeconds(nowMs + requestedExp * 1000),
      },
    };
  }

  /** Signs a claim set with the server's key (header `alg` and `kid`, no `typ`, as kube-apiserver). */
  sign(claims: Record<string, unknown>): string {
    const k = this.#signing;
    const input = `${b64url({ alg: k.alg, kid: k.kid })}.${b64url(claims)}`;
    const sig = sign(hashOf(k.alg), Buffer.from(input), {
      key: k.privateKey,
      ...(k.alg === 'RS256' ? {} : { dsaEncoding: 'ieee-p1363' as const }),
    });
    return `${input}.${sig.toString('base64url')}`;
  }

  /**
   * Authenticates a token as kube-apiserver's service account token authenticator does,
   * against `requested` audiences (the API audiences when empty).
   * @returns `undefined` when the token is not a JWT of this issuer (another authenticator's).
   */
  authenticate(token: string, requested: readonly string[] = []): TokenAuthentication | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const header = parseSegment(parts[0] as string);
    const payload = parseSegment(parts[1] as string);
    if (!header || !payload || payload.iss !== this.#o.issuer) return undefined;
    const k = this.#signing;
    if (header.alg !== k.alg) return undefined;
    const signature = Buffer.from(parts[2] as string, 'base64url');
    const signed = verify(
      hashOf(k.alg),
      Buffer.from(`${parts[0]}.${parts[1]}`),
      {
        key: k.publicKey,
        ...(k.alg === 'RS256' ? {} : { dsaEncoding: 'ieee-p1363' as const }),
      },
      signature,
    );
    if (!signed) return { ok: false, error: 'go-jose/go-jose: error in cryptographic primitive' };
    const implicit = this.#o.apiAudiences;
    let tokenAuds =
      typeof payload.aud === 'string'
        ? [payload.aud]
        : Array.isArray(payload.aud)
          ? payload.aud.map(String)
          : [];
    if (tokenAuds.length === 0) tokenAuds = [...implicit];
    const target = requested.length > 0 ? requested : implicit;
    const auds = intersect(tokenAuds, target);
    if (auds.length === 0 && implicit.length > 0) {
      return {
        ok: false,
        error: `token audiences ${goQuoteList(tokenAuds)} is invalid for the target audiences ${goQuoteList(target)}`,
      };
    }
    const error = this.#validateClaims(payload);
    if (typeof error === 'string') return { ok: false, error };
    return { ok: true, user: error, audiences: auds };
  }

  /** The private-claim checks of `validator.Validate`; returns the user or an error message. */
  #validateClaims(payload: Record<string, unknown>): TokenUser | string {
    const nowMs = this.#o.clock.now();
    const now = nowMs / 1000;
    const nbf = num(payload.nbf);
    const exp = num(payload.exp);
    const iat = num(payload.iat);
    if (nbf !== undefined && now + LEEWAY_SECONDS < nbf) return 'service account token is not valid yet';
    if (exp !== undefined && now - LEEWAY_SECONDS > exp) return 'service account token has expired';
    if (iat !== undefined && now + LEEWAY_SECONDS < iat) {
      return 'service account token claims could not be validated due to unexpected validation error';
    }
    const k8s = rec(payload['kubernetes.io']);
    const namespace = str(k8s.namespace);
    const saRef = rec(k8s.serviceaccount);
    const podRef = isPlainObject(k8s.pod) ? k8s.pod : undefined;
    const secretRef = isPlainObject(k8s.secret) ? k8s.secret : undefined;
    const nodeRef = isPlainObject(k8s.node) ? k8s.node : undefined;
    const invalidIfDeletedBefore = nowMs - LEEWAY_SECONDS * 1000;
    const deletedBefore = (o: KubeObject): boolean => {
      const ts = o.metadata?.deletionTimestamp;
      return typeof ts === 'string' && Date.parse(ts) < invalidIfDeletedBefore;
    };
    const store = this.#o.store;
    const saName = str(saRef.name);
    const sa =
      namespace === '' || saName === '' ? undefined : store.tryGet('serviceaccounts', namespace, saName);
    if (!sa) return `serviceaccounts ${JSON.stringify(saName)} not found`;
    if (deletedBefore(sa)) return `service account ${namespace}/${saName} has been deleted`;
    if (str(sa.metadata?.uid) !== str(saRef.uid)) {
      return `service account UID (${str(sa.metadata?.uid)}) does not match claim (${str(saRef.uid)})`;
    }
    if (secretRef) {
      const secret = store.tryGet('secrets', namespace, str(secretRef.name));
      if (!secret || deletedBefore(secret)) return 'service account token has been invalidated';
      if (str(secretRef.uid) !== str(secret.metadata?.uid)) {
        return `secret UID (${str(secret.metadata?.uid)}) does not match service account secret ref claim (${str(secretRef.uid)})`;
      }
    }
    const extra: Record<string, string[]> = {};
    if (podRef) {
      const pod = store.tryGet('pods', namespace, str(podRef.name));
      if (!pod || deletedBefore(pod)) return 'service account token has been invalidated';
      if (str(podRef.uid) !== str(pod.metadata?.uid)) {
        return `pod UID (${str(pod.metadata?.uid)}) does not match service account pod ref claim (${str(podRef.uid)})`;
      }
      if (str(podRef.name) !== '' && str(podRef.uid) !== '') {
        extra[SERVICE_ACCOUNT_EXTRA.podName] = [str(podRef.name)];
        extra[SERVICE_ACCOUNT_EXTRA.podUid] = [str(podRef.uid)];
      }
    }
    if (!podRef && nodeRef) {
      const node = store.tryGet('nodes', undefined, str(nodeRef.name));
      if (!node) return 'service account token has been invalidated';
      if (str(nodeRef.uid) !== str(node.metadata?.uid)) {
        return `node UID (${str(node.metadata?.uid)}) does not match service account node ref claim (${str(nodeRef.uid)})`;
      }
      if (deletedBefore(node)) return 'service account token has been invalidated';
    }
    const jti = str(payload.jti);
    if (jti !== '') extra[SERVICE_ACCOUNT_EXTRA.credentialId] = [`JTI=${jti}`];
    if (nodeRef && str(nodeRef.name) !== '') {
      extra[SERVICE_ACCOUNT_EXTRA.nodeName] = [str(nodeRef.name)];
      if (str(nodeRef.uid) !== '') extra[SERVICE_ACCOUNT_EXTRA.nodeUid] = [str(nodeRef.uid)];
    }
    const user: TokenUser = {
      username: serviceAccountUsername(namespace, saName),
      uid: str(saRef.uid),
      groups: [...serviceAccountGroups(namespace), 'system:authenticated'],
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
    };
    return user;
  }
}

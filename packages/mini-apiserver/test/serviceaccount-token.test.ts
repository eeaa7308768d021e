// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { call, pod, start } from './helpers.js';

let server: MiniApiServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const TOKEN = (ns: string, sa: string) => `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`;
const REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
// An EC key keeps the tests fast (no RSA generation); RS256 is tested once below.
const EC_KEY = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  .privateKey.export({ format: 'pem', type: 'pkcs8' })
  .toString();

function decode(jwt: string): { header: any; payload: any } {
  const [h, p] = jwt.split('.');
  return {
    header: JSON.parse(Buffer.from(h as string, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(p as string, 'base64url').toString()),
  };
}

async function requestToken(s: MiniApiServer, spec: object = {}, sa = 'default', ns = 'default') {
  return call(s, 'POST', TOKEN(ns, sa), {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    spec,
  });
}

async function review(s: MiniApiServer, token: string, audiences?: string[]) {
  const res = await call(s, 'POST', REVIEWS, {
    kind: 'TokenReview',
    apiVersion: 'authentication.k8s.io/v1',
    spec: { token, ...(audiences ? { audiences } : {}) },
  });
  expect(res.code).toBe(201);
  return res.body.status;
}

describe('TokenRequest (serviceaccounts/token)', () => {
  test('claims as kube-apiserver bound tokens, defaults 3600 s and the API audiences', async () => {
    const clock = new FakeClock({ startMs: 1_800_000_000_500 });
    server = await start({ clock, serviceAccountSigningKey: EC_KEY });
    const res = await requestToken(server);
    expect(res.code).toBe(201);
    expect(res.body).toMatchObject({
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      spec: { audiences: [ISSUER], expirationSeconds: 3600, boundObjectRef: null },
      status: { expirationTimestamp: '2027-01-15T09:00:00Z' },
    });
    const sa = server.store.get('serviceaccounts', 'default', 'default');
    const { header, payload } = decode(res.body.status.token);
    expect(header).toEqual({ alg: 'ES256', kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(payload).toEqual({
      aud: [ISSUER],
      exp: 1_800_003_600,
      iat: 1_800_000_000,
      nbf: 1_800_000_000,
      iss: ISSUER,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sub: 'system:serviceaccount:default:default',
      'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'default', uid: sa.metadata?.uid } },
    });
  });

  test('a pod-bound token names the pod and its node; 3607 s is extended to a year with warnafter', async () => {
    const clock = new FakeClock({ startMs: 1_800_000_000_000 });
    server = await start({ clock, serviceAccountSigningKey: EC_KEY });
    const node = server.store.create('nodes', { metadata: { name: 'node-1' } });
    const p = server.store.create('pods', {
      ...pod('web', { nodeName: 'node-1' }),
      spec: { ...(pod('web').spec as object), nodeName: 'node-1', serviceAccountName: 'default' },
    } as any);
    const ref = { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: p.metadata?.uid };
    const res = await requestToken(server, { boundObjectRef: ref, expirationSeconds: 3607 });
    expect(res.code).toBe(201);
    // The answer reports the requested expiry; the token itself lives a year.
    expect(res.body.status.expirationTimestamp).toBe(
      new Date((1_800_000_000 + 3607) * 1000).toISOString().replace('.000Z', 'Z'),
    );
    const { payload } = decode(res.body.status.token);
    expect(payload.exp).toBe(1_800_000_000 + 24 * 365 * 3600);
    expect(payload['kubernetes.io']).toEqual({
      namespace: 'default',
      serviceaccount: { name: 'default', uid: expect.any(String) },
      pod: { name: 'web', uid: p.metadata?.uid },
      node: { name: 'node-1', uid: node.metadata?.uid },
      warnafter: 1_800_000_000 + 3607,
    });
    // Serialized as go-jose does, keys sorted.
    expect(Object.keys(payload['kubernetes.io'])).toEqual([
      'namespace',
      'node',
      'pod',
      'serviceaccount',
      'warnafter',
    ]);
    expect(Object.keys(payload)).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'kubernetes.io', 'nbf', 'sub']);
    // Another audience: no extension.
    const other = await requestToken(server, {
      boundObjectRef: ref,
      expirationSeconds: 3607,
      audiences: ['vault'],
    });
    expect(decode(other.body.status.token).payload.exp).toBe(1_800_000_000 + 3607);
    expect(decode(other.body.status.token).payload['kubernetes.io'].warnafter).toBeUndefined();
  });

  test('errors as kube-apiserver answers them', async () => {
    server = await start({ serviceAccountSigningKey: EC_KEY });
    const short = await requestToken(server, { expirationSeconds: 599 });
    expect(short.code).toBe(422);
    expect(short.body.message).toBe(
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes',
    );
    expect((await requestToken(server, {}, 'nobody')).body.message).toBe(
      'serviceaccounts "nobody" not found',
    );
    const missingPod = await requestToken(server, {
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'gone' },
    });
    expect(missingPod.code).toBe(404);
    expect(missingPod.body.message).toBe('pods "gone" not found');
    server.store.create('serviceaccounts', { metadata: { name: 'other', namespace: 'default' } });
    server.store.create('pods', {
      ...pod('web'),
      spec: { ...(pod('web').spec as object), serviceAccountName: 'other' },
    } as any);
    const wrongSa = await requestToken(server, {
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' },
    });
    expect(wrongSa.code).toBe(400);
    expect(wrongSa.body.message).toBe(
      'cannot bind token for serviceaccount "default" to pod running with different serviceaccount name.',
    );
    const wrongUid = await requestToken(
      server,
      { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: 'x' } },
      'other',
    );
    expect(wrongUid.code).toBe(409);
    expect(wrongUid.body.message).toMatch(
      /the UID in the bound object reference \(x\) does not match the UID in record/,
    );
    const badKind = await requestToken(server, {
      boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' },
    });
    expect(badKind.body.message).toBe('cannot bind token to object of type /v1, Kind=ConfigMap');
  });
});

describe('TokenRequest binding to a Node, and request metadata', () => {
  test('a node-bound token names the node and dies with it; a pod on a missing node names the node only', async () => {
    server = await start({ serviceAccountSigningKey: EC_KEY });
    const node = server.store.create('nodes', { metadata: { name: 'node-1' } });
    const res = await requestToken(server, {
      boundObjectRef: { kind: 'Node', apiVersion: 'v1', name: 'node-1' },
    });
    expect(res.code).toBe(201);
    const token = res.body.status.token;
    expect(decode(token).payload['kubernetes.io'].node).toEqual({ name: 'node-1', uid: node.metadata?.uid });
    const ok = await review(server, token);
    expect(ok.user.extra['authentication.kubernetes.io/node-name']).toEqual(['node-1']);
    expect(ok.user.extra['authentication.kubernetes.io/node-uid']).toEqual([node.metadata?.uid]);
    server.store.delete('nodes', undefined, 'node-1');
    expect(await review(server, token)).toEqual({
      user: {},
      error: 'service account token has been invalidated',
    });
    server.store.create('pods', {
      metadata: { name: 'web', namespace: 'default' },
      spec: { nodeName: 'gone', serviceAccountName: 'default', containers: [{ name: 'c', image: 'i' }] },
    });
    const podBound = await requestToken(server, {
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' },
    });
    expect(decode(podBound.body.status.token).payload['kubernetes.io'].node).toEqual({ name: 'gone' });
  });

  test('metadata must match the URL; the service account is looked up before the spec is validated', async () => {
    server = await start({ serviceAccountSigningKey: EC_KEY });
    const res = await call(server, 'POST', TOKEN('default', 'default'), {
      metadata: { name: 'other' },
      spec: {},
    });
    expect(res.code).toBe(422);
    expect(res.body.message).toBe(
      'TokenRequest.authentication.k8s.io "default" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified',
    );
    expect((await requestToken(server, { expirationSeconds: 1 }, 'nobody')).code).toBe(404);
    const ok = await requestToken(server);
    expect(ok.body.metadata).toMatchObject({ name: 'default', namespace: 'default' });
    expect(ok.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });
});

describe('TokenReview and bearer authentication with service account tokens', () => {
  test('a valid token authenticates as the service account, with the pod and credential in extra', async () => {
    server = await start({ serviceAccountSigningKey: EC_KEY });
    const p = server.store.create('pods', {
      ...pod('web'),
      spec: { ...(pod('web').spec as object), serviceAccountName: 'default' },
    } as any);
    const sa = server.store.get('serviceaccounts', 'default', 'default');
    const res = await requestToken(server, {
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' },
    });
    const token = res.body.status.token;
    const jti = decode(token).payload.jti;
    expect(await review(server, token)).toEqual({
      authenticated: true,
      user: {
        username: 'system:serviceaccount:default:default',
        uid: sa.metadata?.uid,
        groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
        extra: {
          'authentication.kubernetes.io/pod-name': ['web'],
          'authentication.kubernetes.io/pod-uid': [p.metadata?.uid],
          'authentication.kubernetes.io/credential-id': [`JTI=${jti}`],
        },
      },
      audiences: [ISSUER],
    });
    // Deleting the pod invalidates the token.
    server.store.delete('pods', 'default', 'web');
    expect(await review(server, token)).toEqual({
      user: {},
      error: 'service account token has been invalidated',
    });
  });

  test('a tampered signature, another issuer and garbage are refused', async () => {
    server = await start({ serviceAccountSigningKey: EC_KEY });
    const token: string = (await requestToken(server)).body.status.token;
    const [h, p, s] = token.split('.') as [string, string, string];
    const claims = decode(token).payload;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'system:serviceaccount:kube-system:default' })).toString('base64url')}.${s}`;
    expect(await review(server, forged)).toEqual({
      user: {},
      error: 'go-jose/go-jose: error in cryptographic primitive',
    });
    const flipped = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await review(server, flipped)).error).toBe('go-jose/go-jose: error in cryptographic primitive');
    const otherIssuer = `${h}.${Buffer.from(JSON.stringify({ ...claims, iss: 'x' })).toString('base64url')}.${s}`;
    expect(await review(server, otherIssuer)).toEqual({ user: {}, error: 'invalid bearer token' });
    expect(await review(server, 'not-a-jwt')).toEqual({ user: {}, error: 'invalid bearer token' });
    const empty = await call(server, 'POST', REVIEWS, { spec: {} });
    expect(empty.code).toBe(400);
    expect(empty.body.message).toBe('token is required for TokenReview in authentication');
  });

  test('expiry with go-jose’s one minute leeway, on the server clock', async () => {
    const clock = new FakeClock();
    server = await start({ clock, serviceAccountSigningKey: EC_KEY });
    const token = (await requestToken(server, { expirationSeconds: 600 })).body.status.token;
    await clock.advance(660_000);
    expect((await review(server, token)).authenticated).toBe(true);
    await clock.advance(1_000);
    expect(await review(server, token)).toEqual({ user: {}, error: 'service account token has expired' });
  });

  test('audiences: the requested ones must intersect the token’s', async () => {
    server = await start({ serviceAccountSigningKey: EC_KEY, apiAudiences: ['api', ISSUER] });
    const vault = (await requestToken(server, { audiences: ['vault', 'x'] })).body.status.token;
    expect(await review(server, vault)).toEqual({
      user: {},
      error:
        'token audiences ["vault" "x"] is invalid for the target audiences ["api" "https://kubernetes.default.svc.cluster.local"]',
    });
    const ok = await review(server, vault, ['x', 'y']);
    expect(ok.authenticated).toBe(true);
    expect(ok.audiences).toEqual(['x']);
    const dflt = (await requestToken(server)).body.status.token;
    expect(decode(dflt).payload.aud).toEqual(['api', ISSUER]);
    expect((await review(server, dflt, ['api'])).audiences).toEqual(['api']);
  });

  test('a recreated service account invalidates its old tokens', async () => {
    server = await start({ serviceAccountSigningKey: EC_KEY });
    server.store.create('serviceaccounts', { metadata: { name: 'bot', namespace: 'default' } });
    const token = (await requestToken(server, {}, 'bot')).body.status.token;
    const oldUid = decode(token).payload['kubernetes.io'].serviceaccount.uid;
    server.store.delete('serviceaccounts', 'default', 'bot');
    expect((await review(server, token)).error).toBe('serviceaccounts "bot" not found');
    const again = server.store.create('serviceaccounts', { metadata: { name: 'bot', namespace: 'default' } });
    expect((await review(server, token)).error).toBe(
      `service account UID (${again.metadata?.uid}) does not match claim (${oldUid})`,
    );
  });

  test('the configured bearer tokens review too (audience agnostic)', async () => {
    server = await start({ tokens: ['admin-token'], serviceAccountSigningKey: EC_KEY });
    // Reviews sent with a service account token of the server.
    server.setTokens([]);
    expect(await review(server, 'admin-token')).toEqual({ user: {}, error: 'invalid bearer token' });
    server.setTokens(['admin-token']);
    const reviewAs = async (token: string, audiences?: string[]) => {
      const res = await fetch(server?.url + REVIEWS, {
        method: 'POST',
        headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
        body: JSON.stringify({ spec: { token, ...(audiences ? { audiences } : {}) } }),
      });
      return ((await res.json()) as any).status;
    };
    expect(await reviewAs('admin-token')).toEqual({
      authenticated: true,
      user: { username: 'mini-apiserver-user', groups: ['system:masters', 'system:authenticated'] },
      audiences: [ISSUER],
    });
    expect(await reviewAs('admin-token', ['vault'])).toEqual({
      user: {},
      error: 'invalid bearer token',
    });
  });

  test('a pod’s token is a bearer token for the server itself, and RBAC applies to its user', async () => {
    server = await start({ authorization: 'RBAC', token: 'admin', serviceAccountSigningKey: EC_KEY });
    const admin = { authorization: 'Bearer admin', 'content-type': 'application/json' };
    const tokenRes = await fetch(server.url + TOKEN('default', 'default'), {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ spec: {} }),
    });
    const token = ((await tokenRes.json()) as any).status.token;
    const asSa = (path: string) =>
      fetch(server?.url + path, { headers: { authorization: `Bearer ${token}` } });
    const denied = await asSa('/api/v1/namespaces/default/configmaps');
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as any).message).toBe(
      'configmaps is forbidden: User "system:serviceaccount:default:default" cannot list resource "configmaps" in API group "" in the namespace "default"',
    );
    server.store.create('roles', {
      metadata: { name: 'cm-reader', namespace: 'default' },
      rules: [{ verbs: ['list'], apiGroups: [''], resources: ['configmaps'] }],
    } as any);
    server.store.create('rolebindings', {
      metadata: { name: 'cm-reader', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }],
    } as any);
    expect((await asSa('/api/v1/namespaces/default/configmaps')).status).toBe(200);
    // Issuer discovery is open to service accounts; the JWKS verifies the token.
    const config = (await (await asSa('/.well-known/openid-configuration')).json()) as any;
    expect(config).toEqual({
      issuer: ISSUER,
      jwks_uri: `${ISSUER}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
    });
    const jwksRes = await asSa('/openid/v1/jwks');
    expect(jwksRes.headers.get('content-type')).toBe('application/jwk-set+json');
    const jwks = (await jwksRes.json()) as any;
    const [h, p, s] = token.split('.');
    const jwk = jwks.keys.find((k: any) => k.kid === decode(token).header.kid);
    expect(jwk).toMatchObject({ use: 'sig', kty: 'EC', crv: 'P-256', alg: 'ES256' });
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    expect(
      verify(
        'sha256',
        Buffer.from(`${h}.${p}`),
        { key, dsaEncoding: 'ieee-p1363' },
        Buffer.from(s, 'base64url'),
      ),
    ).toBe(true);
    // A token for another audience is not accepted by the server.
    const vaultRes = await fetch(server.url + TOKEN('default', 'default'), {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ spec: { audiences: ['vault'] } }),
    });
    const vault = ((await vaultRes.json()) as any).status.token;
    const refused = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`, {
      headers: { authorization: `Bearer ${vault}` },
    });
    expect(refused.status).toBe(401);
  });

  test('RS256 with the generated key', async () => {
    server = await start();
    const token: string = (await requestToken(server)).body.status.token;
    expect(decode(token).header.alg).toBe('RS256');
    expect((await review(server, token)).authenticated).toBe(true);
    const [h, p, s] = token.split('.');
    const key = createPublicKey(server.serviceAccountTokens.publicKeyPem);
    expect(verify('sha256', Buffer.from(`${h}.${p}`), key, Buffer.from(s as string, 'base64url'))).toBe(true);
  });
});

describe('protobuf TokenReview (what a kubelet’s client-go sends)', () => {
  function field(n: number, value: Buffer | string): Buffer {
    const bytes = typeof value === 'string' ? Buffer.from(value) : value;
    const len: number[] = [];
    let l = bytes.length;
    do {
      len.push((l & 0x7f) | (l > 0x7f ? 0x80 : 0));
      l >>>= 7;
    } while (l > 0);
    return Buffer.concat([Buffer.from([(n << 3) | 2, ...len]), bytes]);
  }

  test('decodes spec.token and spec.audiences and answers JSON', async () => {
    server = await start({ serviceAccountSigningKey: EC_KEY });
    const token: string = (await requestToken(server, { audiences: ['kubelet'] })).body.status.token;
    // runtime.Unknown{typeMeta{apiVersion, kind}, raw: TokenReview{spec{token, audiences}}}
    const spec = Buffer.concat([field(1, token), field(2, 'kubelet')]);
    const reviewMsg = Buffer.concat([field(1, Buffer.alloc(0)), field(2, spec)]);
    const typeMeta = Buffer.concat([field(1, 'authentication.k8s.io/v1'), field(2, 'TokenReview')]);
    const body = Buffer.concat([Buffer.from('k8s\0'), field(1, typeMeta), field(2, reviewMsg)]);
    const res = await fetch(server.url + REVIEWS, {
      method: 'POST',
      headers: {
        'content-type': 'application/vnd.kubernetes.protobuf',
        accept: 'application/vnd.kubernetes.protobuf, application/json',
      },
      body,
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    const json = (await res.json()) as any;
    expect(json.spec).toEqual({ token, audiences: ['kubelet'] });
    expect(json.status).toMatchObject({
      authenticated: true,
      audiences: ['kubelet'],
      user: { username: 'system:serviceaccount:default:default' },
    });
  });
});

// Service account tokens: TokenRequest (claims + signature) and verification (signature,
// audiences, expiry, bound pod and service account lookups) through ServiceAccountTokens, for
// RS256 and ES256, next to the floor measured in the same run: bare node:crypto sign/verify of
// a payload of the same size with the same key. Prints ops/s; asserts nothing about speed.

import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { FakeClock } from '@nodeagent/core/testing';
import { it } from 'vitest';
import { ObjectStore, ServiceAccountTokens } from '../src/index.js';

const N = 2_000;

function opsPerSecond(n: number, run: () => void): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) run();
    best = Math.min(best, performance.now() - t0);
  }
  return Math.round((n / best) * 1000);
}

for (const [alg, pem] of [
  ['RS256', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey],
  ['ES256', generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey],
] as const) {
  it(`${alg}: issue and verify pod-bound tokens`, () => {
    const clock = new FakeClock();
    const store = new ObjectStore({ clock });
    store.create('serviceaccounts', { metadata: { name: 'default', namespace: 'default' } });
    store.create('pods', {
      metadata: { name: 'web', namespace: 'default' },
      spec: { serviceAccountName: 'default', containers: [{ name: 'c', image: 'i' }] },
    });
    const tokens = new ServiceAccountTokens({
      store,
      clock,
      issuer: 'https://kubernetes.default.svc.cluster.local',
      apiAudiences: ['https://kubernetes.default.svc.cluster.local'],
      signingKey: pem.export({ format: 'pem', type: 'pkcs8' }).toString(),
      extendExpiration: true,
    });
    const body = { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } } };
    let token = '';
    const issue = opsPerSecond(N, () => {
      token = String((tokens.createToken('default', 'default', body).status as { token: string }).token);
    });
    const check = opsPerSecond(N, () => {
      if (!tokens.authenticate(token)?.ok) throw new Error('token did not verify');
    });
    const input = Buffer.from(token.slice(0, token.lastIndexOf('.')));
    const opts = alg === 'RS256' ? {} : { dsaEncoding: 'ieee-p1363' as const };
    let sig = Buffer.alloc(0);
    const floorSign = opsPerSecond(N, () => {
      sig = sign('sha256', input, { key: pem, ...opts });
    });
    const floorVerify = opsPerSecond(N, () => {
      verify('sha256', input, { key: pem, ...opts }, sig);
    });
    console.log(
      `${alg}: TokenRequest ${issue}/s (bare sign ${floorSign}/s); verification ${check}/s (bare verify ${floorVerify}/s)`,
    );
  });
}

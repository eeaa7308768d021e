// Upstream kubelet authentication (x509 client CA, TokenReview webhook cached 2 min,
// anonymous) and authorization (SubjectAccessReview on nodes/<subresource>), with the
// kubelet's 401 `Unauthorized` and 403 `Forbidden (user=…, verb=…, resource=nodes, subresource(s)=[…])`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '@nodeagent/core/testing';
import { createSelfSignedTls, issueClientCertificate } from '@nodeagent/mini-apiserver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiPoster,
  RequestAuthenticator,
  SubjectAccessReviewAuthorizer,
  TokenReviewAuthenticator,
} from '../src/index.js';
import { type Fixture, get, startFixture } from './fixture.js';

/** A fake API server answering TokenReview (token "good" = alice) and SubjectAccessReview (alice may get nodes/stats and nodes/proxy). */
async function startReviewServer(): Promise<{
  server: Server;
  url: string;
  tokenReviews: number;
  sars: unknown[];
}> {
  const state = { tokenReviews: 0, sars: [] as unknown[] };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const review = JSON.parse(body);
      if (req.url === '/apis/authentication.k8s.io/v1/tokenreviews') {
        state.tokenReviews++;
        const ok = review.spec.token === 'good';
        res.end(
          JSON.stringify({
            ...review,
            status: ok
              ? { authenticated: true, user: { username: 'alice', groups: ['devs'] } }
              : { authenticated: false },
          }),
        );
        return;
      }
      state.sars.push(review.spec);
      const ra = review.spec.resourceAttributes;
      const allowed =
        review.spec.user === 'alice' && ra.verb === 'get' && ['stats', 'proxy'].includes(ra.subresource);
      res.end(JSON.stringify({ ...review, status: { allowed, reason: allowed ? 'rbac' : '' } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get tokenReviews() {
      return state.tokenReviews;
    },
    sars: state.sars,
  };
}

describe('kubelet authentication and authorization', () => {
  let f: Fixture;
  let reviews: Awaited<ReturnType<typeof startReviewServer>>;
  let client: { cert: string; key: string };
  const clock = new FakeClock();

  beforeAll(async () => {
    reviews = await startReviewServer();
    const ca = await createSelfSignedTls({ hosts: ['127.0.0.1'] });
    client = await issueClientCertificate(ca, {
      commonName: 'system:node:node1',
      organizations: ['system:nodes'],
    });
    const post = createApiPoster({ server: reviews.url });
    f = await startFixture({
      clientCa: ca.ca,
      authenticator: new RequestAuthenticator({
        x509: true,
        tokens: new TokenReviewAuthenticator({ post, clock }),
        anonymous: false,
      }),
      authorizer: new SubjectAccessReviewAuthorizer({ post, clock }),
    });
  });
  afterAll(async () => {
    await f?.stop();
    await new Promise<void>((r) => (reviews ? reviews.server.close(() => r()) : r()));
  });

  it('answers 401 Unauthorized without credentials or with a bad token', async () => {
    expect(await get(`${f.server.url}/pods`)).toMatchObject({ status: 401, body: 'Unauthorized' });
    expect(await get(`${f.server.url}/pods`, { headers: { Authorization: 'Bearer bad' } })).toMatchObject({
      status: 401,
    });
  });

  it('authenticates a token by TokenReview and authorizes nodes/stats by SubjectAccessReview', async () => {
    const r = await get(`${f.server.url}/stats/summary`, { headers: { Authorization: 'Bearer good' } });
    // No summary provider: past authn/authz the path is unknown.
    expect(r.status).toBe(404);
    expect(reviews.sars.at(-1)).toEqual({
      user: 'alice',
      groups: ['devs', 'system:authenticated'],
      resourceAttributes: {
        namespace: '',
        verb: 'get',
        group: '',
        version: 'v1',
        resource: 'nodes',
        subresource: 'stats',
        name: 'node1',
      },
    });
  });

  it('falls back from nodes/pods to nodes/proxy (fine-grained), and names both when forbidden', async () => {
    expect((await get(`${f.server.url}/pods`, { headers: { Authorization: 'Bearer good' } })).status).toBe(
      200,
    );
    const denied = await get(`${f.server.url}/pods`, {
      method: 'POST',
      headers: { Authorization: 'Bearer good' },
    });
    expect(denied).toMatchObject({
      status: 403,
      body: 'Forbidden (user=alice, verb=create, resource=nodes, subresource(s)=[pods proxy])',
    });
  });

  it('caches token reviews for 2 minutes of the injected clock', async () => {
    const before = reviews.tokenReviews;
    await get(`${f.server.url}/healthz`, { headers: { Authorization: 'Bearer good' } });
    expect(reviews.tokenReviews).toBe(before);
    await clock.advance(120_000);
    await get(`${f.server.url}/healthz`, { headers: { Authorization: 'Bearer good' } });
    expect(reviews.tokenReviews).toBe(before + 1);
  });

  it('authenticates a client certificate signed by the client CA as its CN and O', async () => {
    const r = await get(`${f.server.url}/metrics/cadvisor`, client);
    expect(r).toMatchObject({
      status: 403,
      body: 'Forbidden (user=system:node:node1, verb=get, resource=nodes, subresource(s)=[metrics])',
    });
    expect(reviews.sars.at(-1)).toMatchObject({
      user: 'system:node:node1',
      groups: ['system:nodes', 'system:authenticated'],
    });
  });
});

describe('anonymous authentication', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({
      authenticator: new RequestAuthenticator({ anonymous: true }),
      authorizer: { authorize: async (a) => ({ allowed: a.subresource === 'healthz', reason: '' }) },
    });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('lets unauthenticated requests through as system:anonymous, still authorized', async () => {
    expect((await get(`${f.server.url}/healthz`)).status).toBe(200);
    expect(await get(`${f.server.url}/pods`)).toMatchObject({
      status: 403,
      body: 'Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[pods proxy])',
    });
  });
});

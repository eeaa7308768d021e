// The kubelet's Webhook authorization against a real (mini) kube-apiserver in RBAC mode:
// the kubelet posts SubjectAccessReviews with its own credentials (bound to
// system:auth-delegator), and the API server answers them from ClusterRoles and bindings —
// upstream's bootstrap system:kubelet-api-admin for the API server's kubelet client, and a
// role with only `get nodes/stats`. Each user gets exactly the endpoints its rules allow;
// refusals carry the kubelet's 403 text naming every subresource tried.
import {
  createSelfSignedTls,
  issueClientCertificate,
  type MiniApiServer,
  startMiniApiServer,
} from '@nodeagent/mini-apiserver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiPoster, RequestAuthenticator, SubjectAccessReviewAuthorizer } from '../src/index.js';
import { type Fixture, get, startFixture } from './fixture.js';

const RBAC = 'rbac.authorization.k8s.io';

describe('kubelet Webhook authorization against the mini-apiserver in RBAC mode', () => {
  let api: MiniApiServer;
  let f: Fixture;
  const certs: Record<string, { cert: string; key: string }> = {};

  beforeAll(async () => {
    api = await startMiniApiServer({
      authorization: 'RBAC',
      tls: 'self-signed',
      tokens: [{ token: 'kubelet-token', user: 'system:node:node1', groups: ['system:nodes'] }],
    });
    const binding = (name: string, role: string, user: string) =>
      api.store.create('clusterrolebindings', {
        apiVersion: `${RBAC}/v1`,
        kind: 'ClusterRoleBinding',
        metadata: { name },
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role },
        subjects: [{ apiGroup: RBAC, kind: 'User', name: user }],
      } as never);
    // The kubelet may ask (upstream: system:node / the auth-delegator rules).
    binding('kubelet-delegator', 'system:auth-delegator', 'system:node:node1');
    binding('apiserver-kubelet-client', 'system:kubelet-api-admin', 'kube-apiserver-kubelet-client');
    api.store.create('clusterroles', {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'stats-reader' },
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['nodes/stats'] }],
    } as never);
    binding('stats-reader', 'stats-reader', 'stats-reader');
    const ca = await createSelfSignedTls({ hosts: ['127.0.0.1'] });
    for (const cn of ['kube-apiserver-kubelet-client', 'stats-reader', 'nobody']) {
      certs[cn] = await issueClientCertificate(ca, { commonName: cn });
    }
    const post = createApiPoster({
      server: api.url,
      token: 'kubelet-token',
      ...(api.tls?.ca !== undefined ? { ca: api.tls.ca } : {}),
    });
    f = await startFixture({
      clientCa: ca.ca,
      authenticator: new RequestAuthenticator({ x509: true }),
      authorizer: new SubjectAccessReviewAuthorizer({ post }),
    });
  });
  afterAll(async () => {
    await f?.stop();
    await api?.stop();
  });

  const as = (user: string, path: string, method = 'GET') =>
    get(`${f.server.url}${path}`, { ...certs[user], method });
  const forbidden = (user: string, verb: string, subresources: string) =>
    `Forbidden (user=${user}, verb=${verb}, resource=nodes, subresource(s)=[${subresources}])`;

  it('system:kubelet-api-admin may use every endpoint', async () => {
    const admin = 'kube-apiserver-kubelet-client';
    expect(await as(admin, '/pods')).toMatchObject({ status: 200 });
    expect((await as(admin, '/containerLogs/default/web/app')).body).toBe(
      'new line 1\nnew line 2\nwarn\nnew line 3\n',
    );
    // allowed, past authorization: no stats provider in this fixture
    expect((await as(admin, '/stats/summary')).status).toBe(404);
    expect((await as(admin, '/metrics')).status).not.toBe(403);
    expect((await as(admin, '/logs/')).status).not.toBe(403);
    expect((await as(admin, '/healthz')).status).toBe(200);
  });

  it('a user with only get nodes/stats reaches /stats and nothing else', async () => {
    const u = 'stats-reader';
    expect((await as(u, '/stats/summary')).status).toBe(404);
    expect(await as(u, '/stats/summary', 'POST')).toMatchObject({
      status: 403,
      body: forbidden(u, 'create', 'stats'),
    });
    expect(await as(u, '/pods')).toMatchObject({ status: 403, body: forbidden(u, 'get', 'pods proxy') });
    expect(await as(u, '/containerLogs/default/web/app')).toMatchObject({
      status: 403,
      body: forbidden(u, 'get', 'proxy'),
    });
    expect(await as(u, '/metrics')).toMatchObject({ status: 403, body: forbidden(u, 'get', 'metrics') });
    expect(await as(u, '/logs/')).toMatchObject({ status: 403, body: forbidden(u, 'get', 'log') });
  });

  it('a user without bindings gets 403, the fine-grained subresource named before proxy', async () => {
    expect(await as('nobody', '/stats/summary')).toMatchObject({
      status: 403,
      body: forbidden('nobody', 'get', 'stats'),
    });
    expect(await as('nobody', '/healthz')).toMatchObject({
      status: 403,
      body: forbidden('nobody', 'get', 'healthz proxy'),
    });
  });
});

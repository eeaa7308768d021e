// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// The RBAC mode: kube-apiserver's request attributes (RequestInfoFactory), rule matching
// (verbs, apiGroups, resources with subresources and */subresource, resourceNames,
// nonResourceURLs with * and a trailing *), bindings to users, groups and service accounts,
// system:masters bypass, 403 with upstream's message, SubjectAccessReview and
// SelfSubjectAccessReview, and `kubectl auth can-i` against it.
import { afterEach, describe, expect, test } from 'vitest';
import { type MiniApiServer, type PolicyRule, requestInfo, ruleAllows } from '../src/index.js';
import {
  callAs,
  clusterRole,
  clusterRoleBinding,
  pod,
  role,
  roleBinding,
  seedRbac,
  start,
} from './helpers.js';
import { kubectlMissing, requireKubectl, startRbacTlsFor, withKubectlAs } from './kubectl-harness.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

const info = (method: string, path: string, query = '') =>
  requestInfo(method, path, new URLSearchParams(query));

describe('request attributes (upstream RequestInfoFactory)', () => {
  test.each([
    ['GET', '/api/v1/namespaces/default/pods', '', 'list', '', 'default', 'pods', '', ''],
    ['GET', '/api/v1/namespaces/default/pods', 'watch=true', 'watch', '', 'default', 'pods', '', ''],
    ['GET', '/api/v1/namespaces/default/pods', 'watch=false', 'list', '', 'default', 'pods', '', ''],
    ['GET', '/api/v1/watch/namespaces/default/pods', '', 'watch', '', 'default', 'pods', '', ''],
    ['GET', '/api/v1/nodes', 'fieldSelector=metadata.name%3Dn1', 'list', '', '', 'nodes', '', 'n1'],
    ['GET', '/api/v1/namespaces/default/pods/web', '', 'get', '', 'default', 'pods', '', 'web'],
    [
      'PUT',
      '/api/v1/namespaces/default/pods/web/status',
      '',
      'update',
      '',
      'default',
      'pods',
      'status',
      'web',
    ],
    ['PATCH', '/api/v1/nodes/n1/status', '', 'patch', '', '', 'nodes', 'status', 'n1'],
    ['POST', '/api/v1/namespaces/default/pods', '', 'create', '', 'default', 'pods', '', ''],
    ['DELETE', '/api/v1/namespaces/default/pods', '', 'deletecollection', '', 'default', 'pods', '', ''],
    ['DELETE', '/api/v1/namespaces/default/pods/web', '', 'delete', '', 'default', 'pods', '', 'web'],
    ['GET', '/api/v1/namespaces/kube-system', '', 'get', '', 'kube-system', 'namespaces', '', 'kube-system'],
    ['PUT', '/api/v1/namespaces/ns1/status', '', 'update', '', 'ns1', 'namespaces', 'status', 'ns1'],
    [
      'PUT',
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1',
      '',
      'update',
      'coordination.k8s.io',
      'kube-node-lease',
      'leases',
      '',
      'n1',
    ],
  ])('%s %s ?%s → %s', (method, path, query, verb, group, ns, resource, sub, name) => {
    expect(info(method, path, query)).toMatchObject({
      isResourceRequest: true,
      verb,
      apiGroup: group,
      namespace: ns,
      resource,
      subresource: sub,
      name,
    });
  });

  test.each([
    ['GET', '/healthz'],
    ['GET', '/api'],
    ['GET', '/api/v1'],
    ['GET', '/apis/coordination.k8s.io'],
    ['GET', '/apis/coordination.k8s.io/v1'],
    ['POST', '/version'],
  ])('%s %s is a non-resource request', (method, path) => {
    expect(info(method, path)).toMatchObject({ isResourceRequest: false, verb: method.toLowerCase(), path });
  });
});

describe('rule matching (upstream RuleAllows)', () => {
  const podsGet = info('GET', '/api/v1/namespaces/default/pods/web');
  const podStatus = info('PATCH', '/api/v1/namespaces/default/pods/web/status');
  const lease = info('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1');
  const rule = (r: Partial<PolicyRule>): PolicyRule => ({ verbs: [], ...r });
  test.each<[string, PolicyRule, ReturnType<typeof info>, boolean]>([
    ['exact', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }), podsGet, true],
    ['wrong verb', rule({ verbs: ['list'], apiGroups: [''], resources: ['pods'] }), podsGet, false],
    ['verb *', rule({ verbs: ['*'], apiGroups: [''], resources: ['pods'] }), podsGet, true],
    ['wrong group', rule({ verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] }), podsGet, false],
    ['no apiGroups', rule({ verbs: ['get'], resources: ['pods'] }), podsGet, false],
    ['group *', rule({ verbs: ['update'], apiGroups: ['*'], resources: ['leases'] }), lease, true],
    ['resource *', rule({ verbs: ['get'], apiGroups: [''], resources: ['*'] }), podsGet, true],
    [
      'pods does not cover pods/status',
      rule({ verbs: ['patch'], apiGroups: [''], resources: ['pods'] }),
      podStatus,
      false,
    ],
    ['pods/status', rule({ verbs: ['patch'], apiGroups: [''], resources: ['pods/status'] }), podStatus, true],
    ['*/status', rule({ verbs: ['patch'], apiGroups: [''], resources: ['*/status'] }), podStatus, true],
    [
      '*/status is not pods',
      rule({ verbs: ['get'], apiGroups: [''], resources: ['*/status'] }),
      podsGet,
      false,
    ],
    ['* covers subresources', rule({ verbs: ['patch'], apiGroups: [''], resources: ['*'] }), podStatus, true],
    [
      'resourceNames match',
      rule({
        verbs: ['update'],
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['n1'],
      }),
      lease,
      true,
    ],
    [
      'resourceNames other',
      rule({
        verbs: ['update'],
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['n2'],
      }),
      lease,
      false,
    ],
    [
      'resourceNames vs list',
      rule({ verbs: ['list'], apiGroups: [''], resources: ['pods'], resourceNames: ['web'] }),
      info('GET', '/api/v1/namespaces/default/pods'),
      false,
    ],
    [
      'nonResourceURL exact',
      rule({ verbs: ['get'], nonResourceURLs: ['/healthz'] }),
      info('GET', '/healthz'),
      true,
    ],
    [
      'nonResourceURL prefix *',
      rule({ verbs: ['get'], nonResourceURLs: ['/apis/*'] }),
      info('GET', '/apis/coordination.k8s.io'),
      true,
    ],
    [
      'nonResourceURL other',
      rule({ verbs: ['get'], nonResourceURLs: ['/healthz'] }),
      info('GET', '/livez'),
      false,
    ],
    ['nonResourceURL *', rule({ verbs: ['get'], nonResourceURLs: ['*'] }), info('GET', '/anything'), true],
    [
      'resource rule vs path',
      rule({ verbs: ['get'], apiGroups: ['*'], resources: ['*'] }),
      info('GET', '/healthz'),
      false,
    ],
    ['path rule vs resource', rule({ verbs: ['get'], nonResourceURLs: ['*'] }), podsGet, false],
  ])('%s', (_name, r, request, allowed) => {
    expect(ruleAllows(request, r)).toBe(allowed);
  });
});

const as = (token: string, method: string, path: string, body?: unknown) =>
  callAs(server, token, method, path, body);

async function rbacServer(): Promise<void> {
  server = await start({
    authorization: 'RBAC',
    tokens: [
      { token: 'admin', user: 'root', groups: ['system:masters'] },
      { token: 'alice', user: 'alice' },
      { token: 'bob', user: 'bob', groups: ['viewers'] },
      { token: 'sa', user: 'system:serviceaccount:default:builder' },
    ],
  });
}

describe('RBAC mode', () => {
  test('403 with kube-apiserver message and details; system:masters bypasses', async () => {
    await rbacServer();
    const res = await as('alice', 'GET', '/api/v1/namespaces/default/pods');
    expect(res.code).toBe(403);
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
      reason: 'Forbidden',
      details: { name: '', kind: 'pods' },
      code: 403,
    });
    const named = await as(
      'alice',
      'PUT',
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1',
      {},
    );
    expect(named.body.message).toBe(
      'leases.coordination.k8s.io "n1" is forbidden: User "alice" cannot update resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease"',
    );
    expect(named.body.details).toEqual({ name: 'n1', group: 'coordination.k8s.io', kind: 'leases' });
    const cluster = await as('alice', 'PATCH', '/api/v1/nodes/n1/status', {});
    expect(cluster.body.message).toBe(
      'nodes "n1" is forbidden: User "alice" cannot patch resource "nodes/status" in API group "" at the cluster scope',
    );
    const path = await as('alice', 'GET', '/metrics');
    expect(path.body.message).toBe('forbidden: User "alice" cannot get path "/metrics"');
    expect((await as('admin', 'GET', '/api/v1/namespaces/default/pods')).code).toBe(200);
  });

  test('the bootstrap roles let every authenticated user discover the API', async () => {
    await rbacServer();
    for (const p of ['/api', '/api/v1', '/apis', '/apis/coordination.k8s.io/v1', '/version', '/openapi/v3']) {
      expect([p, (await as('alice', 'GET', p)).code]).toEqual([p, 200]);
    }
    expect(server.store.list('clusterroles').map((r) => r.metadata?.name)).toEqual(
      expect.arrayContaining(['system:discovery', 'system:basic-user', 'system:public-info-viewer']),
    );
  });

  test('RoleBindings grant in their namespace; ClusterRoleBindings everywhere; groups and service accounts', async () => {
    await rbacServer();
    server.store.create('namespaces', { metadata: { name: 'other' } });
    server.store.create('pods', pod('web'));
    seedRbac(
      server,
      clusterRole('pod-reader', [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }]),
      role('default', 'pod-writer', [{ verbs: ['create'], apiGroups: [''], resources: ['pods'] }]),
      roleBinding('default', 'alice-reads', 'ClusterRole', 'pod-reader', {
        kind: 'User',
        name: 'alice',
      }),
      roleBinding('default', 'sa-writes', 'Role', 'pod-writer', {
        kind: 'ServiceAccount',
        name: 'builder',
      }),
      clusterRoleBinding('viewers-read', 'pod-reader', { kind: 'Group', name: 'viewers' }),
    );
    expect((await as('alice', 'GET', '/api/v1/namespaces/default/pods/web')).code).toBe(200);
    expect((await as('alice', 'GET', '/api/v1/namespaces/other/pods')).code).toBe(403);
    expect((await as('alice', 'GET', '/api/v1/pods')).code).toBe(403);
    expect((await as('bob', 'GET', '/api/v1/pods')).code).toBe(200);
    expect((await as('bob', 'GET', '/api/v1/namespaces/other/pods')).code).toBe(200);
    expect((await as('sa', 'POST', '/api/v1/namespaces/default/pods', pod('new'))).code).toBe(201);
    expect((await as('sa', 'POST', '/api/v1/namespaces/other/pods', pod('new', { ns: 'other' }))).code).toBe(
      403,
    );
    expect((await as('alice', 'DELETE', '/api/v1/namespaces/default/pods/web')).code).toBe(403);
  });

  test('a binding to a missing role adds upstream reason to the 403', async () => {
    await rbacServer();
    seedRbac(server, clusterRoleBinding('dangling', 'gone', { kind: 'User', name: 'alice' }));
    const res = await as('alice', 'GET', '/api/v1/nodes');
    expect(res.body.message).toBe(
      'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found',
    );
  });

  test('SubjectAccessReview and SelfSubjectAccessReview', async () => {
    await rbacServer();
    seedRbac(
      server,
      clusterRole('node-status', [{ verbs: ['patch'], apiGroups: [''], resources: ['nodes/status'] }]),
      clusterRoleBinding('alice-node-status', 'node-status', { kind: 'User', name: 'alice' }),
    );
    const sar = (spec: unknown) =>
      as('admin', 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec,
      });
    const yes = await sar({
      user: 'alice',
      resourceAttributes: { verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n1' },
    });
    expect(yes.code).toBe(201);
    expect(yes.body.status).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by ClusterRoleBinding "alice-node-status" of ClusterRole "node-status" to User "alice"',
    });
    const no = await sar({ user: 'alice', resourceAttributes: { verb: 'patch', resource: 'nodes' } });
    expect(no.body.status).toEqual({ allowed: false });
    const masters = await sar({
      user: 'x',
      groups: ['system:masters'],
      nonResourceAttributes: { path: '/metrics', verb: 'get' },
    });
    expect(masters.body.status).toEqual({ allowed: true });
    const none = await sar({ resourceAttributes: { verb: 'get', resource: 'pods' } });
    expect(none.code).toBe(422);
    expect(none.body.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "": at least one of user or group must be specified',
        field: 'spec.user',
      },
    ]);
    const neither = await sar({ user: 'alice' });
    expect(neither.body.details.causes[0].field).toBe('spec.resourceAttributes');
    // Creating SubjectAccessReviews is itself authorized: alice may not.
    expect(
      (
        await as('alice', 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          spec: { user: 'alice', nonResourceAttributes: { path: '/', verb: 'get' } },
        })
      ).code,
    ).toBe(403);
    // Every authenticated user may ask about itself (system:basic-user).
    const self = await as('alice', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      spec: { resourceAttributes: { verb: 'patch', resource: 'nodes', subresource: 'status' } },
    });
    expect(self.code).toBe(201);
    expect(self.body).toMatchObject({ kind: 'SelfSubjectAccessReview', status: { allowed: true } });
  });

  test('without RBAC every request is allowed and reviews say so', async () => {
    server = await start({ token: 't' });
    const res = await as('t', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      spec: { resourceAttributes: { verb: 'delete', resource: 'nodes' } },
    });
    expect(res.body.status).toEqual({ allowed: true });
  });

  test('an unknown authorization mode is refused', async () => {
    await expect(start({ authorization: 'Node' as never })).rejects.toThrow(
      `authorization must be 'AlwaysAllow' or 'RBAC', got "Node"`,
    );
  });
});

describe.skipIf(kubectlMissing && process.env.CI !== 'true')('kubectl auth can-i', () => {
  test('answers yes/no per the RBAC objects, for resources, subresources and paths', async () => {
    requireKubectl();
    server = await startRbacTlsFor('alice');
    seedRbac(
      server,
      clusterRole('r', [
        { verbs: ['list', 'watch'], apiGroups: [''], resources: ['pods'] },
        { verbs: ['patch'], apiGroups: [''], resources: ['pods/status'] },
        { verbs: ['get'], nonResourceURLs: ['/logs/*'] },
      ]),
      roleBinding('default', 'b', 'ClusterRole', 'r', { kind: 'User', name: 'alice' }),
    );
    await withKubectlAs(server, 'alice', async (kubectl) => {
      const canI = (...args: string[]) => kubectl('auth', 'can-i', ...args);
      expect(await canI('list', 'pods', '-n', 'default')).toEqual({ code: 0, out: 'yes' });
      expect(await canI('list', 'pods', '-n', 'other')).toEqual({ code: 1, out: 'no' });
      expect(await canI('delete', 'pods', '-n', 'default')).toEqual({ code: 1, out: 'no' });
      expect(await canI('patch', 'pods', '--subresource=status', '-n', 'default')).toEqual({
        code: 0,
        out: 'yes',
      });
      expect(await canI('get', '/logs/kubelet.log')).toEqual({ code: 1, out: 'no' });
      const resources = (await kubectl('api-resources', '--api-group=authorization.k8s.io', '-o', 'name'))
        .out;
      expect(resources.split('\n').sort()).toEqual([
        'localsubjectaccessreviews.authorization.k8s.io',
        'selfsubjectaccessreviews.authorization.k8s.io',
        'selfsubjectrulesreviews.authorization.k8s.io',
        'subjectaccessreviews.authorization.k8s.io',
      ]);
    });
  }, 60_000);
});

describe('protobuf access reviews', () => {
  /** Minimal protobuf writer: length-delimited fields only (what the reviews use). */
  const field = (n: number, value: Buffer | string): Buffer => {
    const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value);
    const len: number[] = [];
    let l = bytes.length;
    do {
      len.push((l & 0x7f) | (l > 0x7f ? 0x80 : 0));
      l >>= 7;
    } while (l > 0);
    return Buffer.concat([Buffer.from([(n << 3) | 2, ...len]), bytes]);
  };
  const envelope = (kind: string, spec: Buffer): Buffer =>
    Buffer.concat([
      Buffer.from('k8s\0', 'binary'),
      field(1, Buffer.concat([field(1, 'authorization.k8s.io/v1'), field(2, kind)])),
      field(2, Buffer.concat([field(1, Buffer.alloc(0)), field(2, spec)])),
      field(4, 'application/vnd.kubernetes.protobuf'),
    ]);

  test('a SubjectAccessReview in protobuf is decoded (user, groups, resource attributes)', async () => {
    await rbacServer();
    const spec = Buffer.concat([
      field(1, Buffer.concat([field(1, 'default'), field(2, 'list'), field(5, 'pods')])),
      field(3, 'x'),
      field(4, 'system:masters'),
    ]);
    const res = await fetch(`${server.url}/apis/authorization.k8s.io/v1/subjectaccessreviews`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin', 'content-type': 'application/vnd.kubernetes.protobuf' },
      body: envelope('SubjectAccessReview', spec),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      kind: 'SubjectAccessReview',
      spec: {
        user: 'x',
        groups: ['system:masters'],
        resourceAttributes: { namespace: 'default', verb: 'list', resource: 'pods' },
      },
      status: { allowed: true },
    });
  });

  test('bytes that are not a review get 400, not 500', async () => {
    await rbacServer();
    for (const body of [Buffer.from('k8s\0\xff\xff\xff', 'binary'), Buffer.from('garbage')]) {
      const res = await fetch(`${server.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
        method: 'POST',
        headers: { authorization: 'Bearer alice', 'content-type': 'application/vnd.kubernetes.protobuf' },
        body,
      });
      expect(res.status).toBe(400);
    }
  });
});

// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// The rest of kube-apiserver's RBAC mode: SelfSubjectRulesReview (`kubectl auth can-i
// --list`), LocalSubjectAccessReview, and privilege-escalation prevention on writes of
// Roles, ClusterRoles and their bindings (upstream's `escalate` / `bind` verbs and its
// "attempting to grant RBAC permissions not currently held" refusal), also through kubectl.
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { compactRules, compactString, uncoveredRules } from '../src/rbac-rules.js';
import {
  callAs,
  clusterRole,
  clusterRoleBinding as crb,
  RBAC_GROUP as GROUP,
  roleBinding as rb,
  role,
  seedRbac,
  start,
} from './helpers.js';
import { kubectlMissing, requireKubectl, startRbacTlsFor, withKubectlAs } from './kubectl-harness.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

const as = (token: string, method: string, path: string, body?: unknown) =>
  callAs(server, token, method, path, body);

async function rbacServer(): Promise<void> {
  server = await start({
    authorization: 'RBAC',
    tokens: [
      { token: 'admin', user: 'root', groups: ['system:masters'] },
      { token: 'alice', user: 'alice', groups: ['devs'] },
      { token: 'bob', user: 'bob' },
    ],
  });
  server.store.create('namespaces', { metadata: { name: 'ns1' } } as any);
}

describe('rule comparison (upstream Covers / CompactRules / CompactString)', () => {
  test('a rule is broken down per group, resource, verb and name; */subresource and URL prefixes cover', () => {
    const owner = [
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', '*/status'] },
      { verbs: ['get'], nonResourceURLs: ['/logs/*'] },
      { verbs: ['update'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
    ];
    expect(
      uncoveredRules(owner, [
        { verbs: ['get'], apiGroups: [''], resources: ['pods', 'nodes/status'] },
        { verbs: ['get'], nonResourceURLs: ['/logs/x', '/metrics'] },
        { verbs: ['update'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a', 'b'] },
        { verbs: ['update'], apiGroups: [''], resources: ['configmaps'] },
      ]),
    ).toEqual([
      { nonResourceURLs: ['/metrics'], verbs: ['get'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['update'], resourceNames: ['b'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['update'] },
    ]);
    expect(
      compactRules([
        { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
        { nonResourceURLs: ['/x'], verbs: ['get'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      ]).map(compactString),
    ).toEqual([
      '{NonResourceURLs:["/x"], Verbs:["get"]}',
      '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}',
    ]);
  });
});

describe('SelfSubjectRulesReview', () => {
  test('rules of cluster-wide and namespace bindings, split as kube-apiserver does', async () => {
    await rbacServer();
    seedRbac(
      server,
      clusterRole('viewer', [
        { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], resourceNames: ['web'] },
        { verbs: ['get'], nonResourceURLs: ['/metrics'] },
      ]),
      crb('viewer', 'viewer', 'alice'),
      role('ns1', 'cm', [{ verbs: ['*'], apiGroups: [''], resources: ['configmaps'] }]),
      rb('ns1', 'cm', 'Role', 'cm', 'alice'),
      rb('ns1', 'gone', 'ClusterRole', 'missing', 'alice'),
    );
    const res = await as('alice', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'ns1' },
    });
    expect(res.code).toBe(201);
    expect(res.body.kind).toBe('SelfSubjectRulesReview');
    const status = res.body.status;
    expect(status.incomplete).toBe(false);
    expect(status.evaluationError).toBe('clusterrole.rbac.authorization.k8s.io "missing" not found');
    expect(status.resourceRules).toContainEqual({
      verbs: ['get', 'list'],
      apiGroups: [''],
      resources: ['pods'],
      resourceNames: ['web'],
    });
    expect(status.resourceRules).toContainEqual({ verbs: ['*'], apiGroups: [''], resources: ['configmaps'] });
    // system:basic-user, bound to system:authenticated
    expect(status.resourceRules).toContainEqual({
      verbs: ['create'],
      apiGroups: ['authorization.k8s.io'],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
    });
    expect(status.nonResourceRules).toContainEqual({ verbs: ['get'], nonResourceURLs: ['/metrics'] });
    // in another namespace the Role's rule is absent
    const other = await as('alice', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      spec: { namespace: 'default' },
    });
    expect(other.body.status.resourceRules).not.toContainEqual({
      verbs: ['*'],
      apiGroups: [''],
      resources: ['configmaps'],
    });
    expect(other.body.status.evaluationError).toBeUndefined();
  });

  test('no namespace: 400 as kube-apiserver; AlwaysAllow answers everything', async () => {
    await rbacServer();
    const res = await as('alice', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      spec: {},
    });
    expect(res.code).toBe(400);
    expect(res.body.message).toBe('no namespace on request');
    await server.stop();
    server = await start();
    const all = await fetch(`${server.url}/apis/authorization.k8s.io/v1/selfsubjectrulesreviews`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ spec: { namespace: 'default' } }),
    });
    expect(((await all.json()) as any).status).toEqual({
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    });
  });
});

describe('LocalSubjectAccessReview', () => {
  test('answers for a user in the URL namespace; non-resource attributes are refused', async () => {
    await rbacServer();
    seedRbac(
      server,
      role('ns1', 'r', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]),
      rb('ns1', 'b', 'Role', 'r', 'bob'),
    );
    const path = '/apis/authorization.k8s.io/v1/namespaces/ns1/localsubjectaccessreviews';
    const ask = (spec: unknown, metadata: unknown = {}) =>
      as('admin', 'POST', path, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'LocalSubjectAccessReview',
        metadata,
        spec,
      });
    const yes = await ask({
      user: 'bob',
      resourceAttributes: { namespace: 'ns1', verb: 'get', resource: 'pods' },
    });
    expect(yes.code).toBe(201);
    expect(yes.body).toMatchObject({
      kind: 'LocalSubjectAccessReview',
      metadata: { namespace: 'ns1' },
      status: { allowed: true, reason: 'RBAC: allowed by RoleBinding "b/ns1" of Role "r" to User "bob"' },
    });
    const no = await ask({
      user: 'bob',
      resourceAttributes: { namespace: 'ns1', verb: 'delete', resource: 'pods' },
    });
    expect(no.body.status).toEqual({ allowed: false });
    const nonResource = await ask({ user: 'bob', nonResourceAttributes: { path: '/x', verb: 'get' } });
    expect(nonResource.code).toBe(422);
    expect(nonResource.body.message).toContain('spec.nonResourceAttributes');
    expect(nonResource.body.message).toContain('disallowed on this kind of request');
    const wrongNs = await ask(
      { user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods' } },
      { namespace: 'ns2' },
    );
    expect(wrongNs.code).toBe(400);
    // RBAC guards the review itself: bob may not create it
    const denied = await as('bob', 'POST', path, {
      spec: { user: 'bob', resourceAttributes: { verb: 'get' } },
    });
    expect(denied.code).toBe(403);
  });
});

describe('escalation prevention', () => {
  const base = '/apis/rbac.authorization.k8s.io/v1';
  async function limitedAlice(extraRules: unknown[] = []): Promise<void> {
    await rbacServer();
    seedRbac(
      server,
      clusterRole('rbac-writer', [
        {
          verbs: ['create', 'update', 'patch'],
          apiGroups: [GROUP],
          resources: ['clusterroles', 'roles', 'rolebindings', 'clusterrolebindings'],
        },
        { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
        ...extraRules,
      ]),
      crb('rbac-writer', 'rbac-writer', 'alice'),
    );
  }

  test('a ClusterRole with rules the user lacks is refused with upstream message; held rules pass', async () => {
    await limitedAlice();
    const res = await as(
      'alice',
      'POST',
      `${base}/clusterroles`,
      clusterRole('x', [
        { verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods', 'secrets'] },
        { verbs: ['get'], nonResourceURLs: ['/metrics'] },
      ]),
    );
    expect(res.code).toBe(403);
    expect(res.body).toMatchObject({
      reason: 'Forbidden',
      details: { name: 'x', group: GROUP, kind: 'clusterroles' },
      message:
        'clusterroles.rbac.authorization.k8s.io "x" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}\n' +
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    });
    expect(server.store.tryGet('clusterroles', undefined, 'x')).toBeUndefined();
    const ok = await as(
      'alice',
      'POST',
      `${base}/clusterroles`,
      clusterRole('y', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }]),
    );
    expect(ok.code).toBe(201);
    // widening it by a patch is refused too; the stored object is unchanged
    const patch = await fetch(`${server.url}${base}/clusterroles/y`, {
      method: 'PATCH',
      headers: { authorization: 'Bearer alice', 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }] }),
    });
    expect(patch.status).toBe(403);
    expect((server.store.get('clusterroles', undefined, 'y') as any).rules).toEqual([
      { verbs: ['list'], apiGroups: [''], resources: ['pods'] },
    ]);
    // metadata-only changes (labels) of a role whose rules it holds: allowed
    const label = await fetch(`${server.url}${base}/clusterroles/y`, {
      method: 'PATCH',
      headers: { authorization: 'Bearer alice', 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { labels: { a: 'b' } } }),
    });
    expect(label.status).toBe(200);
    // system:masters is never checked
    expect(
      (
        await as(
          'admin',
          'POST',
          `${base}/clusterroles`,
          clusterRole('z', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]),
        )
      ).code,
    ).toBe(201);
  });

  test('the escalate verb lifts the check; an aggregationRule needs every permission', async () => {
    await limitedAlice([{ verbs: ['escalate'], apiGroups: [GROUP], resources: ['roles'] }]);
    const inNs = await as(
      'alice',
      'POST',
      `${base}/namespaces/default/roles`,
      role('default', 'r', [{ verbs: ['*'], apiGroups: [''], resources: ['secrets'] }]),
    );
    expect(inNs.code).toBe(201);
    const cluster = await as(
      'alice',
      'POST',
      `${base}/clusterroles`,
      clusterRole('agg', [], {
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] },
      }),
    );
    expect(cluster.code).toBe(403);
    expect(cluster.body.message).toBe(
      'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule',
    );
  });

  test('a Role is checked against the rules the user holds in its namespace', async () => {
    await limitedAlice();
    seedRbac(
      server,
      role('ns1', 'cm', [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }]),
      rb('ns1', 'cm', 'Role', 'cm', 'alice'),
    );
    const held = role('ns1', 'r', [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }]);
    expect((await as('alice', 'POST', `${base}/namespaces/ns1/roles`, held)).code).toBe(201);
    const elsewhere = await as('alice', 'POST', `${base}/namespaces/default/roles`, {
      ...held,
      metadata: { name: 'r' },
    });
    expect(elsewhere.code).toBe(403);
    expect(elsewhere.body.message).toContain(
      'roles.rbac.authorization.k8s.io "r" is forbidden: user "alice"',
    );
  });

  test('binding a role whose rules the user lacks needs bind; a missing role is 404', async () => {
    await limitedAlice();
    seedRbac(
      server,
      clusterRole('secrets', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]),
      clusterRole('pods', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]),
    );
    const refused = await as('alice', 'POST', `${base}/clusterrolebindings`, crb('b1', 'secrets', 'bob'));
    expect(refused.code).toBe(403);
    expect(refused.body.message).toBe(
      'clusterrolebindings.rbac.authorization.k8s.io "b1" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
    expect((await as('alice', 'POST', `${base}/clusterrolebindings`, crb('b2', 'pods', 'bob'))).code).toBe(
      201,
    );
    expect(
      (
        await as(
          'alice',
          'POST',
          `${base}/namespaces/default/rolebindings`,
          rb('default', 'b3', 'ClusterRole', 'secrets', 'bob'),
        )
      ).code,
    ).toBe(403);
    const missing = await as('alice', 'POST', `${base}/clusterrolebindings`, crb('b4', 'nope', 'bob'));
    expect(missing.code).toBe(404);
    expect(missing.body.message).toBe('clusterrole.rbac.authorization.k8s.io "nope" not found');
    // bind on that one ClusterRole, in that namespace only
    seedRbac(
      server,
      role('default', 'binder', [
        { verbs: ['bind'], apiGroups: [GROUP], resources: ['clusterroles'], resourceNames: ['secrets'] },
      ]),
      rb('default', 'binder', 'Role', 'binder', 'alice'),
    );
    expect(
      (
        await as(
          'alice',
          'POST',
          `${base}/namespaces/default/rolebindings`,
          rb('default', 'b3', 'ClusterRole', 'secrets', 'bob'),
        )
      ).code,
    ).toBe(201);
    expect((await as('alice', 'POST', `${base}/clusterrolebindings`, crb('b1', 'secrets', 'bob'))).code).toBe(
      403,
    );
  });
});

describe('impersonation (Impersonate-User / -Group headers, kubectl --as)', () => {
  const asAs = async (token: string, path: string, headers: Record<string, string>) => {
    const res = await fetch(server.url + path, { headers: { authorization: `Bearer ${token}`, ...headers } });
    return { code: res.status, body: (await res.json()) as any };
  };

  test('needs the impersonate verb on users, groups and serviceaccounts; then runs as that user', async () => {
    await rbacServer();
    seedRbac(
      server,
      clusterRole('impersonator', [
        { verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['bob'] },
        { verbs: ['impersonate'], apiGroups: [''], resources: ['groups'], resourceNames: ['readers'] },
      ]),
      crb('impersonator', 'impersonator', 'alice'),
      clusterRole('pod-reader', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }]),
    );
    server.store.create('clusterrolebindings', {
      ...crb('readers', 'pod-reader', 'x'),
      subjects: [{ apiGroup: GROUP, kind: 'Group', name: 'readers' }],
    } as any);
    const pods = '/api/v1/namespaces/default/pods';
    // bob has no rights of his own
    const asBob = await asAs('alice', pods, { 'impersonate-user': 'bob' });
    expect(asBob.code).toBe(403);
    expect(asBob.body.message).toBe(
      'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    // bob in the readers group may list
    expect(
      (await asAs('alice', pods, { 'impersonate-user': 'bob', 'impersonate-group': 'readers' })).code,
    ).toBe(200);
    const carol = await asAs('alice', pods, { 'impersonate-user': 'carol' });
    expect(carol.code).toBe(403);
    expect(carol.body.message).toBe(
      'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const group = await asAs('alice', pods, {
      'impersonate-user': 'bob',
      'impersonate-group': 'system:masters',
    });
    expect(group.body.message).toBe(
      'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    const sa = await asAs('alice', pods, { 'impersonate-user': 'system:serviceaccount:ns1:builder' });
    expect(sa.body.message).toBe(
      'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"',
    );
    expect((await asAs('bob', pods, { 'impersonate-user': 'root' })).code).toBe(403);
    const noUser = await asAs('alice', pods, { 'impersonate-group': 'readers' });
    expect(noUser.code).toBe(400);
    expect(noUser.body.message).toBe('requested [group=readers] without impersonating a user');
    // system:masters may impersonate anyone; the review answers for the impersonated user
    const review = await fetch(`${server.url}/apis/authorization.k8s.io/v1/selfsubjectrulesreviews`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer admin',
        'impersonate-user': 'bob',
        'impersonate-group': 'readers',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ spec: { namespace: 'default' } }),
    });
    expect(((await review.json()) as any).status.resourceRules).toContainEqual({
      verbs: ['list'],
      apiGroups: [''],
      resources: ['pods'],
    });
  });
});

describe.skipIf(kubectlMissing && process.env.CI !== 'true')('kubectl (protobuf)', () => {
  test('auth can-i --list, create clusterrole/clusterrolebinding as a limited user', async () => {
    requireKubectl();
    server = await startRbacTlsFor('alice');
    seedRbac(
      server,
      clusterRole('r', [
        { verbs: ['list', 'watch'], apiGroups: [''], resources: ['pods'] },
        { verbs: ['create'], apiGroups: [GROUP], resources: ['clusterroles', 'clusterrolebindings'] },
        { verbs: ['get'], nonResourceURLs: ['/logs/*'] },
      ]),
      crb('b', 'r', 'alice'),
    );
    await withKubectlAs(server, 'alice', async (kubectl) => {
      const list = await kubectl('auth', 'can-i', '--list');
      expect(list.code).toBe(0);
      const lines = list.out.split('\n').map((l) => l.split(/\s+/).filter((x) => x !== ''));
      expect(lines[0]).toEqual(['Resources', 'Non-Resource', 'URLs', 'Resource', 'Names', 'Verbs']);
      expect(lines).toContainEqual(['pods', '[]', '[]', '[list', 'watch]']);
      expect(lines).toContainEqual(['clusterroles.rbac.authorization.k8s.io', '[]', '[]', '[create]']);
      expect(lines).toContainEqual(['[/logs/*]', '[]', '[get]']);
      const refused = await kubectl('create', 'clusterrole', 'x', '--verb=get', '--resource=secrets');
      expect(refused).toEqual({
        code: 1,
        out:
          'Error from server (Forbidden): clusterroles.rbac.authorization.k8s.io "x" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
          '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
      });
      expect(await kubectl('create', 'clusterrole', 'y', '--verb=list', '--resource=pods')).toEqual({
        code: 0,
        out: 'clusterrole.rbac.authorization.k8s.io/y created',
      });
      expect(server.store.get('clusterroles', undefined, 'y')).toMatchObject({
        rules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }],
      });
      expect(await kubectl('create', 'clusterrolebinding', 'yb', '--clusterrole=y', '--user=bob')).toEqual({
        code: 0,
        out: 'clusterrolebinding.rbac.authorization.k8s.io/yb created',
      });
      expect(server.store.get('clusterrolebindings', undefined, 'yb')).toMatchObject({
        roleRef: { apiGroup: GROUP, kind: 'ClusterRole', name: 'y' },
        subjects: [{ apiGroup: GROUP, kind: 'User', name: 'bob' }],
      });
      seedRbac(server, clusterRole('s', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]));
      const bindRefused = await kubectl(
        'create',
        'clusterrolebinding',
        'sb',
        '--clusterrole=s',
        '--user=bob',
      );
      expect(bindRefused.code).toBe(1);
      expect(bindRefused.out).toContain('is attempting to grant RBAC permissions not currently held');
    });
  }, 60_000);
});

// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { call, pod, start } from './helpers.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

describe('CRUD over HTTP', () => {
  test('create, get, list, update, delete a pod with server-maintained metadata', async () => {
    server = await start();
    const created = await call(server, 'POST', '/api/v1/namespaces/default/pods', pod('web'));
    expect(created.code).toBe(201);
    const meta = created.body.metadata;
    expect(meta.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(meta.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(meta.generation).toBe(1);
    expect(Number(meta.resourceVersion)).toBeGreaterThan(0);
    expect(created.body.status).toEqual({ phase: 'Pending' });

    const got = await call(server, 'GET', '/api/v1/namespaces/default/pods/web');
    expect(got.code).toBe(200);
    expect(got.body).toEqual(created.body);

    const updated = await call(server, 'PUT', '/api/v1/namespaces/default/pods/web', {
      ...got.body,
      metadata: { ...got.body.metadata, labels: { a: 'b' } },
    });
    expect(updated.code).toBe(200);
    expect(updated.body.metadata.labels).toEqual({ a: 'b' });
    expect(updated.body.metadata.generation).toBe(1); // metadata-only change
    expect(Number(updated.body.metadata.resourceVersion)).toBeGreaterThan(Number(meta.resourceVersion));

    const specChange = await call(server, 'PUT', '/api/v1/namespaces/default/pods/web', {
      ...updated.body,
      spec: { ...updated.body.spec, activeDeadlineSeconds: 10 },
    });
    expect(specChange.body.metadata.generation).toBe(2);

    const all = await call(server, 'GET', '/api/v1/pods');
    expect(all.body.kind).toBe('PodList');
    expect(all.body.items.map((p: any) => p.metadata.name)).toEqual(['web']);

    const del = await call(server, 'DELETE', '/api/v1/namespaces/default/pods/web');
    expect(del.code).toBe(200); // unbound pod: removed at once
    expect((await call(server, 'GET', '/api/v1/namespaces/default/pods/web')).code).toBe(404);
  });

  test('404, 409 AlreadyExists and 409 Conflict Status bodies match the real server', async () => {
    server = await start();
    const nf = await call(server, 'GET', '/api/v1/namespaces/default/pods/nope');
    expect(nf.code).toBe(404);
    expect(nf.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', kind: 'pods' },
      code: 404,
    });
    const leaseNf = await call(
      server,
      'GET',
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1',
    );
    expect(leaseNf.body.message).toBe('leases.coordination.k8s.io "n1" not found');
    expect(leaseNf.body.details).toEqual({ name: 'n1', group: 'coordination.k8s.io', kind: 'leases' });

    const first = await call(server, 'POST', '/api/v1/namespaces/default/pods', pod('a'));
    const dup = await call(server, 'POST', '/api/v1/namespaces/default/pods', pod('a'));
    expect(dup.code).toBe(409);
    expect(dup.body).toMatchObject({
      reason: 'AlreadyExists',
      message: 'pods "a" already exists',
      code: 409,
    });

    // Optimistic concurrency: a write with a stale resourceVersion is refused.
    const ok = await call(server, 'PUT', '/api/v1/namespaces/default/pods/a', {
      ...first.body,
      metadata: { ...first.body.metadata, labels: { v: '1' } },
    });
    expect(ok.code).toBe(200);
    const stale = await call(server, 'PUT', '/api/v1/namespaces/default/pods/a', {
      ...first.body,
      metadata: { ...first.body.metadata, labels: { v: '2' } },
    });
    expect(stale.code).toBe(409);
    expect(stale.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'Operation cannot be fulfilled on pods "a": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'a', kind: 'pods' },
      code: 409,
    });
    // Unconditional update (no resourceVersion) is allowed.
    const { resourceVersion: _rv, ...metaNoRv } = first.body.metadata;
    const uncond = await call(server, 'PUT', '/api/v1/namespaces/default/pods/a', {
      ...first.body,
      metadata: { ...metaNoRv, labels: { v: '3' } },
    });
    expect(uncond.code).toBe(200);
  });

  test('422 Invalid carries field causes', async () => {
    server = await start();
    const noContainers = await call(server, 'POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'x' },
      spec: {},
    });
    expect(noContainers.code).toBe(422);
    expect(noContainers.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Pod "x" is invalid: spec.containers: Required value',
      reason: 'Invalid',
      details: {
        name: 'x',
        kind: 'Pod',
        causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' }],
      },
      code: 422,
    });
    const noName = await call(server, 'POST', '/api/v1/namespaces/default/pods', {
      spec: { containers: [{ name: 'a', image: 'i' }] },
    });
    expect(noName.code).toBe(422);
    expect(noName.body.details.causes[0].field).toBe('metadata.name');
    const badName = await call(server, 'POST', '/api/v1/namespaces/default/pods', pod('Bad_Name'));
    expect(badName.body.details.causes[0]).toMatchObject({
      reason: 'FieldValueInvalid',
      field: 'metadata.name',
    });
    const badPort = await call(server, 'POST', '/api/v1/namespaces/default/services', {
      metadata: { name: 'svc' },
      spec: { ports: [{ port: 70000 }] },
    });
    expect(badPort.code).toBe(422);
    expect(badPort.body.message).toBe(
      // targetPort is defaulted to port before validation, so upstream reports both.
      'Service "svc" is invalid: [spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]',
    );
    const slice = await call(server, 'POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      metadata: { name: 's' },
    });
    expect(slice.body.details).toMatchObject({ group: 'discovery.k8s.io', kind: 'EndpointSlice' });
    expect(slice.body.message).toBe(
      'EndpointSlice.discovery.k8s.io "s" is invalid: addressType: Required value',
    );
    const wrongKind = await call(server, 'POST', '/api/v1/namespaces/default/pods', {
      ...pod('k'),
      kind: 'Service',
    });
    expect(wrongKind.code).toBe(400);
    const wrongNs = await call(server, 'POST', '/api/v1/namespaces/default/pods', pod('k', { ns: 'other' }));
    expect(wrongNs.code).toBe(400);
    const missingNs = await call(
      server,
      'POST',
      '/api/v1/namespaces/nowhere/pods',
      pod('k', { ns: 'nowhere' }),
    );
    expect(missingNs.code).toBe(404);
    expect(missingNs.body.message).toBe('namespaces "nowhere" not found');
  });

  test('status subresource: PUT on the main resource ignores status, /status ignores spec', async () => {
    server = await start();
    const created = server.store.create('pods', pod('p', { nodeName: 'n1' }));
    const main = await call(server, 'PUT', '/api/v1/namespaces/default/pods/p', {
      ...created,
      status: { phase: 'Running' },
    });
    expect(main.body.status).toBeUndefined();
    const st = await call(server, 'PUT', '/api/v1/namespaces/default/pods/p/status', {
      ...main.body,
      spec: { ...main.body.spec, nodeName: 'other' },
      status: { phase: 'Running' },
    });
    expect(st.code).toBe(200);
    expect(st.body.status).toEqual({ phase: 'Running' });
    expect(st.body.spec.nodeName).toBe('n1');
    const patched = await call(
      server,
      'PATCH',
      '/api/v1/namespaces/default/pods/p/status',
      { status: { podIP: '10.0.0.5' } },
      'application/merge-patch+json',
    );
    expect(patched.body.status).toEqual({ phase: 'Running', podIP: '10.0.0.5' });
    expect((await call(server, 'GET', '/api/v1/namespaces/default/services/p/status')).code).toBe(404);
  });

  test('graceful deletion of a bound pod, final removal by a zero-grace delete', async () => {
    server = await start();
    server.store.create('pods', pod('bound', { nodeName: 'n1' }));
    const first = await call(server, 'DELETE', '/api/v1/namespaces/default/pods/bound', {
      gracePeriodSeconds: 30,
    });
    expect(first.code).toBe(200);
    expect(first.body.metadata.deletionTimestamp).toBeDefined();
    expect(first.body.metadata.deletionGracePeriodSeconds).toBe(30);
    expect(first.body.metadata.generation).toBe(2);
    expect(server.store.get('pods', 'default', 'bound').metadata?.deletionTimestamp).toBe(
      first.body.metadata.deletionTimestamp,
    );
    // A second delete with a longer grace does not extend it.
    const again = await call(server, 'DELETE', '/api/v1/namespaces/default/pods/bound');
    expect(again.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
    const last = await call(server, 'DELETE', '/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=0');
    expect(last.code).toBe(200);
    expect(server.store.tryGet('pods', 'default', 'bound')).toBeUndefined();
  });

  test('finalizers keep an object until removed; delete preconditions', async () => {
    server = await start();
    const svc = server.store.create('services', {
      metadata: { name: 's', namespace: 'default', finalizers: ['example.com/x'] },
      spec: { ports: [{ port: 80 }] },
    });
    const pre = await call(server, 'DELETE', '/api/v1/namespaces/default/services/s', {
      preconditions: { uid: 'nope' },
    });
    expect(pre.code).toBe(409);
    const del = await call(server, 'DELETE', '/api/v1/namespaces/default/services/s', {
      preconditions: { uid: svc.metadata?.uid },
    });
    expect(del.body.metadata.deletionTimestamp).toBeDefined();
    const cur = server.store.get('services', 'default', 's');
    server.store.update('services', { ...cur, metadata: { ...cur.metadata, finalizers: [] } });
    expect(server.store.tryGet('services', 'default', 's')).toBeUndefined();
  });

  test('cluster-scoped resources, default namespaces, namespace deletion removes contents', async () => {
    server = await start();
    const ns = await call(server, 'GET', '/api/v1/namespaces');
    expect(ns.body.items.map((n: any) => n.metadata.name)).toEqual([
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
    ]);
    expect(ns.body.items[0].status).toEqual({ phase: 'Active' });
    const node = await call(server, 'POST', '/api/v1/nodes', {
      metadata: { name: 'n1' },
      status: { capacity: { cpu: '2' } },
    });
    expect(node.code).toBe(201);
    expect(node.body.metadata.namespace).toBeUndefined();
    const lease = await call(
      server,
      'POST',
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      {
        metadata: { name: 'n1' },
        spec: { holderIdentity: 'n1', leaseDurationSeconds: 40 },
      },
    );
    expect(lease.code).toBe(201);
    expect(lease.body.apiVersion).toBe('coordination.k8s.io/v1');
    await call(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'team' } });
    server.store.create('pods', pod('p', { ns: 'team' }));
    expect((await call(server, 'DELETE', '/api/v1/namespaces/team')).code).toBe(200);
    expect(server.store.list('pods', 'team')).toEqual([]);
  });

  test('bearer token check answers 401 with a Status', async () => {
    server = await start({ token: 's3cret' });
    const res = await fetch(`${server.url}/api/v1/pods`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    const ok = await fetch(`${server.url}/api/v1/pods`, { headers: { authorization: 'Bearer s3cret' } });
    expect(ok.status).toBe(200);
    expect(server.kubeconfig).toContain('"token": "s3cret"');
  });

  test('discovery documents', async () => {
    server = await start();
    expect((await call(server, 'GET', '/api')).body.versions).toEqual(['v1']);
    const v1 = (await call(server, 'GET', '/api/v1')).body;
    const pods = v1.resources.find((r: any) => r.name === 'pods');
    expect(pods).toMatchObject({ namespaced: true, kind: 'Pod', shortNames: ['po'] });
    expect(pods.verbs).toContain('watch');
    expect(v1.resources.map((r: any) => r.name)).toContain('pods/status');
    const groups = (await call(server, 'GET', '/apis')).body.groups.map((g: any) => g.name);
    expect(groups).toEqual([
      'discovery.k8s.io',
      'networking.k8s.io',
      'apps',
      'coordination.k8s.io',
      'rbac.authorization.k8s.io',
      'authentication.k8s.io',
      'authorization.k8s.io',
      'events.k8s.io',
    ]);
    const coord = (await call(server, 'GET', '/apis/coordination.k8s.io/v1')).body;
    expect(coord.resources[0]).toMatchObject({ name: 'leases', kind: 'Lease', shortNames: ['lease'] });
    expect((await call(server, 'GET', '/version')).body.major).toBe('1');
    expect((await call(server, 'GET', '/openapi/v2')).body.swagger).toBe('2.0');
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await call(server, 'GET', '/apis/batch/v1')).code).toBe(404);
  });
});

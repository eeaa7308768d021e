// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { unknownFields } from '../src/openapi.js';
import { findResourceType } from '../src/resources.js';
import { call, start } from './helpers.js';
import { kubectlMissing, useKubectlServer } from './kubectl-harness.js';

const PODS = '/api/v1/namespaces/default/pods';
const POD = { metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'nginx' }] } };

describe('OpenAPI documents', () => {
  let server: MiniApiServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  test('/openapi/v2 has the definitions of every kind served, with their GVK', async () => {
    server = await start();
    const doc = (await call(server, 'GET', '/openapi/v2')).body;
    expect(doc.swagger).toBe('2.0');
    const gvks = Object.values(doc.definitions)
      .flatMap((d: any) => d['x-kubernetes-group-version-kind'] ?? [])
      .map((g: any) => `${g.group}/${g.version}/${g.kind}`)
      .sort();
    expect(gvks).toEqual(
      [
        '/v1/ConfigMap',
        '/v1/Event',
        '/v1/Namespace',
        '/v1/Node',
        '/v1/Pod',
        '/v1/Secret',
        '/v1/Service',
        '/v1/ServiceAccount',
        'apps/v1/DaemonSet',
        'coordination.k8s.io/v1/Lease',
        'discovery.k8s.io/v1/EndpointSlice',
        'rbac.authorization.k8s.io/v1/ClusterRole',
        'rbac.authorization.k8s.io/v1/ClusterRoleBinding',
        'rbac.authorization.k8s.io/v1/Role',
        'rbac.authorization.k8s.io/v1/RoleBinding',
      ].sort(),
    );
    const container = doc.definitions['io.k8s.api.core.v1.Container'];
    expect(container.required).toEqual(['name']);
    expect(container.properties.ports).toMatchObject({
      type: 'array',
      items: { $ref: '#/definitions/io.k8s.api.core.v1.ContainerPort' },
    });
    expect(doc.definitions['io.k8s.api.core.v1.PodSpec'].properties.containers.description).toMatch(
      /^List of containers belonging to the pod/,
    );
  });

  test('/openapi/v3/api/v1 carries the schemas (refs under #/components/schemas)', async () => {
    server = await start();
    const doc = (await call(server, 'GET', '/openapi/v3/api/v1')).body;
    const pod = doc.components.schemas['io.k8s.api.core.v1.Pod'];
    expect(pod['x-kubernetes-group-version-kind']).toEqual([{ group: '', version: 'v1', kind: 'Pod' }]);
    expect(pod.properties.spec.allOf).toEqual([{ $ref: '#/components/schemas/io.k8s.api.core.v1.PodSpec' }]);
  });
});

describe('fieldValidation', () => {
  let server: MiniApiServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  test('unknownFields names nested fields as the strict decoder does (spec.containers[0].bar)', () => {
    const pods = findResourceType('pods')!;
    expect(
      unknownFields(pods, {
        metadata: { name: 'x', labels: { any: 'key' }, nope: 1 },
        spec: { containers: [{ name: 'a', bar: 2 }], foo: 1 },
      }),
    ).toEqual(['metadata.nope', 'spec.containers[0].bar', 'spec.foo']);
  });

  test('Strict: 400 strict decoding error; nothing stored', async () => {
    server = await start();
    const bad = { ...POD, spec: { ...POD.spec, foo: 1 } };
    const res = await call(server, 'POST', `${PODS}?fieldValidation=Strict`, bad);
    expect(res.code).toBe(400);
    expect(res.body).toMatchObject({
      reason: 'BadRequest',
      message: 'strict decoding error: unknown field "spec.foo"',
    });
    expect((await call(server, 'GET', `${PODS}/p`)).code).toBe(404);
    await call(server, 'POST', PODS, POD);
    const patch = await call(
      server,
      'PATCH',
      `${PODS}/p?fieldValidation=Strict`,
      { spec: { bogus: true } },
      'application/merge-patch+json',
    );
    expect(patch.code).toBe(400);
    expect(patch.body.message).toBe('strict decoding error: unknown field "spec.bogus"');
  });

  test('Warn (the default): a Warning header per unknown field; Ignore: none', async () => {
    server = await start();
    const res = await fetch(`${server.url}${PODS}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...POD, spec: { ...POD.spec, foo: 1 } }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBe('299 - "unknown field \\"spec.foo\\""');
    const ignored = await fetch(`${server.url}${PODS}?fieldValidation=Ignore`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...POD, metadata: { name: 'q' }, spec: { ...POD.spec, foo: 1 } }),
    });
    expect(ignored.status).toBe(201);
    expect(ignored.headers.get('warning')).toBeNull();
    const patched = await fetch(`${server.url}${PODS}/p`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { labels: { a: 'b' } } }),
    });
    // The stored pod kept spec.foo (Warn stores it), so the patched object warns again.
    expect(patched.status).toBe(200);
    expect(patched.headers.get('warning')).toBe('299 - "unknown field \\"spec.foo\\""');
  });

  test('an unsupported directive is the 422 of CreateOptions', async () => {
    server = await start();
    const res = await call(server, 'POST', `${PODS}?fieldValidation=strict`, POD);
    expect(res.code).toBe(422);
    expect(res.body.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"',
    );
  });
});

describe.skipIf(kubectlMissing && process.env.CI !== 'true')('kubectl explain and validation', () => {
  const h = useKubectlServer('mini-apiserver-kubectl-openapi-');
  const kubectl = async (...args: string[]) => {
    const r = await h.run(args);
    return { code: r.code, out: r.stdout, err: r.stderr };
  };

  test('kubectl explain pod.spec.containers and lease.spec', async () => {
    const containers = await kubectl('explain', 'pod.spec.containers');
    expect(containers.code).toBe(0);
    expect(containers.out).toContain('KIND:       Pod\nVERSION:    v1\n');
    expect(containers.out).toContain('FIELD: containers <[]Container>');
    expect(containers.out).toMatch(/\n {2}image\t<string>\n/);
    expect(containers.out).toMatch(/\n {2}name\t<string> -required-\n/);
    const lease = await kubectl('explain', 'lease.spec.holderIdentity');
    expect(lease.out).toContain('GROUP:      coordination.k8s.io');
    expect(lease.out).toContain('FIELD: holderIdentity <string>');
  });

  test('kubectl apply rejects unknown fields (fieldValidation=Strict); --validate=false accepts', async () => {
    await writeFile(
      join(h.dir, 'bad.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  foo: 1\n  containers:\n  - name: a\n    image: nginx\n    bar: 2\n',
    );
    const strict = await kubectl('apply', '-f', join(h.dir, 'bad.yaml'));
    expect(strict.code).toBe(1);
    expect(strict.err).toContain(
      'strict decoding error: unknown field "spec.containers[0].bar", unknown field "spec.foo"',
    );
    expect((await kubectl('apply', '-f', join(h.dir, 'bad.yaml'), '--validate=false')).out).toBe(
      'pod/bad created\n',
    );
  });
});

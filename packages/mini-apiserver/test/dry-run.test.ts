// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { call, openWatch, pod, start } from './helpers.js';
import { kubectlMissing, useKubectlServer } from './kubectl-harness.js';

const CM = '/api/v1/namespaces/default/configmaps';

describe('dryRun=All over HTTP', () => {
  let server: MiniApiServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  test('create, update, patch and delete answer the object as it would be and keep nothing', async () => {
    server = await start();
    const w = await openWatch(server, `${CM}?watch=1&resourceVersion=${server.store.resourceVersion}`);
    const rv = server.store.resourceVersion;
    const created = await call(server, 'POST', `${CM}?dryRun=All`, {
      metadata: { name: 'c' },
      data: { a: '1' },
    });
    expect(created.code).toBe(201);
    expect(created.body.metadata).toMatchObject({ name: 'c', namespace: 'default' });
    expect(created.body.metadata.uid).toEqual(expect.any(String));
    expect(created.body.metadata.resourceVersion).toBeUndefined();
    expect((await call(server, 'GET', `${CM}/c`)).code).toBe(404);
    expect(server.store.resourceVersion).toBe(rv);

    const real = await call(server, 'POST', CM, { metadata: { name: 'c' }, data: { a: '1' } });
    const realRv = real.body.metadata.resourceVersion;
    const put = await call(server, 'PUT', `${CM}/c?dryRun=All`, {
      metadata: { name: 'c' },
      data: { a: '2' },
    });
    expect(put.body).toMatchObject({ data: { a: '2' }, metadata: { resourceVersion: realRv } });
    const patched = await call(
      server,
      'PATCH',
      `${CM}/c?dryRun=All`,
      { data: { b: '3' } },
      'application/merge-patch+json',
    );
    expect(patched.body.data).toEqual({ a: '1', b: '3' });
    const del = await call(server, 'DELETE', `${CM}/c`, { dryRun: ['All'] });
    expect(del.code).toBe(200);
    const stored = await call(server, 'GET', `${CM}/c`);
    expect(stored.body.data).toEqual({ a: '1' });
    expect(stored.body.metadata.resourceVersion).toBe(realRv);
    // The only event is the real create.
    await new Promise((r) => setTimeout(r, 100));
    expect(w.events.map((e) => [e.type, e.object.data])).toEqual([['ADDED', { a: '1' }]]);
    w.close();
  });

  test('validation still runs: an invalid object is 422 under dryRun', async () => {
    server = await start();
    const bad = await call(server, 'POST', `/api/v1/namespaces/default/pods?dryRun=All`, {
      metadata: { name: 'Bad_Name' },
      spec: { containers: [{ name: 'a', image: 'x' }] },
    });
    expect(bad.code).toBe(422);
  });

  test('a dryRun value other than All is the 422 of kube-apiserver', async () => {
    server = await start();
    const res = await call(server, 'POST', `${CM}?dryRun=true`, { metadata: { name: 'c' } });
    expect(res.code).toBe(422);
    expect(res.body.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"true"}: supported values: "All"',
    );
    expect(res.body.details).toMatchObject({ kind: 'CreateOptions', group: 'meta.k8s.io' });
  });

  test('a pod deleted with dryRun keeps running (no deletionTimestamp stored)', async () => {
    server = await start();
    await call(server, 'POST', '/api/v1/namespaces/default/pods', pod('p', { nodeName: 'n1' }));
    const res = await call(server, 'DELETE', '/api/v1/namespaces/default/pods/p?dryRun=All');
    expect(res.body.metadata.deletionTimestamp).toEqual(expect.any(String));
    const after = await call(server, 'GET', '/api/v1/namespaces/default/pods/p');
    expect(after.body.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe.skipIf(kubectlMissing && process.env.CI !== 'true')(
  'kubectl --dry-run=server and kubectl diff',
  () => {
    const h = useKubectlServer('mini-apiserver-kubectl-dry-');
    const kubectl = async (...args: string[]) => {
      const r = await h.run(args);
      return { code: r.code, out: r.stdout, err: r.stderr };
    };

    const cm = (value: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: "${value}"\n`;

    test('apply --dry-run=server, diff, delete --dry-run=server', async () => {
      await writeFile(join(h.dir, 'v1.yaml'), cm('1'));
      await writeFile(join(h.dir, 'v2.yaml'), cm('2'));
      const dry = await kubectl('apply', '-f', join(h.dir, 'v1.yaml'), '--dry-run=server');
      expect(dry).toMatchObject({ code: 0, out: 'configmap/cfg created (server dry run)\n' });
      expect(h.server.store.tryGet('configmaps', 'default', 'cfg')).toBeUndefined();
      expect((await kubectl('apply', '-f', join(h.dir, 'v1.yaml'))).out).toBe('configmap/cfg created\n');
      // kubectl diff: exit 1 and a unified diff when the server-side dry run differs, 0 when not.
      const diff = await kubectl('diff', '-f', join(h.dir, 'v2.yaml'));
      expect(diff.code).toBe(1);
      expect(diff.out).toContain('-  a: "1"\n+  a: "2"\n');
      expect((await kubectl('diff', '-f', join(h.dir, 'v1.yaml'))).code).toBe(0);
      const applied = await kubectl(
        'apply',
        '-f',
        join(h.dir, 'v2.yaml'),
        '--dry-run=server',
        '-o',
        'jsonpath={.data.a}',
      );
      expect(applied.out).toBe('2');
      expect(h.server.store.get('configmaps', 'default', 'cfg').data).toEqual({ a: '1' });
      expect((await kubectl('delete', 'configmap', 'cfg', '--dry-run=server')).out).toBe(
        'configmap "cfg" deleted (server dry run)\n',
      );
      expect(h.server.store.tryGet('configmaps', 'default', 'cfg')).toBeDefined();
    });
  },
);

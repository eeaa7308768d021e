// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// kube-apiserver's limits: request bodies over 3 MiB get 413, objects over etcd's 1.5 MiB the
// 500 "etcdserver: request is too large", annotations over 256 KiB and bad label keys/values
// 422 with causes; pods whose volume names or subPaths would leave the node's pod directories
// 422 with upstream's field paths; the watch history is bounded by bytes and a watch from
// before the oldest event kept gets 410 Expired, as after an etcd compaction.
import { afterEach, describe, expect, test } from 'vitest';
import { DEFAULT_HISTORY_MAX_BYTES, type MiniApiServer } from '../src/index.js';
import { call, openWatch, pod, start } from './helpers.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

const PODS = '/api/v1/namespaces/default/pods';
const causesOf = (body: any) => body.details.causes.map((c: any) => `${c.reason} ${c.field}: ${c.message}`);

describe('size limits', () => {
  test('a body over 3 MiB gets 413 RequestEntityTooLarge with the limit', async () => {
    server = await start();
    const p = pod('big');
    p.metadata = { ...p.metadata, annotations: { a: 'x'.repeat(3 * 1024 * 1024) } };
    const res = await call(server, 'POST', PODS, p);
    expect(res.code).toBe(413);
    expect(res.body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: limit is 3145728',
      code: 413,
    });
    expect(server.store.count('pods')).toBe(0);
  });

  test('an object over 1.5 MiB gets the 500 kube-apiserver answers when etcd refuses it', async () => {
    // Pods as sent, without the service account token volume the admission plugin adds.
    server = await start({ serviceAccountAdmission: false });
    const p = pod('big');
    (p.spec as any).containers[0].env = [{ name: 'BLOB', value: 'x'.repeat(1.6 * 1024 * 1024) }];
    const res = await call(server, 'POST', PODS, p);
    expect(res.code).toBe(500);
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'etcdserver: request is too large',
      code: 500,
    });
    // The same through a patch that grows an object past the limit; the stored one is kept.
    const rv = server.store.resourceVersion;
    expect((await call(server, 'POST', PODS, pod('small'))).code).toBe(201);
    const patch = {
      spec: { containers: [{ name: 'app', env: [{ name: 'B', value: 'x'.repeat(1.6 * 1024 * 1024) }] }] },
    };
    const patched = await call(
      server,
      'PATCH',
      `${PODS}/small`,
      patch,
      'application/strategic-merge-patch+json',
    );
    expect(patched.code).toBe(500);
    expect(Number(server.store.resourceVersion)).toBe(Number(rv) + 1);
    expect(server.store.get('pods', 'default', 'small').spec).toMatchObject(pod('small').spec as object);
  });

  test('annotations over 256 KiB in total: 422 Too long', async () => {
    server = await start();
    const p = pod('anno');
    p.metadata = { ...p.metadata, annotations: { a: 'x'.repeat(200 * 1024), b: 'y'.repeat(60 * 1024) } };
    const res = await call(server, 'POST', PODS, p);
    expect(res.code).toBe(422);
    expect(res.body.message).toBe(
      'Pod "anno" is invalid: metadata.annotations: Too long: must have at most 262144 bytes',
    );
    expect(causesOf(res.body)).toEqual([
      'FieldValueTooLong metadata.annotations: Too long: must have at most 262144 bytes',
    ]);
    // 256 KiB exactly (keys included) is accepted.
    p.metadata.annotations = { a: 'x'.repeat(256 * 1024 - 1) };
    expect((await call(server, 'POST', PODS, p)).code).toBe(201);
  });

  test('label keys and values, annotation keys: 422 with upstream messages', async () => {
    server = await start();
    const p = pod('labels', {
      labels: {
        'a/b/c': 'x',
        ['k'.repeat(64)]: 'ok',
        'Example.com/x': 'ok',
        good: 'v'.repeat(64),
        bad: 'a b',
      },
    });
    p.metadata = { ...p.metadata, annotations: { 'Example.com/UPPER': 'fine', 'bad key': 'v' } };
    const res = await call(server, 'POST', PODS, p);
    expect(res.code).toBe(422);
    const causes: string[] = causesOf(res.body);
    expect(causes).toContain(
      `FieldValueInvalid metadata.labels: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    );
    expect(causes).toContain(
      `FieldValueInvalid metadata.labels: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 characters`,
    );
    expect(
      causes.some((c) =>
        c.startsWith(
          'FieldValueInvalid metadata.labels: Invalid value: "Example.com/x": prefix part a lowercase RFC 1123 subdomain',
        ),
      ),
    ).toBe(true);
    expect(causes).toContain(
      `FieldValueInvalid metadata.labels: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
    );
    expect(
      causes.some((c) =>
        c.startsWith(
          'FieldValueInvalid metadata.labels: Invalid value: "a b": a valid label must be an empty string',
        ),
      ),
    ).toBe(true);
    expect(
      causes.some((c) =>
        c.startsWith(
          'FieldValueInvalid metadata.annotations: Invalid value: "bad key": name part must consist',
        ),
      ),
    ).toBe(true);
    expect(causes.some((c) => c.includes('Example.com/UPPER'))).toBe(false); // annotation keys: any case
    expect(causes).toHaveLength(6);
  });
});

describe('pods whose strings would leave the node pod directories', () => {
  const withVolumes = (volumes: any[], mounts: any[], initMounts?: any[]) => {
    const p = pod('vol');
    p.spec = {
      volumes,
      containers: [{ name: 'app', image: 'busybox', volumeMounts: mounts }],
      ...(initMounts
        ? { initContainers: [{ name: 'init', image: 'busybox', volumeMounts: initMounts }] }
        : {}),
    };
    return p;
  };

  test.each([
    [
      'subPath with ..',
      withVolumes([{ name: 'v', emptyDir: {} }], [{ name: 'v', mountPath: '/v', subPath: '../../etc' }]),
      [
        `FieldValueInvalid spec.containers[0].volumeMounts.subPath: Invalid value: "../../etc": must not contain '..'`,
      ],
    ],
    [
      'absolute subPath',
      withVolumes([{ name: 'v', emptyDir: {} }], [{ name: 'v', mountPath: '/v', subPath: '/etc' }]),
      [
        `FieldValueInvalid spec.containers[0].volumeMounts.subPath: Invalid value: "/etc": must be a relative path`,
      ],
    ],
    [
      'absolute subPathExpr with .. in an init container',
      withVolumes(
        [{ name: 'v', emptyDir: {} }],
        [],
        [{ name: 'v', mountPath: '/v', subPathExpr: '/$(X)/../y' }],
      ),
      [
        `FieldValueInvalid spec.initContainers[0].volumeMounts.subPathExpr: Invalid value: "/$(X)/../y": must be a relative path`,
        `FieldValueInvalid spec.initContainers[0].volumeMounts.subPathExpr: Invalid value: "/$(X)/../y": must not contain '..'`,
      ],
    ],
    [
      'subPath and subPathExpr together',
      withVolumes(
        [{ name: 'v', emptyDir: {} }],
        [{ name: 'v', mountPath: '/v', subPath: 'a', subPathExpr: 'b' }],
      ),
      [
        `FieldValueInvalid spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "b": subPathExpr and subPath are mutually exclusive`,
      ],
    ],
    [
      'URL-encoded dots are a valid file name (nothing is decoded)',
      withVolumes(
        [{ name: 'v', emptyDir: {} }],
        [{ name: 'v', mountPath: '/v', subPath: '%2e%2e/%2e%2e/etc' }],
      ),
      [],
    ],
    [
      'volume named ..',
      withVolumes([{ name: '../../x', emptyDir: {} }], [{ name: '../../x', mountPath: '/v' }]),
      [
        `FieldValueInvalid spec.volumes[0].name: Invalid value: "../../x": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      ],
    ],
    [
      'overlong volume name, duplicate, unknown mount',
      withVolumes(
        [
          { name: 'v'.repeat(64), emptyDir: {} },
          { name: 'w', emptyDir: {} },
          { name: 'w', emptyDir: {} },
        ],
        [{ name: 'nope', mountPath: '/v' }],
      ),
      [
        `FieldValueInvalid spec.volumes[0].name: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
        'FieldValueDuplicate spec.volumes[2].name: Duplicate value: "w"',
        'FieldValueNotFound spec.containers[0].volumeMounts[0].name: Not found: "nope"',
      ],
    ],
  ])('%s', async (_, p, expected) => {
    server = await start();
    const res = await call(server, 'POST', PODS, p);
    if (expected.length === 0) {
      expect(res.code).toBe(201);
      return;
    }
    expect(res.code).toBe(422);
    expect(res.body.reason).toBe('Invalid');
    expect(causesOf(res.body)).toEqual(expected);
  });

  test('names with a newline or a quote, and a namespace with a slash', async () => {
    server = await start();
    const nl = await call(server, 'POST', PODS, pod('web\nx'));
    expect(nl.code).toBe(422);
    expect(nl.body.details.causes[0].field).toBe('metadata.name');
    const q = await call(server, 'POST', PODS, {
      ...pod('app'),
      spec: { containers: [{ name: 'a"b', image: 'i' }] },
    });
    expect(causesOf(q.body)[0]).toMatch(
      /^FieldValueInvalid spec\.containers\[0\]\.name: Invalid value: "a\\"b": a lowercase RFC 1123 label/,
    );
    expect(() => server.store.create('pods', pod('x', { ns: '../etc' }))).toThrow(
      /metadata\.namespace: Invalid value: "\.\.\/etc"/,
    );
  });
});

describe('watch history bounded by bytes', () => {
  test('default bound, option, and 410 for a watch from before the oldest event kept', async () => {
    expect(DEFAULT_HISTORY_MAX_BYTES).toBe(64 * 1024 * 1024);
    server = await start({ historyMaxBytes: 200_000 });
    const store = server.store;
    const first = store.create('pods', pod('p0'));
    const blob = 'x'.repeat(10_000);
    for (let i = 0; i < 100; i++) {
      store.patch('pods', 'default', 'p0', 'merge', { metadata: { annotations: { blob, i: String(i) } } });
    }
    // 100 versions of ~10 KB do not fit in 200 KB: the oldest were forgotten.
    expect(store.historyBytes).toBeLessThanOrEqual(200_000);
    expect(store.historyBytes).toBeGreaterThan(150_000);
    const old = await call(
      server,
      'GET',
      `${PODS}?watch=true&resourceVersion=${first.metadata?.resourceVersion}`,
    );
    expect(old.body).toMatchObject({
      type: 'ERROR',
      object: { kind: 'Status', reason: 'Expired', code: 410 },
    });
    expect(old.body.object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
    // A watch from a recent resourceVersion still gets every event after it.
    const recent = Number(store.resourceVersion) - 3;
    const w = await openWatch(server, `${PODS}?watch=true&resourceVersion=${recent}`);
    const events = await w.waitFor(3);
    expect(events.map((e) => e.object.metadata.annotations.i)).toEqual(['97', '98', '99']);
    w.close();
  });

  test('deleting the objects does not keep their history beyond the bound', async () => {
    server = await start({ historyMaxBytes: 100_000 });
    const blob = 'y'.repeat(50_000);
    for (let i = 0; i < 10; i++) {
      const p = pod(`p${i}`);
      p.metadata = { ...p.metadata, annotations: { blob } };
      server.store.create('pods', p);
      server.store.delete('pods', 'default', `p${i}`);
    }
    expect(server.store.count('pods')).toBe(0);
    expect(server.store.historyBytes).toBeLessThanOrEqual(100_000);
  });
});

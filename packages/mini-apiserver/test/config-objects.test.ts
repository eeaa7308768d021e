// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { afterEach, describe, expect, test } from 'vitest';
import { base64ErrorOffset } from '../src/config-validation.js';
import type { MiniApiServer } from '../src/index.js';
import { humanDuration } from '../src/table-output.js';
import { call, start } from './helpers.js';

let server: MiniApiServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const CM = '/api/v1/namespaces/default/configmaps';
const SECRETS = '/api/v1/namespaces/default/secrets';

// The message of apimachinery's IsConfigMapKey regex error.
const KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

describe('ConfigMaps', () => {
  test('create, get, list, update, patch and delete like the other types', async () => {
    server = await start();
    const created = await call(server, 'POST', CM, { metadata: { name: 'app' }, data: { 'a.conf': 'x=1' } });
    expect(created.code).toBe(201);
    expect(created.body).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', data: { 'a.conf': 'x=1' } });
    expect((await call(server, 'GET', `${CM}/app`)).body.data).toEqual({ 'a.conf': 'x=1' });
    const patched = await call(
      server,
      'PATCH',
      `${CM}/app`,
      { data: { b: '2' } },
      'application/merge-patch+json',
    );
    expect(patched.body.data).toEqual({ 'a.conf': 'x=1', b: '2' });
    const list = (await call(server, 'GET', CM)).body;
    expect(list.kind).toBe('ConfigMapList');
    expect(list.items.map((i: any) => i.metadata.name)).toEqual(['app', 'kube-root-ca.crt']);
    expect((await call(server, 'DELETE', `${CM}/app`)).code).toBe(200);
  });

  test('key names, duplicate keys and the 1 MiB limit as kube-apiserver validates them', async () => {
    server = await start();
    const bad = await call(server, 'POST', CM, {
      metadata: { name: 'bad' },
      data: { 'a b': '1', '..x': '2', same: '3' },
      binaryData: { same: 'AA==' },
    });
    expect(bad.code).toBe(422);
    expect(bad.body.details.causes).toEqual([
      { reason: 'FieldValueInvalid', message: `Invalid value: "a b": ${KEY_MSG}`, field: 'data[a b]' },
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: "..x": must not start with '..'`,
        field: 'data[..x]',
      },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "same": duplicate of key present in binaryData',
        field: 'data[same]',
      },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "same": duplicate of key present in data',
        field: 'binaryData[same]',
      },
    ]);
    const big = await call(server, 'POST', CM, {
      metadata: { name: 'big' },
      data: { a: 'x'.repeat(600 * 1024), b: 'y'.repeat(500 * 1024) },
    });
    expect(big.code).toBe(422);
    expect(big.body.message).toBe(
      'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes',
    );
    expect(big.body.details.causes).toEqual([
      { reason: 'FieldValueTooLong', message: 'Too long: may not be more than 1048576 bytes', field: '[]' },
    ]);
  });

  test('an immutable ConfigMap keeps its data and stays immutable', async () => {
    server = await start();
    await call(server, 'POST', CM, { metadata: { name: 'frozen' }, data: { a: '1' }, immutable: true });
    const changed = await call(
      server,
      'PATCH',
      `${CM}/frozen`,
      { data: { a: '2' }, immutable: false },
      'application/merge-patch+json',
    );
    expect(changed.code).toBe(422);
    expect(changed.body.details.causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: field is immutable when `immutable` is set',
        field: 'immutable',
      },
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: field is immutable when `immutable` is set',
        field: 'data',
      },
    ]);
    const labelled = await call(
      server,
      'PATCH',
      `${CM}/frozen`,
      { metadata: { labels: { a: 'b' } } },
      'application/merge-patch+json',
    );
    expect(labelled.code).toBe(200);
  });
});

describe('Secrets', () => {
  test('stringData is merged into data (base64) on write and type defaults to Opaque', async () => {
    server = await start();
    const created = await call(server, 'POST', SECRETS, {
      metadata: { name: 's' },
      data: { a: Buffer.from('old').toString('base64'), b: Buffer.from('kept').toString('base64') },
      stringData: { a: 'new', c: 'plain' },
    });
    expect(created.code).toBe(201);
    expect(created.body.type).toBe('Opaque');
    expect(created.body.stringData).toBeUndefined();
    expect(created.body.data).toEqual({
      a: Buffer.from('new').toString('base64'),
      b: Buffer.from('kept').toString('base64'),
      c: Buffer.from('plain').toString('base64'),
    });
    const list = await call(server, 'GET', `${SECRETS}?fieldSelector=type%3DOpaque`);
    expect(list.body.items.map((i: any) => i.metadata.name)).toEqual(['s']);
  });

  test('1 MiB of decoded data at most', async () => {
    server = await start();
    const big = Buffer.alloc(1024 * 1024 + 1).toString('base64');
    const res = await call(server, 'POST', SECRETS, { metadata: { name: 'big' }, data: { a: big } });
    expect(res.code).toBe(422);
    expect(res.body.message).toBe(
      'Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes',
    );
  });

  test('data that is not base64 is refused with the decoder error', async () => {
    server = await start();
    const res = await call(server, 'POST', SECRETS, { metadata: { name: 's' }, data: { a: 'no!' } });
    expect(res.code).toBe(400);
    expect(res.body.message).toBe(
      'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 2',
    );
  });

  test('Go base64 error offsets', () => {
    expect(base64ErrorOffset('YWJj')).toBeUndefined();
    expect(base64ErrorOffset('YWI=')).toBeUndefined();
    expect(base64ErrorOffset('YQ==')).toBeUndefined();
    expect(base64ErrorOffset('YW\nJj')).toBeUndefined();
    expect(base64ErrorOffset('a')).toBe(0);
    expect(base64ErrorOffset('abcde')).toBe(4);
    expect(base64ErrorOffset('ab!d')).toBe(2);
    expect(base64ErrorOffset('YW=j')).toBe(2);
    expect(base64ErrorOffset('YQ==YQ==')).toBe(4);
    expect(base64ErrorOffset('YQ=')).toBe(3);
  });

  test('the keys each built-in type requires', async () => {
    server = await start();
    const causesOf = async (type: string, data: Record<string, string> = {}, annotations?: object) =>
      (
        await call(server as MiniApiServer, 'POST', SECRETS, {
          metadata: { name: 'x', ...(annotations ? { annotations } : {}) },
          type,
          data,
        })
      ).body.details?.causes;
    expect(await causesOf('kubernetes.io/tls')).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'data[tls.crt]' },
      { reason: 'FieldValueRequired', message: 'Required value', field: 'data[tls.key]' },
    ]);
    expect(await causesOf('kubernetes.io/dockerconfigjson')).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'data[.dockerconfigjson]' },
    ]);
    expect(
      (
        await causesOf('kubernetes.io/dockerconfigjson', {
          '.dockerconfigjson': Buffer.from('nope').toString('base64'),
        })
      )[0],
    ).toMatchObject({ reason: 'FieldValueInvalid', field: 'data[.dockerconfigjson]' });
    expect(await causesOf('kubernetes.io/service-account-token')).toEqual([
      {
        reason: 'FieldValueRequired',
        message: 'Required value',
        field: 'metadata.annotations[kubernetes.io/service-account.name]',
      },
    ]);
    expect(await causesOf('kubernetes.io/basic-auth')).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'data[username]' },
      { reason: 'FieldValueRequired', message: 'Required value', field: 'data[password]' },
    ]);
    const ok = await call(server, 'POST', SECRETS, {
      metadata: { name: 'tls' },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': 'c', 'tls.key': 'k' },
    });
    expect(ok.code).toBe(201);
    const retyped = await call(
      server,
      'PATCH',
      `${SECRETS}/tls`,
      { type: 'Opaque' },
      'application/merge-patch+json',
    );
    expect(retyped.code).toBe(422);
    expect(retyped.body.details.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "Opaque": field is immutable', field: 'type' },
    ]);
  });

  test('an immutable Secret keeps its data (stringData included)', async () => {
    server = await start();
    await call(server, 'POST', SECRETS, { metadata: { name: 's' }, stringData: { a: '1' }, immutable: true });
    const res = await call(
      server,
      'PATCH',
      `${SECRETS}/s`,
      { stringData: { a: '2' } },
      'application/merge-patch+json',
    );
    expect(res.code).toBe(422);
    expect(res.body.details.causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: field is immutable when `immutable` is set',
        field: 'data',
      },
    ]);
  });
});

describe('the default ServiceAccount and kube-root-ca.crt in every namespace', () => {
  test('for the namespaces at start, new ones, and again after a delete', async () => {
    server = await start();
    const store = server.store;
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      expect(store.get('serviceaccounts', ns, 'default').metadata?.name).toBe('default');
      expect((store.get('configmaps', ns, 'kube-root-ca.crt') as any).data).toEqual({ 'ca.crt': '' });
    }
    store.create('namespaces', { metadata: { name: 'team' } });
    expect(store.tryGet('serviceaccounts', 'team', 'default')).toBeDefined();
    const cm = store.get('configmaps', 'team', 'kube-root-ca.crt');
    expect(cm.metadata?.annotations?.['kubernetes.io/description']).toMatch(/^Contains a CA bundle/);
    store.delete('serviceaccounts', 'team', 'default');
    store.update('configmaps', { ...cm, data: { 'ca.crt': 'tampered' } } as any);
    await Promise.resolve();
    expect(store.tryGet('serviceaccounts', 'team', 'default')).toBeDefined();
    expect((store.get('configmaps', 'team', 'kube-root-ca.crt') as any).data).toEqual({ 'ca.crt': '' });
    // A deleted namespace gets nothing back.
    store.delete('namespaces', undefined, 'team');
    await Promise.resolve();
    expect(store.list('serviceaccounts', 'team')).toEqual([]);
    expect(store.list('configmaps', 'team')).toEqual([]);
  });

  test('kube-root-ca.crt carries the server CA on HTTPS', async () => {
    server = await start({ tls: 'self-signed' });
    const ca = (server.store.get('configmaps', 'default', 'kube-root-ca.crt') as any).data['ca.crt'];
    expect(ca).toBe(server.tls?.ca);
    expect(ca).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  test('can be turned off', async () => {
    server = await start({ serviceAccountControllers: false });
    expect(server.store.count('serviceaccounts')).toBe(0);
    expect(server.store.count('configmaps')).toBe(0);
  });

  test('discovery lists the three types with their short names and the token subresource', async () => {
    server = await start();
    const v1 = (await call(server, 'GET', '/api/v1')).body.resources;
    expect(v1.find((r: any) => r.name === 'configmaps')).toMatchObject({
      kind: 'ConfigMap',
      shortNames: ['cm'],
    });
    expect(v1.find((r: any) => r.name === 'secrets')).toMatchObject({ kind: 'Secret', namespaced: true });
    expect(v1.find((r: any) => r.name === 'serviceaccounts')).toMatchObject({
      kind: 'ServiceAccount',
      shortNames: ['sa'],
    });
    expect(v1.find((r: any) => r.name === 'serviceaccounts/token')).toEqual({
      name: 'serviceaccounts/token',
      singularName: '',
      namespaced: true,
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
    const authn = (await call(server, 'GET', '/apis/authentication.k8s.io/v1')).body;
    expect(authn.resources.map((r: any) => r.name)).toEqual(['tokenreviews']);
  });
});

test('ages as apimachinery’s HumanDuration prints them', () => {
  const s = 1000;
  const cases: Array<[number, string]> = [
    [-2 * s, '<invalid>'],
    [-1 * s, '0s'],
    [0, '0s'],
    [119 * s, '119s'],
    [120 * s, '2m'],
    [150 * s, '2m30s'],
    [10 * 60 * s, '10m'],
    [179 * 60 * s, '179m'],
    [3 * 3600 * s, '3h'],
    [(3 * 60 + 5) * 60 * s, '3h5m'],
    [8 * 3600 * s, '8h'],
    [47 * 3600 * s, '47h'],
    [49 * 3600 * s, '2d1h'],
    [8 * 24 * 3600 * s, '8d'],
    [730 * 24 * 3600 * s, '2y'],
    [731 * 24 * 3600 * s, '2y1d'],
    [8 * 365 * 24 * 3600 * s, '8y'],
  ];
  for (const [ms, want] of cases) expect([ms, humanDuration(ms)]).toEqual([ms, want]);
});

test('a Table for these kinds when asked for one; plain JSON when not asked', async () => {
  server = await start();
  await call(server, 'POST', CM, { metadata: { name: 'app' }, data: { a: '1' }, binaryData: { b: 'AA==' } });
  const accept =
    'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
  const res = await fetch(`${server.url}${CM}?limit=1`, { headers: { accept } });
  const table = (await res.json()) as any;
  expect(table.kind).toBe('Table');
  expect(table.apiVersion).toBe('meta.k8s.io/v1');
  expect(table.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Data', 'Age']);
  expect(table.rows[0].cells.slice(0, 2)).toEqual(['app', 2]);
  expect(table.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'app' } });
  expect(typeof table.metadata.continue).toBe('string');
  const plain = (await (
    await fetch(`${server.url}${CM}`, { headers: { accept: 'application/json' } })
  ).json()) as any;
  expect(plain.kind).toBe('ConfigMapList');
});

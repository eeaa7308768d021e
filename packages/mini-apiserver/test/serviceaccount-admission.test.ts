// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { call, start } from './helpers.js';

let server: MiniApiServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const PODS = '/api/v1/namespaces/default/pods';
const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

// upstream plugin/pkg/admission/serviceaccount TokenVolumeSource(), as the API serves it.
const UPSTREAM_PROJECTED = {
  sources: [
    { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
    { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    {
      downwardAPI: {
        items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
      },
    },
  ],
  defaultMode: 420,
};

function podBody(spec: Record<string, unknown>, name = 'web', annotations?: Record<string, string>) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: { containers: [{ name: 'app', image: 'busybox' }], ...spec },
  };
}

describe('the ServiceAccount admission plugin', () => {
  test('adds the default service account and the kube-api-access volume mounted in every container', async () => {
    server = await start();
    const res = await call(
      server,
      'POST',
      PODS,
      podBody({
        initContainers: [{ name: 'init', image: 'busybox' }],
        containers: [
          { name: 'app', image: 'busybox', volumeMounts: [{ name: 'data', mountPath: '/data' }] },
          { name: 'side', image: 'busybox' },
        ],
        volumes: [{ name: 'data', emptyDir: {} }],
      }),
    );
    expect(res.code).toBe(201);
    const spec = res.body.spec;
    expect(spec.serviceAccountName).toBe('default');
    const volume = spec.volumes[1];
    expect(volume.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(spec.volumes).toEqual([
      { name: 'data', emptyDir: {} },
      { name: volume.name, projected: UPSTREAM_PROJECTED },
    ]);
    const mount = { name: volume.name, readOnly: true, mountPath: MOUNT };
    expect(spec.initContainers[0].volumeMounts).toEqual([mount]);
    expect(spec.containers[0].volumeMounts).toEqual([{ name: 'data', mountPath: '/data' }, mount]);
    expect(spec.containers[1].volumeMounts).toEqual([mount]);
    // No image pull secrets on the service account: none (upstream's empty slice is omitted).
    expect(spec.imagePullSecrets).toBeUndefined();
  });

  test('automountServiceAccountToken: the pod’s choice wins over the service account’s', async () => {
    server = await start();
    server.store.create('serviceaccounts', {
      metadata: { name: 'quiet', namespace: 'default' },
      automountServiceAccountToken: false,
      imagePullSecrets: [{ name: 'regcred' }],
    } as any);
    const off = await call(server, 'POST', PODS, podBody({ automountServiceAccountToken: false }, 'off'));
    expect(off.body.spec.volumes).toBeUndefined();
    expect(off.body.spec.containers[0].volumeMounts).toBeUndefined();
    const quiet = await call(server, 'POST', PODS, podBody({ serviceAccountName: 'quiet' }, 'quiet'));
    expect(quiet.body.spec.volumes).toBeUndefined();
    expect(quiet.body.spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    const on = await call(
      server,
      'POST',
      PODS,
      podBody({ serviceAccountName: 'quiet', automountServiceAccountToken: true }, 'on'),
    );
    expect(on.body.spec.volumes[0].projected).toEqual(UPSTREAM_PROJECTED);
  });

  test('a container that already mounts the path keeps its mount; an existing kube-api-access volume is reused', async () => {
    server = await start();
    const res = await call(
      server,
      'POST',
      PODS,
      podBody({
        containers: [
          { name: 'own', image: 'busybox', volumeMounts: [{ name: 'mine', mountPath: MOUNT }] },
          { name: 'other', image: 'busybox' },
        ],
        volumes: [
          { name: 'mine', emptyDir: {} },
          { name: 'kube-api-access-abcde', emptyDir: {} },
        ],
      }),
    );
    expect(res.code).toBe(201);
    expect(res.body.spec.containers[0].volumeMounts).toEqual([{ name: 'mine', mountPath: MOUNT }]);
    expect(res.body.spec.containers[1].volumeMounts).toEqual([
      { name: 'kube-api-access-abcde', readOnly: true, mountPath: MOUNT },
    ]);
    expect(res.body.spec.volumes).toHaveLength(2);
  });

  test('a missing service account is refused with upstream’s 403', async () => {
    server = await start();
    const res = await call(server, 'POST', PODS, podBody({ serviceAccountName: 'ghost' }));
    expect(res.code).toBe(403);
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'pods "web" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found',
      reason: 'Forbidden',
      details: { name: 'web', kind: 'pods' },
      code: 403,
    });
  });

  test('mirror pods are not mutated and may not name a service account', async () => {
    server = await start();
    const mirror = { 'kubernetes.io/config.mirror': 'hash' };
    const res = await call(server, 'POST', PODS, podBody({}, 'static-web', mirror));
    expect(res.code).toBe(201);
    expect(res.body.spec.serviceAccountName).toBeUndefined();
    expect(res.body.spec.volumes).toBeUndefined();
    const named = await call(
      server,
      'POST',
      PODS,
      podBody({ serviceAccountName: 'default' }, 'static-2', mirror),
    );
    expect(named.code).toBe(403);
    expect(named.body.message).toBe(
      'pods "static-2" is forbidden: a mirror pod may not reference service accounts',
    );
  });

  test('can be switched off; the store API never mutates', async () => {
    server = await start({ serviceAccountAdmission: false, apiDefaulting: false });
    const res = await call(server, 'POST', PODS, podBody({ serviceAccountName: 'ghost' }));
    expect(res.code).toBe(201);
    expect(res.body.spec).toEqual({
      containers: [{ name: 'app', image: 'busybox' }],
      serviceAccountName: 'ghost',
    });
    await server.stop();
    server = await start({ apiDefaulting: false });
    const stored = server.store.create('pods', {
      ...podBody({}),
      metadata: { name: 'raw', namespace: 'default' },
    } as any);
    expect(stored.spec).toEqual({ containers: [{ name: 'app', image: 'busybox' }] });
  });
});

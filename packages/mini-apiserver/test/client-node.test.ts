import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { pod, start } from './helpers.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

describe('@kubernetes/client-node against the mini-apiserver', () => {
  test('CoreV1Api list / create / patch / delete and Watch with a bearer token', async () => {
    server = await start({ token: 'tok' });
    const kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig);
    const api = kc.makeApiClient(CoreV1Api);
    const created = await api.createNamespacedPod({
      namespace: 'default',
      body: pod('web', { nodeName: 'n1' }) as never,
    });
    expect(created.metadata?.uid).toBeDefined();
    const list = await api.listNamespacedPod({ namespace: 'default', limit: 10 });
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['web']);

    const events: string[] = [];
    const watch = new Watch(kc);
    const ac = await watch.watch(
      '/api/v1/namespaces/default/pods',
      { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
      (type, obj: { metadata?: { name?: string } }) => events.push(`${type} ${obj.metadata?.name}`),
      () => {},
    );

    const patched = await api.patchNamespacedPodStatus(
      {
        name: 'web',
        namespace: 'default',
        body: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(patched.status?.phase).toBe('Running');
    const labelled = await api.patchNamespacedPod({
      name: 'web',
      namespace: 'default',
      body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }],
    });
    expect(labelled.metadata?.labels).toEqual({ a: 'b' });
    const deleting = await api.deleteNamespacedPod({
      name: 'web',
      namespace: 'default',
      gracePeriodSeconds: 10,
    });
    expect(deleting.metadata?.deletionTimestamp).toBeDefined();
    await api.deleteNamespacedPod({ name: 'web', namespace: 'default', gracePeriodSeconds: 0 });
    await expect(api.readNamespacedPod({ name: 'web', namespace: 'default' })).rejects.toMatchObject({
      code: 404,
    });
    for (let i = 0; i < 100 && events.length < 4; i++) await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual(['MODIFIED web', 'MODIFIED web', 'MODIFIED web', 'DELETED web']);
    ac.abort();
  });
});

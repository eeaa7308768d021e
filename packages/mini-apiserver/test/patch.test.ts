// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { afterEach, describe, expect, test } from 'vitest';
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  type MiniApiServer,
} from '../src/index.js';
import { call, pod, start } from './helpers.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

const status = {
  phase: 'Running',
  conditions: [
    { type: 'Ready', status: 'False' },
    { type: 'PodScheduled', status: 'True' },
  ],
  containerStatuses: [
    { name: 'a', ready: false, restartCount: 0 },
    { name: 'b', ready: false, restartCount: 1 },
  ],
  initContainerStatuses: [{ name: 'init', ready: true }],
};

describe('patches', () => {
  test('strategic merge: conditions by type, containerStatuses replaced whole (no patch strategy upstream), labels/annotations as maps', async () => {
    server = await start();
    server.store.create('pods', { ...pod('p', { labels: { a: '1', b: '2' } }), status });
    const res = await call(
      server,
      'PATCH',
      '/api/v1/namespaces/default/pods/p/status',
      {
        metadata: { uid: server.store.get('pods', 'default', 'p').metadata?.uid },
        status: {
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'ContainersReady', status: 'True' },
          ],
          containerStatuses: [{ name: 'b', ready: true }],
        },
      },
      'application/strategic-merge-patch+json',
    );
    expect(res.code).toBe(200);
    expect(res.body.status.conditions).toEqual([
      { type: 'Ready', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
      { type: 'ContainersReady', status: 'True' },
    ]);
    expect(res.body.status.containerStatuses).toEqual([{ name: 'b', ready: true }]);
    expect(res.body.status.initContainerStatuses).toEqual([{ name: 'init', ready: true }]);
    const labels = await call(
      server,
      'PATCH',
      '/api/v1/namespaces/default/pods/p',
      { metadata: { labels: { a: null, c: '3' }, annotations: { x: 'y' } } },
      'application/strategic-merge-patch+json',
    );
    expect(labels.body.metadata.labels).toEqual({ b: '2', c: '3' });
    expect(labels.body.metadata.annotations).toEqual({ x: 'y' });
  });

  test("a pod template's lists merge by the Pod's keys (kubectl apply of a changed DaemonSet image)", () => {
    const template = (image: string) => ({
      spec: {
        containers: [
          {
            name: 'agent',
            image,
            volumeMounts: [
              { name: 'a', mountPath: '/a' },
              { name: 'b', mountPath: '/b' },
            ],
          },
        ],
        volumes: [{ name: 'a', hostPath: { path: '/a' } }],
      },
    });
    const ds = { spec: { template: template('x:1') } };
    // What kubectl apply sends for a new image: the container by its merge key, nothing else.
    const patched = applyStrategicMergePatch(ds, {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'agent' }],
            containers: [{ name: 'agent', image: 'x:2' }],
          },
        },
      },
    }) as any;
    expect(patched).toEqual({ spec: { template: template('x:2') } });
    const cron = { spec: { jobTemplate: { spec: { template: template('x:1') } } } };
    const mount = applyStrategicMergePatch(cron, {
      spec: {
        jobTemplate: {
          spec: {
            template: {
              spec: { containers: [{ name: 'agent', volumeMounts: [{ mountPath: '/b', readOnly: true }] }] },
            },
          },
        },
      },
    }) as any;
    expect(mount.spec.jobTemplate.spec.template.spec.containers[0].volumeMounts).toEqual([
      { name: 'a', mountPath: '/a' },
      { name: 'b', mountPath: '/b', readOnly: true },
    ]);
  });

  test('strategic merge directives: $patch delete / replace, $setElementOrder, $deleteFromPrimitiveList', () => {
    const obj = { status, metadata: { finalizers: ['a', 'b'] } };
    const deleted = applyStrategicMergePatch(obj, {
      status: { conditions: [{ type: 'Ready', $patch: 'delete' }] },
    }) as any;
    expect(deleted.status.conditions).toEqual([{ type: 'PodScheduled', status: 'True' }]);
    const replaced = applyStrategicMergePatch(obj, {
      status: { containerStatuses: [{ name: 'z' }, { $patch: 'replace' }] },
    }) as any;
    expect(replaced.status.containerStatuses).toEqual([{ name: 'z' }]);
    const mapReplace = applyStrategicMergePatch(obj, {
      status: { $patch: 'replace', phase: 'Failed' },
    }) as any;
    expect(mapReplace.status).toEqual({ phase: 'Failed' });
    const ordered = applyStrategicMergePatch(obj, {
      status: {
        '$setElementOrder/conditions': [{ type: 'PodScheduled' }, { type: 'Ready' }],
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    }) as any;
    expect(ordered.status.conditions.map((c: any) => `${c.type}=${c.status}`)).toEqual([
      'PodScheduled=True',
      'Ready=True',
    ]);
    const fin = applyStrategicMergePatch(obj, {
      metadata: { '$deleteFromPrimitiveList/finalizers': ['a'], finalizers: ['c'] },
    }) as any;
    expect(fin.metadata.finalizers).toEqual(['b', 'c']);
    expect(obj.metadata.finalizers).toEqual(['a', 'b']); // input untouched
  });

  test('JSON merge patch replaces lists; JSON patch ops', async () => {
    expect(applyMergePatch({ a: [1, 2], b: { c: 1, d: 2 } }, { a: [3], b: { d: null } })).toEqual({
      a: [3],
      b: { c: 1 },
    });
    expect(
      applyJsonPatch({ a: [1, 2], b: 'x' }, [
        { op: 'add', path: '/a/-', value: 3 },
        { op: 'replace', path: '/b', value: 'y' },
        { op: 'test', path: '/b', value: 'y' },
        { op: 'move', from: '/b', path: '/c' },
      ]),
    ).toEqual({ a: [1, 2, 3], c: 'y' });
    server = await start();
    server.store.create('pods', pod('p'));
    const jp = await call(
      server,
      'PATCH',
      '/api/v1/namespaces/default/pods/p',
      [{ op: 'add', path: '/metadata/labels', value: { k: 'v' } }],
      'application/json-patch+json',
    );
    expect(jp.body.metadata.labels).toEqual({ k: 'v' });
    const failed = await call(
      server,
      'PATCH',
      '/api/v1/namespaces/default/pods/p',
      [{ op: 'test', path: '/metadata/name', value: 'q' }],
      'application/json-patch+json',
    );
    expect(failed.code).toBe(400);
    const stale = await call(
      server,
      'PATCH',
      '/api/v1/namespaces/default/pods/p',
      { metadata: { resourceVersion: '1', labels: { z: 'z' } } },
      'application/merge-patch+json',
    );
    expect(stale.code).toBe(409);
    const unsupported = await call(
      server,
      'PATCH',
      '/api/v1/namespaces/default/pods/p',
      {},
      'application/apply-patch+yaml',
    );
    expect(unsupported.code).toBe(415);
    const missing = await call(
      server,
      'PATCH',
      '/api/v1/namespaces/default/pods/none',
      {},
      'application/merge-patch+json',
    );
    expect(missing.code).toBe(404);
  });
});

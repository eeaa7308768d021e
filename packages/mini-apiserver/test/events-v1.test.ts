// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// events.k8s.io/v1 and core/v1 Events are the same objects in two shapes (upstream
// pkg/apis/events/v1 conversion: regarding/note/deprecatedSource/deprecated* /
// reportingController), with the group's field selector names.
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { call, start } from './helpers.js';

const V1 = '/apis/events.k8s.io/v1/namespaces/default/events';
const CORE = '/api/v1/namespaces/default/events';

let server: MiniApiServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('events.k8s.io/v1', () => {
  test('created in one shape, read in both; field selectors per group', async () => {
    server = await start();
    const created = await call(server, 'POST', V1, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e1' },
      eventTime: '2026-01-01T00:00:00.000000Z',
      reportingController: 'example.com/agent',
      reportingInstance: 'agent-1',
      action: 'Pulling',
      reason: 'Pulled',
      type: 'Normal',
      note: 'pulled the image',
      regarding: { kind: 'Pod', namespace: 'default', name: 'p', uid: 'u1', apiVersion: 'v1' },
      series: { count: 2, lastObservedTime: '2026-01-01T00:00:05.000000Z' },
    });
    expect(created.code).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'Event',
      apiVersion: 'events.k8s.io/v1',
      note: 'pulled the image',
      regarding: { name: 'p' },
      reportingController: 'example.com/agent',
    });
    const core = (await call(server, 'GET', `${CORE}/e1`)).body;
    expect(core).toMatchObject({
      kind: 'Event',
      apiVersion: 'v1',
      message: 'pulled the image',
      involvedObject: { kind: 'Pod', name: 'p', uid: 'u1' },
      reportingComponent: 'example.com/agent',
      reportingInstance: 'agent-1',
      action: 'Pulling',
      series: { count: 2 },
    });
    expect(core.note).toBeUndefined();
    await call(server, 'POST', CORE, {
      metadata: { name: 'e2' },
      involvedObject: { kind: 'Node', name: 'n1' },
      reason: 'NodeReady',
      message: 'ready',
      source: { component: 'kubelet', host: 'n1' },
      count: 3,
      type: 'Normal',
    });
    const e2 = (await call(server, 'GET', `${V1}/e2`)).body;
    expect(e2).toMatchObject({
      regarding: { kind: 'Node', name: 'n1' },
      note: 'ready',
      deprecatedSource: { component: 'kubelet', host: 'n1' },
      deprecatedCount: 3,
    });
    const byName = await call(server, 'GET', `${V1}?fieldSelector=regarding.name=p`);
    expect(byName.body.kind).toBe('EventList');
    expect(byName.body.items.map((e: any) => e.metadata.name)).toEqual(['e1']);
    const byController = await call(
      server,
      'GET',
      `${V1}?fieldSelector=reportingController=example.com/agent`,
    );
    expect(byController.body.items.map((e: any) => e.metadata.name)).toEqual(['e1']);
    const coreField = await call(server, 'GET', `${V1}?fieldSelector=involvedObject.name=p`);
    expect(coreField.code).toBe(400);
    expect(coreField.body.message).toBe('field label not supported: involvedObject.name');
    const coreList = await call(
      server,
      'GET',
      `${CORE}?fieldSelector=involvedObject.kind=Node,source=kubelet`,
    );
    expect(coreList.body.items.map((e: any) => e.metadata.name)).toEqual(['e2']);
  });

  test('patch in the v1 shape (series update), delete; discovery lists the group', async () => {
    server = await start();
    await call(server, 'POST', V1, {
      metadata: { name: 'e' },
      eventTime: '2026-01-01T00:00:00.000000Z',
      reportingController: 'c',
      reportingInstance: 'i',
      action: 'A',
      reason: 'R',
      type: 'Warning',
      regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
    });
    const patched = await call(
      server,
      'PATCH',
      `${V1}/e`,
      { series: { count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' } },
      'application/merge-patch+json',
    );
    expect(patched.code).toBe(200);
    expect(patched.body.series.count).toBe(2);
    expect((await call(server, 'GET', `${CORE}/e`)).body.series.count).toBe(2);
    expect((await call(server, 'DELETE', `${V1}/e`)).body.status).toBe('Success');
    expect((await call(server, 'GET', `${CORE}/e`)).code).toBe(404);
    const disc = (await call(server, 'GET', '/apis/events.k8s.io/v1')).body;
    expect(disc.resources[0]).toMatchObject({ name: 'events', kind: 'Event', namespaced: true });
  });
});

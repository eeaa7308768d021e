// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { afterEach, describe, expect, test } from 'vitest';
import { type KubeObject, MANAGED_BY, type MiniApiServer, SERVICE_NAME_LABEL } from '../src/index.js';
import { start } from './helpers.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

function webPod(name: string, ip: string | undefined, ready: boolean): KubeObject {
  return {
    metadata: { name, namespace: 'default', labels: { app: 'web' } },
    spec: {
      nodeName: 'n1',
      containers: [{ name: 'app', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }],
    },
    status: {
      phase: 'Running',
      ...(ip ? { podIP: ip } : {}),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  };
}

describe('EndpointSlice controller', () => {
  test('services with selectors get slices tracking pod IPs, readiness and termination', async () => {
    server = await start({ endpointSliceController: true });
    const ctl = server.endpointSlices!;
    server.store.create('services', {
      metadata: { name: 'web', namespace: 'default', labels: { team: 'a' } },
      spec: {
        selector: { app: 'web' },
        ports: [
          { name: 'http', port: 80, targetPort: 'http' },
          { name: 'raw', port: 81, targetPort: 9090 },
        ],
      },
    });
    server.store.create('pods', webPod('w1', '10.0.0.1', true));
    server.store.create('pods', webPod('w2', '10.0.0.2', false));
    server.store.create('pods', webPod('w3', undefined, true));
    server.store.create('pods', {
      ...webPod('other', '10.0.0.9', true),
      metadata: { name: 'other', namespace: 'default', labels: { app: 'db' } },
    });
    await ctl.idle();
    const slices = server.store.list('endpointslices', 'default');
    expect(slices).toHaveLength(1);
    const s = slices[0] as any;
    expect(s.metadata.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(s.metadata.labels).toEqual({
      team: 'a',
      [SERVICE_NAME_LABEL]: 'web',
      'endpointslice.kubernetes.io/managed-by': MANAGED_BY,
    });
    expect(s.metadata.ownerReferences[0]).toMatchObject({ kind: 'Service', name: 'web', controller: true });
    expect(s.addressType).toBe('IPv4');
    expect(s.ports).toEqual([
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'raw', port: 9090, protocol: 'TCP' },
    ]);
    expect(s.endpoints).toEqual([
      {
        addresses: ['10.0.0.1'],
        conditions: { ready: true, serving: true, terminating: false },
        targetRef: {
          kind: 'Pod',
          namespace: 'default',
          name: 'w1',
          uid: server.store.get('pods', 'default', 'w1').metadata?.uid,
        },
        nodeName: 'n1',
      },
      {
        addresses: ['10.0.0.2'],
        conditions: { ready: false, serving: false, terminating: false },
        targetRef: expect.objectContaining({ name: 'w2' }),
        nodeName: 'n1',
      },
    ]);

    // Graceful deletion: terminating, serving while still ready.
    server.store.delete('pods', 'default', 'w1', { gracePeriodSeconds: 30 });
    await ctl.idle();
    const after = server.store.list('endpointslices', 'default')[0] as any;
    expect(after.metadata.name).toBe(s.metadata.name);
    expect(after.endpoints[0].conditions).toEqual({ ready: false, serving: true, terminating: true });

    // A pod leaving the selector disappears; deleting the service removes its slices.
    server.store.patch('pods', 'default', 'w2', 'merge', { metadata: { labels: { app: 'x' } } });
    await ctl.idle();
    expect(
      (server.store.list('endpointslices', 'default')[0] as any).endpoints.map((e: any) => e.targetRef.name),
    ).toEqual(['w1']);
    server.store.delete('services', 'default', 'web');
    await ctl.idle();
    expect(server.store.list('endpointslices', 'default')).toEqual([]);
  });

  test('a service without matching pods has an empty placeholder slice; no selector → no slice', async () => {
    server = await start({ endpointSliceController: true });
    server.store.create('services', {
      metadata: { name: 'empty', namespace: 'default' },
      spec: { selector: { app: 'none' }, ports: [{ port: 80 }] },
    });
    server.store.create('services', {
      metadata: { name: 'manual', namespace: 'default' },
      spec: { ports: [{ port: 80 }] },
    });
    await server.endpointSlices!.idle();
    const slices = server.store.list('endpointslices', 'default') as any[];
    expect(slices.map((s) => s.metadata.labels[SERVICE_NAME_LABEL])).toEqual(['empty']);
    expect(slices[0].endpoints).toEqual([]);
  });
});

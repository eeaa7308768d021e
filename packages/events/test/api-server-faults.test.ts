// Against the mini API server: events land as core/v1 Events that field selectors find,
// and an API server that answers 500 / 409 or drops connections (before or after storing
// the request) loses none of them and stores no duplicate.
import { type MiniApiServer, startMiniApiServer } from '@nodeagent/mini-apiserver';
import { afterEach, describe, expect, it } from 'vitest';
import type { CoreEvent } from '../src/event.js';
import { apiClientEventSink, containerReference, EventRecorder, HttpJsonClient } from '../src/index.js';

let server: MiniApiServer | undefined;
let client: HttpJsonClient | undefined;
afterEach(async () => {
  client?.close();
  await server?.stop();
});

function pod(name: string) {
  return {
    metadata: { name, namespace: 'shop', uid: `uid-${name}` },
    spec: { containers: [{ name: 'app' }] },
  };
}

async function listEvents(selector: string): Promise<CoreEvent[]> {
  const res = await fetch(`${server?.url}/api/v1/events?fieldSelector=${encodeURIComponent(selector)}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: CoreEvent[] }).items;
}

describe('EventRecorder against the mini API server', () => {
  it('loses no event and stores no duplicate through 500s, 409 Conflicts and dropped connections', async () => {
    server = await startMiniApiServer({ autoCreateNamespaces: true });
    client = new HttpJsonClient({ server: server.url });
    const recorder = new EventRecorder({
      sink: apiClientEventSink(client),
      host: 'node-1',
      retrySleepMs: 5,
    });
    const f = server.faults;
    f.failNext(3, { code: 500, method: 'POST', path: '/api/v1/namespaces/shop/events' });
    f.failNext(2, { code: 409, method: 'POST', path: '/api/v1/namespaces/shop/events' });
    f.dropNext(2, { method: 'POST', path: '/api/v1/namespaces/shop/events' });
    f.dropNext(2, { method: 'POST', path: '/api/v1/namespaces/shop/events', when: 'after' });
    await recorder.start();
    const expected = new Map<string, number>();
    for (let i = 0; i < 20; i++) {
      const p = pod(`web-${i}`);
      recorder.event(
        containerReference(p, 'app'),
        'Normal',
        'Pulled',
        `Container image "nginx:${i}" already present on machine`,
      );
      recorder.event(containerReference(p, 'app'), 'Normal', 'Created', 'Created container: app');
      recorder.event(containerReference(p, 'app'), 'Normal', 'Started', 'Started container app');
      for (const r of ['Pulled', 'Created', 'Started']) expected.set(`web-${i}/${r}`, 1);
    }
    await recorder.flush();
    // Repeats become patches; fail and drop some of those too.
    f.failNext(2, { code: 500, method: 'PATCH' });
    f.dropNext(1, { method: 'PATCH' });
    f.dropNext(1, { method: 'PATCH', when: 'after' });
    for (let i = 0; i < 5; i++) {
      const p = pod(`web-${i}`);
      recorder.event(
        containerReference(p, 'app'),
        'Warning',
        'BackOff',
        'Back-off restarting failed container app',
      );
      recorder.event(
        containerReference(p, 'app'),
        'Warning',
        'BackOff',
        'Back-off restarting failed container app',
      );
      recorder.event(
        containerReference(p, 'app'),
        'Warning',
        'BackOff',
        'Back-off restarting failed container app',
      );
      expected.set(`web-${i}/BackOff`, 3);
    }
    await recorder.flush();
    expect(recorder.dropped().size).toBe(0);
    // Every injected fault was met: 65 creates + 9 failed or cut tries; 10 patches + 4.
    const requests = server.requests.filter((r) => r.path.startsWith('/api/v1/namespaces/shop/events'));
    expect(requests.filter((r) => r.method === 'POST')).toHaveLength(74);
    expect(requests.filter((r) => r.method === 'PATCH')).toHaveLength(14);

    const all = await listEvents('involvedObject.namespace=shop');
    const got = new Map(all.map((e) => [`${e.involvedObject.name}/${e.reason}`, e.count]));
    expect(all).toHaveLength(expected.size);
    expect(got).toEqual(expected);

    // What `kubectl describe pod` asks for.
    const forPod = await listEvents(
      'involvedObject.name=web-3,involvedObject.namespace=shop,involvedObject.uid=uid-web-3',
    );
    expect(forPod.map((e) => e.reason).sort()).toEqual(['BackOff', 'Created', 'Pulled', 'Started']);
    expect(forPod.find((e) => e.reason === 'BackOff')).toMatchObject({
      type: 'Warning',
      count: 3,
      involvedObject: { kind: 'Pod', fieldPath: 'spec.containers{app}' },
      source: { component: 'kubelet', host: 'node-1' },
    });
    await recorder.stop();
  });

  it('under faults, one object still gets exactly its 25 spam-filter tokens', async () => {
    server = await startMiniApiServer({ autoCreateNamespaces: true });
    client = new HttpJsonClient({ server: server.url });
    const recorder = new EventRecorder({ sink: apiClientEventSink(client), host: 'node-1', retrySleepMs: 5 });
    server.faults.failNext(4, { code: 503, method: 'POST' });
    server.faults.dropNext(3, { method: 'POST', when: 'after' });
    await recorder.start();
    const p = pod('noisy');
    for (let i = 0; i < 40; i++) {
      recorder.event(containerReference(p, 'app'), 'Warning', `Reason${i}`, `distinct message ${i}`);
    }
    await recorder.flush();
    const stored = await listEvents('involvedObject.name=noisy');
    expect(stored).toHaveLength(25);
    expect(stored.map((e) => e.reason)).toEqual(Array.from({ length: 25 }, (_, i) => `Reason${i}`));
    expect(recorder.dropped()).toEqual(new Map([['spam_filter', 15]]));
    await recorder.stop();
  });
});

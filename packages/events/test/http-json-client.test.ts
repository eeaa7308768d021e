// HttpJsonClient, the package's own client: HTTPS with a CA and a bearer token, a Status
// answer as EventSinkError (401 is refused for good, not retried), and a certificate it
// cannot verify as a transport failure (retried).
import { FakeClock } from '@nodeagent/core/testing';
import { type MiniApiServer, startMiniApiServer } from '@nodeagent/mini-apiserver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreEvent } from '../src/event.js';
import {
  apiClientEventSink,
  EventRecorder,
  EventSinkError,
  HttpJsonClient,
  nodeReference,
  statusOf,
} from '../src/index.js';

let server: MiniApiServer;
beforeAll(async () => {
  server = await startMiniApiServer({ tls: 'self-signed', token: 's3cret' });
}, 30_000);
afterAll(async () => {
  await server?.stop();
});

const event: CoreEvent = {
  metadata: { name: 'node-1.1', namespace: 'default' },
  involvedObject: { kind: 'Node', name: 'node-1', uid: 'node-1' },
  reason: 'Starting',
  message: 'Starting kubelet.',
  type: 'Normal',
  count: 1,
};

describe('HttpJsonClient', () => {
  it('creates and patches over HTTPS with the CA and a bearer token', async () => {
    const client = new HttpJsonClient({
      server: server.url,
      ca: server.tls?.ca ?? '',
      headers: { Authorization: 'Bearer s3cret' },
    });
    const sink = apiClientEventSink(client);
    const created = await sink.create(event);
    expect(created).toMatchObject({ kind: 'Event', metadata: { name: 'node-1.1', namespace: 'default' } });
    const patched = await sink.patch(event, { count: 2, message: 'again' });
    expect(patched).toMatchObject({ count: 2, message: 'again' });
    client.close();
  });

  it('answers a Status as EventSinkError with code and reason; a 401 is refused for good', async () => {
    const client = new HttpJsonClient({ server: server.url, ca: server.tls?.ca ?? '' });
    const err = await apiClientEventSink(client)
      .create(event)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EventSinkError);
    expect(statusOf(err)).toEqual({ code: 401, reason: 'Unauthorized' });
    const recorder = new EventRecorder({ sink: apiClientEventSink(client), clock: new FakeClock() });
    await recorder.start();
    recorder.event(nodeReference('node-1'), 'Normal', 'Starting', 'Starting kubelet.');
    await recorder.flush();
    expect(recorder.dropped()).toEqual(new Map([['rejected', 1]]));
    client.close();
  });

  it('an unverifiable certificate is a transport failure (no status), so it is retried', async () => {
    const client = new HttpJsonClient({ server: server.url, headers: { Authorization: 'Bearer s3cret' } });
    const err = await apiClientEventSink(client)
      .create(event)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(statusOf(err)).toBeUndefined();
    client.close();
  });
});

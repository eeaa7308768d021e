// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// The API server's edges as kube-apiserver has them: a malformed % escape in the path is
// refused by Go's net/http with a plain 400 before any filter; JSON nested deeper than Go's
// encoding/json limit (10000) is a 400; bodies in a media type the server does not decode get
// 415; a request that does not complete within --request-timeout (60 s) gets 504 and a client
// that never finishes its headers is cut (ReadHeaderTimeout, 32 s); the bearer scheme is
// case-insensitive.
import { request } from 'node:http';
import { connect } from 'node:net';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, test } from 'vitest';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MAX_JSON_NESTING_DEPTH,
  MAX_STORED_NESTING_DEPTH,
  type MiniApiServer,
} from '../src/index.js';
import { call, pod, start, waitUntil } from './helpers.js';

let server: MiniApiServer;
afterEach(async () => {
  await server?.stop();
});

const PODS = '/api/v1/namespaces/default/pods';

/** A raw request (fetch would normalise the path), with optional headers and body. */
function raw(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ code: number; text: string; headers: Record<string, unknown> }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ code: res.statusCode ?? 0, text, headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('malformed % escapes', () => {
  test.each([`${PODS}/%zz`, `${PODS}/web%`, '/api/v1/namespaces/%2/pods'])(
    '%s gets the plain 400 of Go net/http, authenticated or not',
    async (path) => {
      server = await start({ token: 'secret' });
      const anonymous = await raw(path);
      expect({ code: anonymous.code, text: anonymous.text }).toEqual({ code: 400, text: '400 Bad Request' });
      const authenticated = await raw(path, { headers: { authorization: 'Bearer secret' } });
      expect({ code: authenticated.code, text: authenticated.text }).toEqual({
        code: 400,
        text: '400 Bad Request',
      });
    },
  );

  test('a well-formed escape that is not UTF-8 is a name like any other (404, not 500)', async () => {
    server = await start();
    const res = await raw(`${PODS}/%C3%28`);
    expect(res.code).toBe(404);
    expect(JSON.parse(res.text)).toMatchObject({ reason: 'NotFound' });
  });

  test('in the query, a pair with a malformed escape is dropped, as Go url.ParseQuery does', async () => {
    server = await start();
    server.store.create('pods', pod('a', { labels: { app: 'x' } }));
    server.store.create('pods', pod('b'));
    const all = await raw(`${PODS}?labelSelector=%zz`);
    expect(all.code).toBe(200);
    expect(JSON.parse(all.text).items).toHaveLength(2);
    const some = await raw(`${PODS}?labelSelector=app%3Dx&limit=%2`);
    expect(JSON.parse(some.text).items.map((p: any) => p.metadata.name)).toEqual(['a']);
  });

  test('without a malformed escape an unauthenticated request still gets 401 first', async () => {
    server = await start({ token: 'secret' });
    expect((await raw(`${PODS}/web%20x`)).code).toBe(401);
  });
});

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

describe('JSON nesting limit', () => {
  test('the limit is Go encoding/json maxNestingDepth', () => {
    expect(MAX_JSON_NESTING_DEPTH).toBe(10_000);
  });

  test.each(['POST', 'PATCH'])('%s: a body nested 10001 deep gets 400 exceeded max depth', async (method) => {
    server = await start();
    if (method === 'PATCH') server.store.create('pods', pod('web'));
    const body = `{"metadata":{"name":"web","annotations":{"a":"b"}},"x":${nested(MAX_JSON_NESTING_DEPTH)}}`;
    const res = await raw(method === 'POST' ? PODS : `${PODS}/web`, {
      method,
      headers: { 'content-type': method === 'POST' ? 'application/json' : 'application/merge-patch+json' },
      body,
    });
    expect(res.code).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({
      reason: 'BadRequest',
      message: 'the body of the request could not be decoded as JSON: exceeded max depth',
    });
  });

  test.each([
    ['POST', 'application/json'],
    ['PATCH', 'application/merge-patch+json'],
    ['PATCH', 'application/strategic-merge-patch+json'],
  ])(
    '%s %s: a body nested exactly 10000 deep is a 400, never a 500 (the server stores at most 1000 levels)',
    async (method, ct) => {
      server = await start();
      if (method === 'PATCH') server.store.create('pods', pod('web'));
      const p = JSON.stringify(pod('web'));
      // The pod object is depth 1; the unknown field adds 9999 more.
      const body = `${p.slice(0, -1)},"x":${nested(MAX_JSON_NESTING_DEPTH - 1)}}`;
      const res = await raw(method === 'POST' ? PODS : `${PODS}/web`, {
        method,
        headers: { 'content-type': ct },
        body,
      });
      expect(res.code).toBe(400);
      expect(JSON.parse(res.text).message).toBe(
        'the body of the request is nested 10000 deep; mini-apiserver handles bodies nested at most 1000 deep',
      );
    },
  );

  test.each([
    ['POST', 'application/json'],
    ['PATCH', 'application/merge-patch+json'],
    ['PATCH', 'application/strategic-merge-patch+json'],
    ['PUT', 'application/json'],
  ])('%s %s: a body nested 1000 deep is stored, read back and watched', async (method, ct) => {
    server = await start();
    if (method !== 'POST') server.store.create('pods', pod('web'));
    const deep = `${'{"a":'.repeat(MAX_STORED_NESTING_DEPTH - 1)}1${'}'.repeat(MAX_STORED_NESTING_DEPTH - 1)}`;
    const p =
      method === 'PUT'
        ? JSON.stringify(server.store.get('pods', 'default', 'web'))
        : JSON.stringify(pod('web'));
    const body = method === 'PATCH' ? `{"x":${deep}}` : `${p.slice(0, -1)},"x":${deep}}`;
    const res = await raw(method === 'POST' ? PODS : `${PODS}/web`, {
      method,
      headers: { 'content-type': ct },
      body,
    });
    expect(res.code).toBeLessThan(300);
    const got = await raw(`${PODS}/web`);
    expect(got.text).toContain(deep);
  });

  test('a JSON patch that would nest the object past 1000 levels is a 400, never a 500', async () => {
    server = await start();
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const p = JSON.stringify(pod('web'));
    const created = await raw(PODS, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `${p.slice(0, -1)},"x":${deep(MAX_STORED_NESTING_DEPTH - 2)}}`,
    });
    expect(created.code).toBe(201);
    const path = `/x${'/a'.repeat(MAX_STORED_NESTING_DEPTH - 3)}`;
    const res = await raw(`${PODS}/web`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json-patch+json' },
      body: `[{"op":"add","path":"${path}","value":${deep(900)}}]`,
    });
    expect(res.code).toBe(400);
    expect(JSON.parse(res.text).message).toMatch(/^the patched object is nested deeper than 1000/);
    expect((await raw(`${PODS}/web`)).code).toBe(200);
  });

  test('brackets inside strings do not count', async () => {
    server = await start();
    const p = pod('web');
    p.metadata = { ...p.metadata, annotations: { a: '['.repeat(20_000) } };
    expect((await call(server, 'POST', PODS, p)).code).toBe(201);
  });
});

describe('media types', () => {
  test.each([
    ['POST', PODS],
    ['PUT', `${PODS}/web`],
  ])('%s with an unsupported Content-Type gets 415 listing what is accepted', async (method, path) => {
    server = await start();
    server.store.create('pods', pod('web'));
    for (const ct of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', '*/*']) {
      const res = await call(server, method, path, pod('web'), ct);
      expect({ ct, code: res.code, body: res.body }).toMatchObject({
        ct,
        code: 415,
        body: {
          reason: 'UnsupportedMediaType',
          message:
            'the body of the request was in an unknown format - accepted media types include: application/json',
        },
      });
    }
  });

  test('JSON with parameters, and a missing Content-Type, are decoded as JSON', async () => {
    server = await start();
    expect((await call(server, 'POST', PODS, pod('a'), 'application/json; charset=utf-8')).code).toBe(201);
    const res = await raw(PODS, { method: 'POST', body: JSON.stringify(pod('b')) });
    expect(res.code).toBe(201);
  });

  test('PATCH with a type that is not a patch type gets 415 listing the patch types', async () => {
    server = await start();
    server.store.create('pods', pod('web'));
    const res = await call(server, 'PATCH', `${PODS}/web`, { metadata: {} }, 'application/json');
    expect(res.code).toBe(415);
    expect(res.body.message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json',
    );
  });

  test('DELETE with a body in an unsupported type gets 415; without a body it is fine', async () => {
    server = await start();
    server.store.create('pods', pod('web'));
    expect((await call(server, 'DELETE', `${PODS}/web`, { gracePeriodSeconds: 0 }, 'text/plain')).code).toBe(
      415,
    );
    expect((await raw(`${PODS}/web`, { method: 'DELETE' })).code).toBe(200);
  });
});

describe('request timeouts', () => {
  test('the defaults are kube-apiserver --request-timeout (1m) and ReadHeaderTimeout (32s)', () => {
    expect(DEFAULT_REQUEST_TIMEOUT_MS).toBe(60_000);
    expect(DEFAULT_HEADERS_TIMEOUT_MS).toBe(32_000);
  });

  test('a body trickled slower than the request timeout gets 504 at 60 s and the connection closes', async () => {
    const clock = new FakeClock();
    server = await start({ clock });
    const url = new URL(server.url);
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('data', (d) => {
      received += d.toString();
    });
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
    socket.write(
      `POST ${PODS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
    );
    await waitUntil(() => clock.pendingTimers() > 0);
    await clock.advance(DEFAULT_REQUEST_TIMEOUT_MS - 1);
    socket.write('"');
    await new Promise((r) => setTimeout(r, 20));
    expect(received).toBe('');
    await clock.advance(1);
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 504 /);
    const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Timeout: request did not complete within requested timeout - context deadline exceeded',
      reason: 'Timeout',
      details: {},
      code: 504,
    });
    expect(server.store.count('pods')).toBe(0);
  });

  test('a request that completes in time is not affected, and watches are long-running', async () => {
    const clock = new FakeClock();
    server = await start({ clock, requestTimeoutMs: 1000 });
    expect((await call(server, 'POST', PODS, pod('a'))).code).toBe(201);
    const ac = new AbortController();
    const watch = await fetch(`${server.url}${PODS}?watch=true`, { signal: ac.signal });
    expect(watch.status).toBe(200);
    await clock.advance(5000);
    server.store.create('pods', pod('b'));
    const reader = watch.body?.getReader();
    let text = '';
    while (!text.includes('"name":"b"')) {
      const { value, done } = (await reader?.read()) ?? { done: true, value: undefined };
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('"name":"b"');
    ac.abort();
  });

  test('a client that never finishes its headers is disconnected after headersTimeoutMs', async () => {
    server = await start({ headersTimeoutMs: 200 });
    const url = new URL(server.url);
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    socket.on('data', (d) => {
      received += d.toString();
    });
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(`GET ${PODS} HTTP/1.1\r\nHost: x\r\n`);
    const started = Date.now();
    await closed;
    // Node answers 408 before closing; Go's server closes without an answer.
    expect(received === '' || received.startsWith('HTTP/1.1 408')).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test('timeouts must be finite and >= 0', async () => {
    await expect(start({ requestTimeoutMs: -1 })).rejects.toThrow(
      'requestTimeoutMs must be a finite number >= 0, got -1',
    );
    await expect(start({ headersTimeoutMs: Number.NaN })).rejects.toThrow('headersTimeoutMs');
  });
});

describe('bearer scheme', () => {
  test.each([
    ['Bearer secret', 200],
    ['bearer secret', 200],
    ['BEARER secret', 200],
    ['BeArEr secret', 200],
    ['  Bearer secret  ', 200],
    ['Bearer secret extra', 200],
    ['Bearer  secret', 401],
    ['Bearersecret', 401],
    ['Basic secret', 401],
    ['Bearer', 401],
  ])('Authorization: %j → %i', async (header, code) => {
    server = await start({ token: 'secret' });
    expect((await raw(PODS, { headers: { authorization: header } })).code).toBe(code);
  });
});

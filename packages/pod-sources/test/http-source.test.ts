// HttpSource against a local HTTP server: Pod and PodList bodies, headers, errors, unchanged bodies.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpSource, PodConfig, type PodSourceError } from '../src/index.js';
import { drain, podYaml } from './helpers.js';

let server: Server;
let url: string;
let reply: { status: number; body: string };
const seenHeaders: IncomingHttpHeaders[] = [];

beforeEach(async () => {
  reply = { status: 200, body: '' };
  seenHeaders.length = 0;
  server = createServer((req, res) => {
    seenHeaders.push(req.headers);
    res.writeHead(reply.status).end(reply.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`;
});
afterEach(async () => {
  await new Promise((r) => server.close(r));
});

function setup() {
  const clock = new FakeClock();
  const config = new PodConfig({ clock });
  const errors: PodSourceError[] = [];
  const source = new HttpSource({
    url,
    nodeName: 'node-1',
    sink: config.channel('http'),
    headers: [
      ['Authorization', 'Bearer t'],
      ['X-Multi', 'a'],
      ['X-Multi', 'b'],
    ],
    clock,
    onError: (e) => errors.push(e),
  });
  return { clock, config, errors, source };
}

describe('HttpSource', () => {
  it('reads one Pod with the headers, and polls every 20 s', async () => {
    reply.body = podYaml('web');
    const { config, source, clock } = setup();
    await source.start();
    expect(drain(config)).toEqual([{ op: 'ADD', source: 'http', names: ['web-node-1'] }]);
    expect(seenHeaders[0]?.authorization).toBe('Bearer t');
    expect(seenHeaders[0]?.['x-multi']).toBe('a, b');
    const pod = config.pods()[0];
    expect(pod?.spec?.tolerations).toBeUndefined();
    await clock.advance(20_000);
    await source.poll();
    expect(seenHeaders.length).toBeGreaterThanOrEqual(2);
    expect(drain(config)).toEqual([]);
    await source.stop();
  });

  it('reads a PodList', async () => {
    reply.body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'PodList',
      items: ['a', 'b'].map((name) => ({
        metadata: { name },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      })),
    });
    const { config, source } = setup();
    await source.start();
    expect(drain(config)).toEqual([{ op: 'ADD', source: 'http', names: ['a-node-1', 'b-node-1'] }]);
    await source.stop();
  });

  it('a 500 is reported and keeps the pods; an empty body is an empty snapshot; a fixed body is picked up', async () => {
    reply.body = podYaml('web');
    const { config, source, errors } = setup();
    await source.start();
    drain(config);
    reply = { status: 500, body: 'boom' };
    await source.poll();
    expect(drain(config)).toEqual([]);
    expect(errors.map((e) => [e.code, e.location, e.reason])).toEqual([
      ['HttpStatus', url, '500 Internal Server Error'],
    ]);
    reply = { status: 200, body: 'apiVersion: apps/v1\nkind: Deployment\n' };
    await source.poll();
    expect(errors.at(-1)?.code).toBe('NotAPod');
    expect(config.pods().map((p) => p.metadata?.name)).toEqual(['web-node-1']);
    reply = { status: 200, body: '' };
    await source.poll();
    expect(errors.at(-1)?.reason).toBe(`zero-length data received from ${url}`);
    expect(drain(config)).toEqual([{ op: 'REMOVE', source: 'http', names: ['web-node-1'] }]);
    reply = { status: 200, body: podYaml('web') };
    await source.poll();
    expect(drain(config)).toEqual([{ op: 'ADD', source: 'http', names: ['web-node-1'] }]);
    await source.stop();
  });

  it('an unreachable URL is reported and does not mark the source seen', async () => {
    await new Promise((r) => server.close(r));
    const { config, source, errors } = setup();
    await source.start();
    expect(config.seenAllSources()).toBe(false);
    expect(errors[0]?.code).toBe('Unreadable');
    await source.stop();
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
});

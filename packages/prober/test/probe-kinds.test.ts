// The probe kinds against real servers on loopback, with upstream's messages (pkg/probe/http,
// tcp, grpc tests and the messages their code builds).
import { getEventListeners } from 'node:events';
import type { V1Container } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_USER_AGENT,
  grpcProbe,
  httpProbe,
  newHTTPProbeRequest,
  resolveContainerPort,
  tcpProbe,
} from '../src/index.js';
import {
  freePort,
  type HealthServer,
  type HttpTestServer,
  startHealthServer,
  startHttpServer,
} from './servers.js';

const container: V1Container = { name: 'c', ports: [{ name: 'http', containerPort: 0 }] };
const get = (port: number | string, path = '/', extra: Record<string, unknown> = {}, c = container) =>
  newHTTPProbeRequest({ port: port as never, path, ...extra }, c, '127.0.0.1', DEFAULT_USER_AGENT);

describe('httpGet', () => {
  let server: HttpTestServer;
  const big = Buffer.alloc(1024 * 1024, 'x');
  beforeAll(async () => {
    server = await startHttpServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/ok') res.end('fine');
      else if (url === '/503') {
        res.statusCode = 503;
        res.end('secret body');
      } else if (url === '/echo') res.end(JSON.stringify({ headers: req.headers }));
      else if (url === '/hop') {
        res.writeHead(302, { Location: '/ok' });
        res.end();
      } else if (url === '/loop') {
        res.writeHead(302, { Location: '/loop' });
        res.end();
      } else if (url === '/elsewhere') {
        res.writeHead(301, { Location: `http://localhost:${server.port}/ok` });
        res.end('moved');
      } else if (url === '/huge') {
        // 100 MB, written lazily; the probe must stop after 10 KiB.
        let sent = 0;
        res.writeHead(200, { 'Content-Length': String(100 * 1024 * 1024) });
        const pump = () => {
          while (sent < 100 * 1024 * 1024) {
            sent += big.length;
            if (!res.write(big)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => res.removeAllListeners('drain'));
        pump();
      } else if (url === '/hang') {
        // never answers
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it("2xx is success with the body; 503 is upstream's message without the body", async () => {
    expect(await httpProbe(get(server.port, '/ok'), 1000)).toEqual({ outcome: 'success', output: 'fine' });
    expect(await httpProbe(get(server.port, '/503'), 1000)).toEqual({
      outcome: 'failure',
      output: 'HTTP probe failed with statuscode: 503',
    });
  });

  it('sends User-Agent kube-probe/<major>.<minor> and Accept */* unless set; Host becomes the request host', async () => {
    const defaults = await httpProbe(get(server.port, '/echo'), 1000);
    const h = JSON.parse(defaults.output).headers;
    expect(h.host).toBe(`127.0.0.1:${server.port}`);
    expect(h['user-agent']).toBe('kube-probe/1.36');
    expect(h.accept).toBe('*/*');
    expect(h.connection).toBe('close');
    expect(h['accept-encoding']).toBeUndefined();
    const custom = await httpProbe(
      get(server.port, '/echo', {
        httpHeaders: [
          { name: 'user-agent', value: 'mine' },
          { name: 'Accept', value: '' },
          { name: 'x-custom', value: 'a' },
          { name: 'Host', value: 'example.test' },
        ],
      }),
      1000,
    );
    const c = JSON.parse(custom.output).headers;
    expect(c).toMatchObject({ 'user-agent': 'mine', 'x-custom': 'a', host: 'example.test' });
    expect(c.accept).toBeUndefined();
  });

  it('Host keeps a default port as Go does (`ip:80`), where Node would drop it', async () => {
    const port80 = await startHttpServer((req, res) => res.end(String(req.headers.host)), {
      host: '127.66.0.1',
      port: 80,
    }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EACCES' && process.env.CI !== 'true') return undefined;
      throw err;
    });
    if (port80 === undefined) {
      console.warn('SKIPPED: binding 127.66.0.1:80 needs root');
      return;
    }
    try {
      const req = newHTTPProbeRequest(
        { port: 80 as never, path: '/' },
        container,
        '127.66.0.1',
        DEFAULT_USER_AGENT,
      );
      expect(await httpProbe(req, 1000)).toEqual({ outcome: 'success', output: '127.66.0.1:80' });
    } finally {
      await port80.close();
    }
  });

  it('follows a redirect to the same host; a redirect to another host is a warning with the body', async () => {
    expect(await httpProbe(get(server.port, '/hop'), 1000)).toEqual({ outcome: 'success', output: 'fine' });
    expect(await httpProbe(get(server.port, '/elsewhere'), 1000)).toEqual({
      outcome: 'warning',
      output: 'Probe terminated redirects, Response body: moved',
    });
  });

  it('a redirect loop stops after 10 redirects', async () => {
    const before = server.requests.length;
    expect(await httpProbe(get(server.port, '/loop'), 2000)).toEqual({
      outcome: 'failure',
      output: 'Get "/loop": stopped after 10 redirects',
    });
    expect(server.requests.length - before).toBe(10);
  });

  it('a 100 MB body: only 10 KiB is read, the status decides', async () => {
    const t0 = Date.now();
    const run = await httpProbe(get(server.port, '/huge'), 5000);
    expect(run.outcome).toBe('success');
    expect(run.output).toHaveLength(10 * 1024);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a server that never answers: the Go client timeout message', async () => {
    const run = await httpProbe(get(server.port, '/hang'), 300);
    expect(run).toEqual({
      outcome: 'failure',
      output: `Get "http://127.0.0.1:${server.port}/hang": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    });
  });

  it('aborting the signal ends a probe in flight at once, as its deadline would', async () => {
    const controller = new AbortController();
    const t0 = Date.now();
    const pending = httpProbe(get(server.port, '/hang'), 10_000, controller.signal);
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toEqual({
      outcome: 'failure',
      output: `Get "http://127.0.0.1:${server.port}/hang": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    // An aborted signal ends the next probe before it connects.
    expect((await tcpProbe('127.0.0.1', server.port, 10_000, controller.signal)).output).toBe(
      `dial tcp 127.0.0.1:${server.port}: operation was canceled`,
    );
  });

  it('nobody listening: the dial error, as Go prints it', async () => {
    const port = await freePort();
    expect(await httpProbe(get(port, ''), 1000)).toEqual({
      outcome: 'failure',
      output: `Get "http://127.0.0.1:${port}": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    });
  });

  it('HTTPS with an unverifiable certificate succeeds (TLS verification off)', async () => {
    const tls = await startHttpServer((_req, res) => res.end('secure'), { tls: true });
    try {
      expect(await httpProbe(get(tls.port, '/', { scheme: 'HTTPS' }), 1000)).toEqual({
        outcome: 'success',
        output: 'secure',
      });
    } finally {
      await tls.close();
    }
  });

  it('named ports resolve from the container; a missing name or port 0 is a probe error', () => {
    const c: V1Container = { name: 'c', ports: [{ name: 'http', containerPort: 8080 }] };
    expect(get('http', '/', {}, c).url).toBe('http://127.0.0.1:8080/');
    expect(resolveContainerPort('9090', c)).toBe(9090);
    expect(() => resolveContainerPort('nope', c)).toThrow('strconv.Atoi: parsing "nope": invalid syntax');
    expect(() => resolveContainerPort(0, c)).toThrow('invalid port number: 0');
    expect(() => resolveContainerPort(70000, c)).toThrow('invalid port number: 70000');
    expect(() => resolveContainerPort(undefined, c)).toThrow('invalid port number: 0');
  });
});

describe('tcpSocket', () => {
  it('connects and closes; nobody listening is the dial error', async () => {
    const server = await startHttpServer((_q, r) => r.end());
    try {
      expect(await tcpProbe('127.0.0.1', server.port, 1000)).toEqual({ outcome: 'success', output: '' });
    } finally {
      await server.close();
    }
    const port = await freePort();
    expect(await tcpProbe('127.0.0.1', port, 1000)).toEqual({
      outcome: 'failure',
      output: `dial tcp 127.0.0.1:${port}: connect: connection refused`,
    });
  });
});

describe('grpc', () => {
  let health: HealthServer;
  beforeAll(async () => {
    health = await startHealthServer();
    health.statuses.set('down', 2);
  });
  afterAll(async () => {
    await health.close();
  });

  it("SERVING is success with kube-probe as user agent; NOT_SERVING is upstream's failure", async () => {
    expect(await grpcProbe('127.0.0.1', health.port, '', 1000, DEFAULT_USER_AGENT)).toEqual({
      outcome: 'success',
      output: 'service healthy',
    });
    expect(health.userAgents[0]).toMatch(/^kube-probe\/1\.36/);
    expect(await grpcProbe('127.0.0.1', health.port, 'down', 1000, DEFAULT_USER_AGENT)).toEqual({
      outcome: 'failure',
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
  });

  it('an error status, a server without the health service, and nobody listening', async () => {
    expect(await grpcProbe('127.0.0.1', health.port, 'nope', 1000, DEFAULT_USER_AGENT)).toEqual({
      outcome: 'failure',
      output: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service',
    });
    const bare = await startHealthServer({ withHealth: false });
    try {
      const run = await grpcProbe('127.0.0.1', bare.port, '', 1000, DEFAULT_USER_AGENT);
      expect(run.outcome).toBe('failure');
      expect(run.output).toMatch(
        /^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): /,
      );
    } finally {
      await bare.close();
    }
    const port = await freePort();
    expect(await grpcProbe('127.0.0.1', port, '', 500, DEFAULT_USER_AGENT)).toEqual({
      outcome: 'failure',
      output: `timeout: failed to connect service "127.0.0.1:${port}" within 500ms: context deadline exceeded`,
    });
  });
});

describe('a shared signal', () => {
  it('probes leave no listener on the signal they are given (a worker passes the same one to every run)', async () => {
    const http = await startHttpServer((_req, res) => res.end('ok'));
    const health = await startHealthServer();
    const controller = new AbortController();
    const { signal } = controller;
    try {
      for (let i = 0; i < 12; i++) {
        expect((await httpProbe(get(http.port, '/'), 1000, signal)).outcome).toBe('success');
        expect((await tcpProbe('127.0.0.1', http.port, 1000, signal)).outcome).toBe('success');
        expect(
          (await grpcProbe('127.0.0.1', health.port, '', 1000, DEFAULT_USER_AGENT, signal)).outcome,
        ).toBe('success');
      }
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    } finally {
      await http.close();
      await health.close();
    }
  });
});

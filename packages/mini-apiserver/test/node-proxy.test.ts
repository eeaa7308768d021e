// nodes/{name}/proxy/{path} as kube-apiserver serves it (node REST ProxyREST + the node
// strategy's ResourceLocation): forwarded to the node's kubelet endpoint over HTTPS with the
// API server's kubelet client certificate, method, path, query and body kept, the caller's
// Authorization dropped, the kubelet's status, headers and body passed back; a port other
// than the kubelet's reached with the requested scheme; an unknown node 404, a bad name 400,
// an unreachable backend upstream's "error trying to reach service" Status; and RBAC on
// nodes/proxy with the method's verb.
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSelfSignedTls, issueClientCertificate, type MiniApiServer } from '../src/index.js';
import { parseNodeProxyPath, splitSchemeNamePort } from '../src/node-proxy.js';
import { start } from './helpers.js';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  clientCn: string | undefined;
  body: string;
}

function record(req: IncomingMessage, seen: Seen[], onBody: (s: Seen) => void): void {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    const peer = (req.socket as TLSSocket).getPeerCertificate?.();
    const s: Seen = {
      method: req.method ?? '',
      url: req.url ?? '',
      authorization: req.headers.authorization,
      clientCn: peer && 'subject' in peer ? (peer.subject?.CN as string | undefined) : undefined,
      body,
    };
    seen.push(s);
    onBody(s);
  });
}

describe('nodes/{name}/proxy', () => {
  let server: MiniApiServer;
  let kubelet: HttpsServer;
  let plain: Server;
  const seen: Seen[] = [];

  beforeEach(async () => {
    seen.length = 0;
    const ca = await createSelfSignedTls({ hosts: ['127.0.0.1'] });
    const client = await issueClientCertificate(ca, { commonName: 'kube-apiserver-kubelet-client' });
    kubelet = createServer(
      { cert: ca.cert, key: ca.key, ca: ca.ca, requestCert: true, rejectUnauthorized: false },
      (req, res) =>
        record(req, seen, (s) => {
          if (s.url.startsWith('/missing')) {
            res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
            return;
          }
          res
            .writeHead(200, {
              'Content-Type': 'text/plain; version=0.0.4; charset=utf-8',
              'X-Kubelet': 'yes',
            })
            .end(`${s.method} ${s.url} ${s.body}`);
        }),
    );
    plain = createHttpServer((req, res) => record(req, seen, (s) => res.end(`plain ${s.url}`)));
    await new Promise<void>((r) => kubelet.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    server = await start({
      kubeletClient: { cert: client.cert, key: client.key },
      authorization: 'RBAC',
      tokens: [
        { token: 'admin', user: 'root', groups: ['system:masters'] },
        { token: 'alice', user: 'alice' },
      ],
    });
    server.store.create('nodes', {
      metadata: { name: 'n1' },
      status: {
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
        daemonEndpoints: { kubeletEndpoint: { Port: (kubelet.address() as AddressInfo).port } },
      },
    });
    server.store.create('nodes', {
      metadata: { name: 'down' },
      status: {
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
        daemonEndpoints: { kubeletEndpoint: { Port: (plain.address() as AddressInfo).port } },
      },
    });
  });
  afterEach(async () => {
    await server.stop();
    await new Promise((r) => kubelet.close(r));
    await new Promise((r) => plain.close(r));
  });

  const as = async (token: string, path: string, init: RequestInit = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
    });
    return { code: res.status, body: await res.text(), headers: res.headers };
  };

  it('forwards to the kubelet with the client certificate, without the caller credentials', async () => {
    const r = await as('admin', '/api/v1/nodes/n1/proxy/metrics/probes?x=1&y=2');
    expect(r).toMatchObject({ code: 200, body: 'GET /metrics/probes?x=1&y=2 ' });
    expect(r.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(r.headers.get('x-kubelet')).toBe('yes');
    expect(seen[0]).toMatchObject({ authorization: undefined, clientCn: 'kube-apiserver-kubelet-client' });
    const post = await as('admin', '/api/v1/nodes/n1/proxy/stats/summary', { method: 'POST', body: 'hello' });
    expect(post.body).toBe('POST /stats/summary hello');
    // proxy without a path, and the https:name:<kubelet port> form, reach the kubelet too.
    expect((await as('admin', '/api/v1/nodes/n1/proxy')).body).toBe('GET / ');
    const port = (kubelet.address() as AddressInfo).port;
    expect((await as('admin', `/api/v1/nodes/https:n1:${port}/proxy/pods`)).body).toBe('GET /pods ');
  });

  it("passes the kubelet's refusals back as they are", async () => {
    expect(await as('admin', '/api/v1/nodes/n1/proxy/missing')).toMatchObject({
      code: 404,
      body: '404 page not found\n',
    });
  });

  it('reaches another port with the requested scheme (default http) and no client certificate', async () => {
    const port = (plain.address() as AddressInfo).port;
    expect((await as('admin', `/api/v1/nodes/n1:${port}/proxy/x`)).body).toBe('plain /x');
    expect((await as('admin', `/api/v1/nodes/http:n1:${port}/proxy/y`)).body).toBe('plain /y');
  });

  it('answers 404 for an unknown node, 400 for a bad name, 500 when the kubelet cannot be reached', async () => {
    const missing = await as('admin', '/api/v1/nodes/nope/proxy/metrics');
    expect(missing.code).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ reason: 'NotFound', message: 'nodes "nope" not found' });
    const bad = await as('admin', '/api/v1/nodes/ftp:n1:1:2/proxy/metrics');
    expect(bad.code).toBe(400);
    expect(JSON.parse(bad.body).message).toBe('invalid node request "ftp:n1:1:2"');
    // "down" points at the plain HTTP server: the TLS handshake fails.
    const down = await as('admin', '/api/v1/nodes/down/proxy/metrics');
    expect(down.code).toBe(500);
    expect(JSON.parse(down.body)).toMatchObject({ reason: '', code: 500 });
    expect(JSON.parse(down.body).message).toMatch(/^error trying to reach service: /);
  });

  it('is authorised as nodes/proxy with the verb of the method', async () => {
    const denied = await as('alice', '/api/v1/nodes/n1/proxy/metrics');
    expect(denied.code).toBe(403);
    expect(JSON.parse(denied.body).message).toBe(
      'nodes "n1" is forbidden: User "alice" cannot get resource "nodes/proxy" in API group "" at the cluster scope',
    );
    server.store.create('clusterroles', {
      metadata: { name: 'proxy-reader' },
      rules: [{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] }],
    });
    server.store.create('clusterrolebindings', {
      metadata: { name: 'alice-proxy' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'proxy-reader' },
      subjects: [{ kind: 'User', name: 'alice' }],
    });
    expect((await as('alice', '/api/v1/nodes/n1/proxy/metrics')).code).toBe(200);
    expect((await as('alice', '/api/v1/nodes/n1/proxy/metrics', { method: 'POST' })).code).toBe(403);
    expect(seen.map((s) => s.url)).toEqual(['/metrics']);
  });

  it('parses the path and the scheme:name:port forms as upstream', () => {
    expect(parseNodeProxyPath('/api/v1/nodes/n1/proxy/metrics/probes')).toEqual({
      id: 'n1',
      path: '/metrics/probes',
    });
    expect(parseNodeProxyPath('/api/v1/nodes/n1/proxy')).toEqual({ id: 'n1', path: '' });
    expect(parseNodeProxyPath('/api/v1/nodes/n1/status')).toBeUndefined();
    expect(splitSchemeNamePort('n1')).toEqual({ scheme: '', name: 'n1', port: '' });
    expect(splitSchemeNamePort('n1:10255')).toEqual({ scheme: '', name: 'n1', port: '10255' });
    expect(splitSchemeNamePort('https:n1:10250')).toEqual({ scheme: 'https', name: 'n1', port: '10250' });
    expect(splitSchemeNamePort('ftp:n1:1')).toBeUndefined();
    expect(splitSchemeNamePort('a:b:c:d')).toBeUndefined();
  });
});

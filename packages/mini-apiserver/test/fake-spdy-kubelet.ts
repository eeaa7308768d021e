/**
 * A kubelet that speaks only SPDY/3.1 (as the kubelet's streaming server behind
 * kube-apiserver's translator sees it), over TLS:
 * - `/exec/{ns}/{pod}/{container}?command=…` runs the command for real (`child_process`, no
 *   container): the `stdin` stream feeds its stdin, `stdout`/`stderr` carry its output, the
 *   `error` stream gets the v4 status (`Success` or `NonZeroExitCode` with the code), `resize`
 *   events are recorded; command `fail-internal` answers a non-exit Failure status, `blob N`
 *   writes N bytes from memory;
 * - `/portForward/{ns}/{pod}` (`portforward.k8s.io`): each `data` stream is connected to
 *   `127.0.0.1:<port header>` (the "pod" listener);
 * - container `refused` answers 404 with a Status, container `broken` 500 with plain text.
 * Every request is recorded (method, path, upgrade and protocol headers).
 */
import { spawn } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:https';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { SpdyConnection, type SpdyStream } from '@nodeagent/core';
import type { CertificateAndKey } from '../src/index.js';

/** One request the fake kubelet saw. */
export interface KubeletRequest {
  readonly method: string;
  readonly path: string;
  readonly upgrade: string;
  readonly protocols: string;
}

/** A running fake kubelet. */
export interface FakeSpdyKubelet {
  readonly port: number;
  readonly requests: KubeletRequest[];
  readonly resizes: string[];
  stop(): Promise<void>;
}

export async function startFakeSpdyKubelet(tls: CertificateAndKey): Promise<FakeSpdyKubelet> {
  const requests: KubeletRequest[] = [];
  const resizes: string[] = [];
  const sockets = new Set<Duplex>();
  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    requests.push(record(req));
    res.writeHead(400).end('Upgrade request required');
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    requests.push(record(req));
    const url = new URL(req.url ?? '/', 'https://kubelet');
    if (url.pathname.endsWith('/refused')) {
      const body = JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'pod does not exist',
        reason: 'NotFound',
        code: 404,
      });
      socket.end(
        `HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      return;
    }
    if (url.pathname.endsWith('/broken')) {
      socket.end('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 8\r\n\r\nno luck\n');
      return;
    }
    if (String(req.headers.upgrade).toLowerCase() !== 'spdy/3.1') {
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 9\r\n\r\nSPDY only');
      return;
    }
    const portForward = url.pathname.startsWith('/portForward/');
    const protocol = portForward ? 'portforward.k8s.io' : 'v4.channel.k8s.io';
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`,
    );
    if (portForward) servePortForward(socket, head);
    else serveExec(socket, head, url.searchParams, resizes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    requests,
    resizes,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function record(req: IncomingMessage): KubeletRequest {
  return {
    method: req.method ?? '',
    path: req.url ?? '',
    upgrade: String(req.headers.upgrade ?? ''),
    protocols: String(req.headers['x-stream-protocol-version'] ?? ''),
  };
}

function serveExec(socket: Duplex, head: Buffer, q: URLSearchParams, resizes: string[]): void {
  const expected = new Set(['error']);
  if (q.get('input') === '1') expected.add('stdin');
  if (q.get('output') === '1') expected.add('stdout');
  if (q.get('error') === '1' && q.get('tty') !== '1') expected.add('stderr');
  if (q.get('tty') === '1') expected.add('resize');
  const streams = new Map<string, SpdyStream>();
  let started = false;
  const conn = new SpdyConnection(socket, {
    server: true,
    head,
    onStream: (s) => {
      streams.set(s.headers.streamtype?.[0] ?? '', s);
      if (!started && [...expected].every((t) => streams.has(t))) {
        started = true;
        run();
      }
    },
  });
  const run = (): void => {
    const cmd = q.getAll('command');
    const errorStream = streams.get('error') as SpdyStream;
    errorStream.read(
      () => {},
      () => {},
    );
    const resize = streams.get('resize');
    resize?.read(
      (c) => resizes.push(c.toString()),
      () => {},
    );
    if (cmd[0] === 'blob') {
      // `blob <bytes>`: that many bytes on stdout from memory (benchmarks), then Success.
      const chunk = Buffer.alloc(64 * 1024, 120);
      const out = streams.get('stdout');
      for (let left = Number(cmd[1] ?? 0); left > 0; left -= chunk.length) {
        out?.write(left >= chunk.length ? chunk : chunk.subarray(0, left));
      }
      out?.end();
      errorStream.write(Buffer.from(JSON.stringify({ metadata: {}, status: 'Success' })));
      errorStream.end();
      conn.close();
      return;
    }
    if (cmd[0] === 'fail-internal') {
      errorStream.write(
        Buffer.from(JSON.stringify({ metadata: {}, status: 'Failure', message: 'runtime broke' })),
      );
      errorStream.end();
      conn.close();
      return;
    }
    const child = spawn(cmd[0] ?? 'true', cmd.slice(1), { stdio: 'pipe' });
    const stdin = streams.get('stdin');
    if (stdin === undefined) child.stdin.end();
    else
      stdin.read(
        (c) => child.stdin.write(c),
        () => child.stdin.end(),
      );
    child.stdin.on('error', () => {});
    const out = streams.get('stdout');
    const err = streams.get('stderr');
    child.stdout.on('data', (c: Buffer) => out?.write(c));
    child.stderr.on('data', (c: Buffer) => (err ?? out)?.write(c));
    child.on('close', (code) => {
      out?.end();
      err?.end();
      const status =
        code === 0
          ? { metadata: {}, status: 'Success' }
          : {
              metadata: {},
              status: 'Failure',
              message: `command terminated with non-zero exit code: exit status ${code}`,
              reason: 'NonZeroExitCode',
              details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
            };
      errorStream.write(Buffer.from(JSON.stringify(status)));
      errorStream.end();
      conn.close();
    });
  };
}

function servePortForward(socket: Duplex, head: Buffer): void {
  new SpdyConnection(socket, {
    server: true,
    head,
    onStream: (s) => {
      const type = s.headers.streamtype?.[0];
      if (type === 'error') {
        s.read(
          () => {},
          () => {},
        );
        return;
      }
      if (type !== 'data') return;
      const port = Number(s.headers.port?.[0] ?? 0);
      const tcp: Socket = connect(port, '127.0.0.1');
      tcp.on('error', () => s.reset());
      s.read(
        (c) => tcp.write(c),
        () => tcp.end(),
      );
      tcp.on('data', (c: Buffer) => s.write(c));
      tcp.on('end', () => s.end());
    },
  });
}

/**
 * The embedded runtime's containers listen for real: while a container runs, each of its
 * declared TCP `containerPort`s (the `io.kubernetes.container.ports` annotation the kubelet
 * writes) is a socket on the pod IP — a loopback address — so probes and clients reach it as
 * they reach a real pod. One socket answers whatever speaks to it:
 *
 * - a TCP connection is accepted (`tcpSocket` probes);
 * - HTTP/1.1 serves the container's files as busybox `httpd -h DIR` would: `GET /P` is
 *   `200` while the container's script has created `DIR/P` (`DIR` from its `httpd -h`, else
 *   `/`), `404 Not Found` otherwise, so `touch` / `rm` in the script flip a health endpoint;
 * - gRPC over HTTP/2 (prior knowledge, as probes speak it) implements
 *   `grpc.health.v1.Health/Check`: `SERVING` while the file `/tmp/grpc-serving` exists (for a
 *   named service `S`: `/tmp/grpc-serving.S`), `NOT_SERVING` otherwise; other methods answer
 *   `UNIMPLEMENTED`.
 *
 * Sockets open on the container's start event and close (connections included) on its stop.
 *
 * @module
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type ServerHttp2Stream } from 'node:http2';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { posix } from 'node:path';
import type { Logger } from '@nodeagent/core';
import { type ContainerEventResponse, ContainerEventType } from '@nodeagent/cri';
import type { FakeRuntime } from '@nodeagent/cri/testing';
import { CONTAINER_PORTS_ANNOTATION, KUBERNETES_POD_NAME_LABEL } from '@nodeagent/kubecontainer';

/** What {@link EmbeddedContainerPorts} needs. */
export interface EmbeddedContainerPortsDeps {
  /** The runtime whose containers listen. */
  readonly runtime: FakeRuntime;
  /** The files container `id` has now (its script played so far). */
  readonly files: (containerId: string) => ReadonlySet<string>;
  /** The HTTP document root of container `id`. */
  readonly docroot: (containerId: string) => string;
  /** Ports that cannot listen are logged here. */
  readonly logger: Logger;
}

/** The file whose existence makes the health of `service` SERVING. */
export function grpcServingFile(service: string): string {
  return service === '' ? '/tmp/grpc-serving' : `/tmp/grpc-serving.${service}`;
}

interface OpenContainer {
  readonly servers: Server[];
  readonly sockets: Set<Socket>;
}

/** Opens and closes the declared ports of the runtime's containers as they start and stop. */
export class EmbeddedContainerPorts {
  readonly #deps: EmbeddedContainerPortsDeps;
  readonly #open = new Map<string, OpenContainer>();
  #unsubscribe: (() => void) | undefined;

  constructor(deps: EmbeddedContainerPortsDeps) {
    this.#deps = deps;
  }

  /** Follows the runtime's container events from now on. */
  start(): void {
    this.#unsubscribe ??= this.#deps.runtime.onContainerEvent((event) => {
      try {
        this.#onEvent(event);
      } catch (error) {
        this.#deps.logger.warn({ err: error, containerId: event.containerId }, 'Embedded container ports');
      }
    });
  }

  /** Stops following events and closes every open port and connection. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    await Promise.all([...this.#open.keys()].map((id) => this.#close(id)));
  }

  /** The `ip:port` addresses container `id` listens on (tests and logs). */
  addresses(containerId: string): string[] {
    return (this.#open.get(containerId)?.servers ?? []).flatMap((s) => {
      const a = s.address();
      return a !== null && typeof a === 'object' ? [`${a.address}:${a.port}`] : [];
    });
  }

  #onEvent(event: ContainerEventResponse): void {
    const id = event.containerId;
    if (event.containerEventType === ContainerEventType.CONTAINER_STARTED_EVENT) {
      const status = event.containersStatuses.find((c) => c.id === id);
      const ip = event.podSandboxStatus?.network?.ip ?? '';
      if (status === undefined || ip === '') return; // a sandbox, or host network
      const ports = declaredTcpPorts(status.annotations[CONTAINER_PORTS_ANNOTATION]);
      if (ports.length > 0) this.#listen(id, status.labels[KUBERNETES_POD_NAME_LABEL] ?? '', ip, ports);
    } else if (
      event.containerEventType === ContainerEventType.CONTAINER_STOPPED_EVENT ||
      event.containerEventType === ContainerEventType.CONTAINER_DELETED_EVENT
    ) {
      void this.#close(id);
    }
  }

  #listen(id: string, podName: string, ip: string, ports: readonly number[]): void {
    if (this.#open.has(id)) return;
    const open: OpenContainer = { servers: [], sockets: new Set() };
    this.#open.set(id, open);
    const http1 = createHttpServer((req, res) => this.#serveHttp(id, req, res));
    const http2 = createHttp2Server();
    http2.on('stream', (stream, headers) => this.#serveGrpc(id, stream, String(headers[':path'] ?? '')));
    http2.on('sessionError', () => {});
    for (const port of ports) {
      const server = createNetServer((socket) => {
        open.sockets.add(socket);
        socket.on('close', () => open.sockets.delete(socket));
        socket.on('error', () => {});
        socket.once('data', (chunk: Buffer) => {
          socket.pause();
          socket.unshift(chunk);
          const h2 = chunk.subarray(0, 3).toString('latin1') === 'PRI';
          (h2 ? http2 : http1).emit('connection', socket);
          process.nextTick(() => socket.resume());
        });
      });
      server.on('error', (error: NodeJS.ErrnoException) => {
        const fields = { err: error, pod: podName, containerId: id, address: `${ip}:${port}` };
        // Outside 127.0.0.0/8 the address is not local: expected, and warned about once at start.
        if (error.code === 'EADDRNOTAVAIL')
          this.#deps.logger.debug(fields, 'Embedded container port cannot listen');
        else this.#deps.logger.warn(fields, 'Embedded container port cannot listen');
      });
      server.listen(port, ip);
      open.servers.push(server);
    }
  }

  async #close(id: string): Promise<void> {
    const open = this.#open.get(id);
    if (open === undefined) return;
    this.#open.delete(id);
    for (const socket of open.sockets) socket.destroy();
    await Promise.all(
      open.servers.map(
        (s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve())),
      ),
    );
  }

  #serveHttp(id: string, req: IncomingMessage, res: ServerResponse): void {
    let path: string;
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', 'http://container').pathname);
    } catch {
      path = '';
    }
    const file = posix.join(this.#deps.docroot(id), path);
    const found = path !== '' && this.#deps.files(id).has(file);
    res.writeHead(found ? 200 : 404, { 'Content-Type': 'text/plain' });
    res.end(found ? '' : '404 Not Found\n');
  }

  #serveGrpc(id: string, stream: ServerHttp2Stream, path: string): void {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', () => {});
    stream.on('end', () => {
      let code = 0;
      let message = '';
      let reply: Buffer | undefined;
      if (path !== '/grpc.health.v1.Health/Check') {
        code = 12; // UNIMPLEMENTED
        message = `unknown method ${path}`;
      } else {
        const service = decodeHealthCheckService(Buffer.concat(chunks));
        const serving = this.#deps.files(id).has(grpcServingFile(service));
        reply = grpcFrame(Buffer.from([0x08, serving ? 1 : 2])); // HealthCheckResponse{status}
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () =>
        stream.sendTrailers({ 'grpc-status': String(code), 'grpc-message': encodeURIComponent(message) }),
      );
      stream.end(reply);
    });
  }
}

/** The TCP `containerPort`s of a Go-JSON ports annotation (invalid JSON: none). */
export function declaredTcpPorts(annotation: string | undefined): number[] {
  if (annotation === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(annotation);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const ports = new Set<number>();
  for (const p of parsed as { containerPort?: unknown; protocol?: unknown }[]) {
    const port = p?.containerPort;
    const tcp = p?.protocol === undefined || p.protocol === 'TCP';
    if (tcp && typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65536)
      ports.add(port);
  }
  return [...ports];
}

function grpcFrame(message: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

/** The `service` (field 1) of a framed `HealthCheckRequest`; `''` when absent or unreadable. */
function decodeHealthCheckService(body: Buffer): string {
  if (body.length < 5) return '';
  const message = body.subarray(5, 5 + body.readUInt32BE(1));
  let i = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; i < message.length; shift += 7) {
      const byte = message[i++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
    return -1;
  };
  while (i < message.length) {
    const key = varint();
    if (key < 0) return '';
    const wire = key & 7;
    if (wire === 0) varint();
    else if (wire === 2) {
      const length = varint();
      if (length < 0) return '';
      if (key >>> 3 === 1) return message.subarray(i, i + length).toString('utf8');
      i += length;
    } else return '';
  }
  return '';
}

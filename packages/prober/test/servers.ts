// Local servers on loopback for the probe tests: a scripted HTTP(S) server and a
// grpc.health.v1 server built from the health.proto in @nodeagent/cri (through proto-loader,
// so the hand-written client codec is checked against protobufjs).
import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)));

export interface HttpTestServer {
  readonly port: number;
  readonly requests: IncomingMessage[];
  close(): Promise<void>;
}

export async function startHttpServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  opts: { tls?: boolean; host?: string; port?: number } = {},
): Promise<HttpTestServer> {
  const requests: IncomingMessage[] = [];
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    requests.push(req);
    handler(req, res);
  };
  const server: Server = opts.tls
    ? createHttpsServer({ key: fixture('localhost-key.pem'), cert: fixture('localhost-cert.pem') }, onRequest)
    : createHttpServer(onRequest);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;
  return {
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nobody listens on (bound, then released). */
export { freePort } from '@nodeagent/test-support/free-port';

export interface HealthServer {
  readonly port: number;
  /** Serving status by service name (numbers of HealthCheckResponse.ServingStatus). */
  readonly statuses: Map<string, number>;
  readonly userAgents: string[];
  close(): Promise<void>;
}

const HEALTH_PROTO = fileURLToPath(new URL('../../cri/proto/grpc/health/v1/health.proto', import.meta.url));

export async function startHealthServer(
  opts: { withHealth?: boolean; host?: string; port?: number } = {},
): Promise<HealthServer> {
  const statuses = new Map<string, number>([['', 1]]);
  const userAgents: string[] = [];
  const server = new grpc.Server();
  if (opts.withHealth !== false) {
    const def = protoLoader.loadSync(HEALTH_PROTO, { enums: Number, defaults: true });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      grpc: { health: { v1: { Health: { service: grpc.ServiceDefinition } } } };
    };
    server.addService(pkg.grpc.health.v1.Health.service, {
      Check: (call: grpc.ServerUnaryCall<{ service: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        userAgents.push(String(call.metadata.get('user-agent')[0] ?? ''));
        const status = statuses.get(call.request.service);
        if (status === undefined) cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
        else cb(null, { status });
      },
      Watch: (call: grpc.ServerWritableStream<unknown, unknown>) => call.end(),
    });
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${opts.host ?? '127.0.0.1'}:${opts.port ?? 0}`,
      grpc.ServerCredentials.createInsecure(),
      (e, p) => (e ? reject(e) : resolve(p)),
    ),
  );
  return {
    port,
    statuses,
    userAgents,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

// A small real gRPC server for the client tests: a handful of RuntimeService / ImageService
// RPCs over a unix socket, implemented inline (the full fake runtime lives in src/fake).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import {
  type ImageServiceServer,
  ImageServiceService,
  type RuntimeServiceServer,
  RuntimeServiceService,
} from '../src/gen/runtime/v1/api.js';

export interface MinimalServerOptions {
  readonly runtime?: Partial<RuntimeServiceServer>;
  readonly image?: Partial<ImageServiceServer>;
}

export interface MinimalServer {
  readonly endpoint: string;
  readonly socketPath: string;
  stop(): Promise<void>;
}

/** A temp dir for sockets; removed by the returned cleanup. */
export function tempSocketDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'cri-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts a server on `socketPath` implementing the given handlers (others: UNIMPLEMENTED). */
export async function startMinimalServer(
  socketPath: string,
  options: MinimalServerOptions,
): Promise<MinimalServer> {
  const server = new Server();
  server.addService(RuntimeServiceService, (options.runtime ?? {}) as UntypedServiceImplementation);
  server.addService(ImageServiceService, (options.image ?? {}) as UntypedServiceImplementation);
  const endpoint = `unix://${socketPath}`;
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(endpoint, ServerCredentials.createInsecure(), (error) =>
      error ? reject(error) : resolve(),
    );
  });
  return {
    endpoint,
    socketPath,
    stop: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

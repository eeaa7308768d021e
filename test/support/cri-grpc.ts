/**
 * A bare-bones CRI gRPC client for test helpers and smoke tests, built on @grpc/grpc-js and
 * @grpc/proto-loader from the project's vendored `api.proto`. Messages are plain objects with the
 * proto's own snake_case field names, enums as strings and int64 as strings.
 *
 * (The real, typed client is `@nodeagent/cri`; this one exists so the sandbox does not depend on it.)
 *
 * @example
 * ```ts
 * const cri = await connectCri(sandbox.criEndpoint);
 * const v = await cri.runtime<{ runtime_name: string }>('Version', {});
 * cri.close();
 * ```
 * @module
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client, ServiceError } from '@grpc/grpc-js';

/** Absolute path of the CRI `api.proto` vendored by `@nodeagent/cri`. */
export const CRI_PROTO_PATH = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../packages/cri/proto/runtime/v1/api.proto',
);

/** Whether {@link CRI_PROTO_PATH} exists. */
export function criProtoAvailable(protoPath = CRI_PROTO_PATH): boolean {
  return existsSync(protoPath);
}

/** A decoded CRI message: proto field names (snake_case), enums as names, int64 as strings. */
export type CriMessage = Record<string, unknown>;

/** Unary CRI calls against one endpoint. */
export interface CriClient {
  /** Call `runtime.v1.RuntimeService/<method>` (e.g. `'Version'`, `'RunPodSandbox'`). */
  runtime<T = CriMessage>(method: string, request?: object, opts?: CriCallOptions): Promise<T>;
  /** Call `runtime.v1.ImageService/<method>` (e.g. `'ListImages'`). */
  image<T = CriMessage>(method: string, request?: object, opts?: CriCallOptions): Promise<T>;
  /** Close both channels. */
  close(): void;
}

/** Per-call options. */
export interface CriCallOptions {
  /** Deadline of the call in milliseconds. @default 30000 */
  readonly timeoutMs?: number;
}

/** A failed CRI call, carrying the gRPC status code. */
export class CriCallError extends Error {
  override readonly name = 'CriCallError';
  constructor(
    readonly method: string,
    readonly code: number | undefined,
    details: string,
  ) {
    super(`CRI ${method} failed (gRPC code ${code}): ${details}`);
  }
}

/** Thrown when the proto file is not there. */
export class CriProtoMissingError extends Error {
  override readonly name = 'CriProtoMissingError';
  constructor(readonly protoPath: string) {
    super(`CRI proto not found at ${protoPath}`);
  }
}

type UnaryMethod = (
  req: object,
  meta: unknown,
  opts: { deadline: Date },
  cb: (err: ServiceError | null, res: unknown) => void,
) => void;

/**
 * Connect to a CRI endpoint such as `unix:///tmp/x/containerd.sock`. Loads the proto (≈50 ms);
 * does not wait for the server — the first call does.
 */
export async function connectCri(endpoint: string, opts: { protoPath?: string } = {}): Promise<CriClient> {
  const protoPath = opts.protoPath ?? CRI_PROTO_PATH;
  if (!criProtoAvailable(protoPath)) throw new CriProtoMissingError(protoPath);
  const grpc = await import('@grpc/grpc-js');
  const loader = await import('@grpc/proto-loader');
  const def = await loader.load(protoPath, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    runtime: { v1: Record<string, new (target: string, creds: unknown, options: object) => Client> };
  };
  const ServiceCtor = (name: string) => {
    const ctor = pkg.runtime.v1[name];
    if (!ctor) throw new CriProtoMissingError(`${protoPath} (service runtime.v1.${name})`);
    return ctor;
  };
  const channelOptions = {
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    'grpc.max_send_message_length': 16 * 1024 * 1024,
  };
  const creds = grpc.credentials.createInsecure();
  const runtime = new (ServiceCtor('RuntimeService'))(endpoint, creds, channelOptions);
  const image = new (ServiceCtor('ImageService'))(endpoint, creds, channelOptions);
  const call =
    (client: Client, service: string) =>
    <T>(method: string, request: object = {}, callOpts: CriCallOptions = {}): Promise<T> =>
      new Promise((resolvePromise, reject) => {
        const fn = (client as unknown as Record<string, UnaryMethod | undefined>)[method];
        if (typeof fn !== 'function') {
          reject(new CriCallError(`${service}/${method}`, undefined, 'no such method in the proto'));
          return;
        }
        const deadline = new Date(Date.now() + (callOpts.timeoutMs ?? 30_000));
        fn.call(client, request, new grpc.Metadata(), { deadline }, (err, res) => {
          if (err) reject(new CriCallError(`${service}/${method}`, err.code, err.details || err.message));
          else resolvePromise(res as T);
        });
      });
  return {
    runtime: call(runtime, 'RuntimeService'),
    image: call(image, 'ImageService'),
    close() {
      runtime.close();
      image.close();
    },
  };
}

/**
 * The two call shapes every CRI method is built from: a unary call as a promise and a
 * server stream as an async iterable, both with deadlines, AbortSignal and error mapping.
 *
 * @module
 */
import type { BinaryReader } from '@bufbuild/protobuf/wire';
import { type Client, Metadata, type ServiceError } from '@grpc/grpc-js';
import { abortReason } from '@nodeagent/core';
import type { CallOptions } from './call-options.js';
import { CriError } from './errors.js';
import { type CallRecorder, operationType } from './metrics.js';
import { CriWireReader } from './wire-reader.js';

/** How one RPC is called (one row of the generated method tables). */
export interface MethodSpec {
  /** RPC name, e.g. `ListContainers`. */
  readonly rpc: string;
  /** unary, finite list stream, or open-ended watch stream. */
  readonly kind: 'unary' | 'stream' | 'watch';
  /** The ts-proto service definition entry. */
  readonly definition: {
    readonly path: string;
    requestSerialize(value: never): Buffer;
  };
  /** The ts-proto request message functions. */
  readonly request: { fromPartial(object: never): unknown };
  /** The ts-proto response message functions (decoded with a {@link CriWireReader}). */
  readonly response: { decode(input: BinaryReader): unknown };
}

/** What the call functions share with their client. */
export interface CallContext {
  /** The grpc-js client (one channel for both services). */
  readonly channel: Client;
  /** Default deadline, ms. */
  readonly timeoutMs: number;
  /** Metrics sink, if any. */
  readonly recorder: CallRecorder | undefined;
  /** True once the client is closed. */
  isClosed(): boolean;
  /** Calls in flight, cancelled by `close()`. */
  readonly inFlight: Set<{ cancel(): void }>;
}

function deadlineOf(timeoutMs: number | undefined): number {
  return timeoutMs === undefined || !Number.isFinite(timeoutMs)
    ? Number.POSITIVE_INFINITY
    : Date.now() + timeoutMs;
}

function rpcLabel(spec: MethodSpec): string {
  // '/runtime.v1.RuntimeService/Version' → 'RuntimeService/Version'
  return spec.definition.path.slice(spec.definition.path.lastIndexOf('.') + 1);
}

function closedError(rpc: string): CriError {
  return new CriError(rpc, 'CANCELLED', 'the CRI client is closed');
}

function abortedError(rpc: string, signal: AbortSignal): CriError {
  return new CriError(rpc, 'CANCELLED', 'aborted by the caller', { cause: abortReason(signal) });
}

function record(ctx: CallContext, spec: MethodSpec, startMs: number, failed: boolean): void {
  ctx.recorder?.record(operationType(spec.rpc), (performance.now() - startMs) / 1000, failed);
}

/** Makes a unary call; resolves with the decoded response or rejects with a {@link CriError}. */
export function unaryCall(
  ctx: CallContext,
  spec: MethodSpec,
  partial: unknown,
  options: CallOptions | undefined,
): Promise<unknown> {
  const rpc = rpcLabel(spec);
  const signal = options?.signal;
  if (ctx.isClosed()) return Promise.reject(closedError(rpc));
  if (signal?.aborted) return Promise.reject(abortedError(rpc, signal));
  const request = spec.request.fromPartial((partial ?? {}) as never);
  const deadline = deadlineOf(options?.timeoutMs ?? ctx.timeoutMs);
  const startMs = performance.now();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => call.cancel();
    const call = ctx.channel.makeUnaryRequest(
      spec.definition.path,
      (value: unknown) => spec.definition.requestSerialize(value as never),
      (bytes: Buffer) => spec.response.decode(new CriWireReader(bytes)),
      request,
      new Metadata(),
      { deadline },
      (error: ServiceError | null, response?: unknown) => {
        signal?.removeEventListener('abort', onAbort);
        ctx.inFlight.delete(call);
        record(ctx, spec, startMs, error !== null);
        if (error === null) resolve(response);
        else if (signal?.aborted) reject(abortedError(rpc, signal));
        else if (ctx.isClosed()) reject(closedError(rpc));
        else reject(CriError.fromServiceError(rpc, error));
      },
    );
    ctx.inFlight.add(call);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Makes a server-streaming call. Iteration ends when the server closes the stream, when
 * `options.signal` aborts (without an error), or when the consumer stops iterating (the call
 * is cancelled); any other failure throws a {@link CriError}.
 */
export async function* streamCall(
  ctx: CallContext,
  spec: MethodSpec,
  partial: unknown,
  options: CallOptions | undefined,
): AsyncGenerator<unknown, void, undefined> {
  const rpc = rpcLabel(spec);
  const signal = options?.signal;
  if (ctx.isClosed()) throw closedError(rpc);
  if (signal?.aborted) return;
  const request = spec.request.fromPartial((partial ?? {}) as never);
  const timeoutMs = options?.timeoutMs ?? (spec.kind === 'watch' ? undefined : ctx.timeoutMs);
  const startMs = performance.now();
  const call = ctx.channel.makeServerStreamRequest(
    spec.definition.path,
    (value: unknown) => spec.definition.requestSerialize(value as never),
    (bytes: Buffer) => spec.response.decode(new CriWireReader(bytes)),
    request,
    new Metadata(),
    { deadline: deadlineOf(timeoutMs) },
  );
  const onAbort = (): void => call.cancel();
  signal?.addEventListener('abort', onAbort, { once: true });
  ctx.inFlight.add(call);
  let failed = false;
  try {
    for await (const message of call) yield message as unknown;
  } catch (error) {
    if (signal?.aborted) return;
    failed = true;
    if (ctx.isClosed()) throw closedError(rpc);
    throw CriError.fromServiceError(rpc, error as ServiceError);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    ctx.inFlight.delete(call);
    call.cancel();
    record(ctx, spec, startMs, failed);
  }
}

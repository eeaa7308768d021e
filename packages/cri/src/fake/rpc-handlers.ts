/**
 * The glue between grpc-js handlers and the fake: every call is logged, delayed by
 * its injected latency, failed by its next injected error, and otherwise answered by
 * an implementation function; thrown errors become gRPC statuses.
 *
 * @module
 */
import {
  type handleServerStreamingCall,
  type handleUnaryCall,
  type ServerErrorResponse,
  type ServerWritableStream,
  status,
} from '@grpc/grpc-js';
import type { Clock } from '@nodeagent/core';
import { FakeRuntimeError } from './fake-error.js';
import type { FaultPlan } from './faults.js';

/** What every handler needs: the fault plan and the clock its latencies run on. */
export interface HandlerContext {
  readonly faults: FaultPlan;
  readonly clock: Clock;
}

/** Converts anything thrown by an implementation into the status the client receives. */
export function toServiceError(err: unknown): ServerErrorResponse {
  const code = err instanceof FakeRuntimeError ? err.code : status.UNKNOWN;
  const message = err instanceof Error ? err.message : String(err);
  return Object.assign(new Error(message), { code, details: message });
}

async function before(ctx: HandlerContext, method: string, request: unknown): Promise<void> {
  ctx.faults.record({ method, request, atMs: ctx.clock.now() });
  const delayMs = ctx.faults.latencyMs(method);
  if (delayMs > 0) await ctx.clock.sleep(delayMs);
  const injected = ctx.faults.popError(method);
  if (injected) throw injected;
}

/** A unary handler answering with `impl(request)`. */
export function unary<Req, Res>(
  ctx: HandlerContext,
  method: string,
  impl: (request: Req) => Res | Promise<Res>,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    void (async () => {
      try {
        await before(ctx, method, call.request);
        callback(null, await impl(call.request));
      } catch (err) {
        callback(toServiceError(err));
      }
    })();
  };
}

/** A server-streaming handler; `impl` writes to the call and ends it (or leaves it open). */
export function serverStream<Req, Res>(
  ctx: HandlerContext,
  method: string,
  impl: (call: ServerWritableStream<Req, Res>) => void | Promise<void>,
): handleServerStreamingCall<Req, Res> {
  return (call) => {
    void (async () => {
      try {
        await before(ctx, method, call.request);
        await impl(call);
      } catch (err) {
        call.emit('error', toServiceError(err));
      }
    })();
  };
}

/** A server stream that sends `items` in chunks of `chunkSize` (at least one item each) and ends. */
export function chunkedList<Req, Res, Item>(
  ctx: HandlerContext,
  method: string,
  list: (request: Req) => Item[],
  wrap: (chunk: Item[]) => Res,
  chunkSize: number,
): handleServerStreamingCall<Req, Res> {
  return serverStream<Req, Res>(ctx, method, (call) => {
    const items = list(call.request);
    for (let i = 0; i < items.length; i += chunkSize) call.write(wrap(items.slice(i, i + chunkSize)));
    call.end();
  });
}

/** A unary RPC the fake does not model: logged, then answered UNIMPLEMENTED. */
export function unimplementedUnary<Req, Res>(ctx: HandlerContext, method: string): handleUnaryCall<Req, Res> {
  return unary<Req, Res>(ctx, method, () => {
    throw new FakeRuntimeError(status.UNIMPLEMENTED, `the fake runtime does not implement ${method}`);
  });
}

/** A server-streaming RPC the fake does not model (or was told not to): answered UNIMPLEMENTED. */
export function unimplementedStream<Req, Res>(
  ctx: HandlerContext,
  method: string,
): handleServerStreamingCall<Req, Res> {
  return serverStream<Req, Res>(ctx, method, () => {
    throw new FakeRuntimeError(status.UNIMPLEMENTED, `the fake runtime does not implement ${method}`);
  });
}

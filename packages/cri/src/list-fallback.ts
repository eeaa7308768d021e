/**
 * CRIListStreaming (KEP-5825) fallback: runtimes before CRI v0.36 answer the `Stream*`
 * RPCs with UNIMPLEMENTED, so the client serves those streams from the unary lists.
 *
 * @module
 */
import type { CallOptions } from './call-options.js';
import { type CallContext, type MethodSpec, streamCall, unaryCall } from './calls.js';
import { isCancelled, isUnimplemented } from './errors.js';

/** A streaming list RPC and the unary list that returns the same items. */
export interface ListFallback {
  /** The unary list method. */
  readonly list: MethodSpec;
  /** Field of the list response holding the items. */
  readonly listField: string;
  /** Field of the stream response the items go into. */
  readonly streamField: string;
}

/**
 * The stream of `spec`, or — once the runtime answered UNIMPLEMENTED before sending anything
 * — one chunk built from the unary list. `unimplemented` remembers, per client, the RPCs the
 * runtime lacks so later calls go straight to the list.
 */
export async function* streamWithListFallback(
  ctx: CallContext,
  spec: MethodSpec,
  fallback: ListFallback,
  unimplemented: Set<string>,
  partial: unknown,
  options: CallOptions | undefined,
): AsyncGenerator<unknown, void, undefined> {
  if (!unimplemented.has(spec.rpc)) {
    let received = false;
    try {
      for await (const chunk of streamCall(ctx, spec, partial, options)) {
        received = true;
        yield chunk;
      }
      return;
    } catch (error) {
      if (received || !isUnimplemented(error)) throw error;
      unimplemented.add(spec.rpc);
    }
  }
  let response: unknown;
  try {
    response = await unaryCall(ctx, fallback.list, partial, options);
  } catch (error) {
    if (isCancelled(error) && options?.signal?.aborted) return;
    throw error;
  }
  const items = (response as Record<string, unknown>)[fallback.listField];
  if (Array.isArray(items) && items.length > 0) yield { [fallback.streamField]: items };
}

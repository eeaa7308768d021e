/**
 * Per-call options and the request shape accepted by every client method.
 *
 * @module
 */

/** Options of one CRI call. */
export interface CallOptions {
  /**
   * Deadline of the call in milliseconds, from when it is made. For server streams it covers
   * the whole stream. `Infinity` disables the deadline.
   * @default the client's `timeoutMs` (2 minutes) for unary calls and list streams; none for
   * `getContainerEvents`
   */
  readonly timeoutMs?: number;
  /**
   * Aborts the call: a unary call rejects with a `CriError` whose code is `CANCELLED` (its
   * `cause` is the signal's reason); a stream ends without an error.
   */
  readonly signal?: AbortSignal;
}

/**
 * A request message with every field optional, at any depth: omitted fields take their
 * protobuf defaults (`''`, `0`, `0n`, `false`, empty list or map, unset message).
 *
 * @example
 * ```ts
 * await cri.runtime.stopContainer({ containerId: id, timeout: 10n });
 * ```
 */
export type PartialMessage<T> = T extends bigint | number | string | boolean | Uint8Array | undefined
  ? T
  : T extends readonly (infer U)[]
    ? PartialMessage<U>[]
    : T extends object
      ? { [K in keyof T]?: PartialMessage<T[K]> | undefined }
      : T;

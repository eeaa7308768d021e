/**
 * The error type the fake runtime answers with, and the constructors for the
 * situations a real runtime reports (missing object, wrong state, bad request).
 *
 * @module
 */
import { status } from '@grpc/grpc-js';

/**
 * An error answered by the fake runtime: a gRPC status code and a message. Thrown by
 * the in-memory state and sent to the client as the call's status.
 *
 * @example
 * ```ts
 * fake.injectError('StartContainer', new FakeRuntimeError(status.UNAVAILABLE, 'runtime restarting'));
 * ```
 */
export class FakeRuntimeError extends Error {
  override readonly name = 'FakeRuntimeError';

  /**
   * @param code - the gRPC status code the call fails with.
   * @param message - the status details the client sees.
   */
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
  }
}

/** Thrown by the fake's constructor and setters for options that cannot work (a bad CIDR, say). */
export class FakeRuntimeConfigError extends Error {
  override readonly name = 'FakeRuntimeConfigError';
}

/** `NOT_FOUND`, worded like containerd's "an error occurred when try to find ...". */
export function notFound(kind: 'container' | 'sandbox' | 'image', id: string): FakeRuntimeError {
  return new FakeRuntimeError(
    status.NOT_FOUND,
    `an error occurred when try to find ${kind} "${id}": not found`,
  );
}

/** `FAILED_PRECONDITION`: the object exists but is in the wrong state for the call. */
export function wrongState(message: string): FakeRuntimeError {
  return new FakeRuntimeError(status.FAILED_PRECONDITION, message);
}

/** `INVALID_ARGUMENT`: the request misses a required field or has a malformed one. */
export function invalidArgument(message: string): FakeRuntimeError {
  return new FakeRuntimeError(status.INVALID_ARGUMENT, message);
}

/**
 * Typed errors of CRI calls: {@link CriError} carries the RPC, the gRPC status code by
 * name and the runtime's message; the `is*` helpers classify any thrown value.
 *
 * @module
 */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';

/** gRPC status codes by name, as the runtime reports them. */
export type CriErrorCode =
  | 'OK'
  | 'CANCELLED'
  | 'UNKNOWN'
  | 'INVALID_ARGUMENT'
  | 'DEADLINE_EXCEEDED'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'PERMISSION_DENIED'
  | 'RESOURCE_EXHAUSTED'
  | 'FAILED_PRECONDITION'
  | 'ABORTED'
  | 'OUT_OF_RANGE'
  | 'UNIMPLEMENTED'
  | 'INTERNAL'
  | 'UNAVAILABLE'
  | 'DATA_LOSS'
  | 'UNAUTHENTICATED';

const CODE_NAMES: readonly CriErrorCode[] = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/** The name of a numeric gRPC status code (`UNKNOWN` for codes outside the standard range). */
export function grpcCodeName(code: number): CriErrorCode {
  return CODE_NAMES[code] ?? 'UNKNOWN';
}

/** The numeric gRPC status code of a name. */
export function grpcCodeNumber(code: CriErrorCode): number {
  return GrpcStatus[code];
}

/** Options of {@link CriError}. */
export interface CriErrorOptions {
  /** The underlying error (a grpc-js `ServiceError`, or the abort reason). */
  readonly cause?: unknown;
}

/** A failed CRI call. */
export class CriError extends Error {
  /** Numeric gRPC status code. */
  readonly grpcCode: number;

  /**
   * @param rpc the RPC, e.g. `RuntimeService/ContainerStatus`.
   * @param code the gRPC status code by name.
   * @param details the runtime's error message (gRPC status details).
   * @param options the underlying error.
   */
  constructor(
    readonly rpc: string,
    readonly code: CriErrorCode,
    readonly details: string,
    options: CriErrorOptions = {},
  ) {
    super(`${rpc}: ${code}${details === '' ? '' : `: ${details}`}`, { cause: options.cause });
    this.name = 'CriError';
    this.grpcCode = grpcCodeNumber(code);
  }

  /** Wraps a grpc-js `ServiceError` of `rpc`. */
  static fromServiceError(rpc: string, error: ServiceError): CriError {
    return new CriError(rpc, grpcCodeName(error.code), error.details ?? error.message, { cause: error });
  }
}

/** True when `error` is a {@link CriError} with code `code`. */
export function hasCriCode(error: unknown, code: CriErrorCode): error is CriError {
  return error instanceof CriError && error.code === code;
}

/** True for NOT_FOUND: the sandbox, container or image does not exist. */
export function isNotFound(error: unknown): error is CriError {
  return hasCriCode(error, 'NOT_FOUND');
}

/** True for UNAVAILABLE: the runtime is down, restarting or not listening. */
export function isUnavailable(error: unknown): error is CriError {
  return hasCriCode(error, 'UNAVAILABLE');
}

/** True for UNIMPLEMENTED: the runtime does not offer this RPC (callers may fall back). */
export function isUnimplemented(error: unknown): error is CriError {
  return hasCriCode(error, 'UNIMPLEMENTED');
}

/** True for DEADLINE_EXCEEDED: the call ran past its `timeoutMs`. */
export function isDeadlineExceeded(error: unknown): error is CriError {
  return hasCriCode(error, 'DEADLINE_EXCEEDED');
}

/** True for CANCELLED: the call was aborted through its signal or the client was closed. */
export function isCancelled(error: unknown): error is CriError {
  return hasCriCode(error, 'CANCELLED');
}

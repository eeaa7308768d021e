/**
 * `Status` objects and the typed error that carries them, shaped as the real API server
 * writes them (`kind: Status`, `status: Failure`, `reason`, `details`, `code`).
 *
 * @module
 */
import { definedFields } from '@nodeagent/core';

/** One field-level cause inside a `Status` (e.g. for 422 Invalid). */
export interface StatusCause {
  /** Machine-readable reason, e.g. `FieldValueRequired`, `FieldValueInvalid`. */
  readonly reason: string;
  /** Human-readable message, e.g. `Required value`. */
  readonly message: string;
  /** JSONPath-like field, e.g. `spec.containers[0].image`. */
  readonly field?: string;
}

/** The `details` member of a `Status`. */
export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

/** A `meta.k8s.io/v1` `Status` object as sent on the wire. */
export interface StatusBody {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure' | 'Success';
  readonly message?: string;
  readonly reason?: string;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** An API error: an HTTP status code plus the `Status` body the server answers with. */
export class ApiStatusError extends Error {
  override readonly name = 'ApiStatusError';
  /** The HTTP status code (also `status.code`). */
  readonly code: number;
  /** The `Status` body. */
  readonly status: StatusBody;

  /** Wraps a `Status` body; `message` is taken from it. */
  constructor(status: StatusBody) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`);
    this.code = status.code;
    this.status = status;
  }
}

/** Builds a failure `Status` body. */
export function failureStatus(
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
): StatusBody {
  const body: { -readonly [K in keyof StatusBody]: StatusBody[K] } = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...definedFields({ details }),
    code,
  };
  return body;
}

/** Identifies the resource an error is about (`group` is `''` for the core group). */
export interface ResourceRef {
  readonly group: string;
  /** Plural resource name, e.g. `pods`. */
  readonly resource: string;
}

function qualified(ref: ResourceRef): string {
  return ref.group === '' ? ref.resource : `${ref.resource}.${ref.group}`;
}

function refDetails(ref: ResourceRef, name: string): StatusDetails {
  return ref.group === '' ? { name, kind: ref.resource } : { name, group: ref.group, kind: ref.resource };
}

/** 404 NotFound for one object: `pods "x" not found`. */
export function notFound(ref: ResourceRef, name: string): ApiStatusError {
  return new ApiStatusError(
    failureStatus(404, 'NotFound', `${qualified(ref)} "${name}" not found`, refDetails(ref, name)),
  );
}

/** 409 AlreadyExists: `pods "x" already exists`. */
export function alreadyExists(ref: ResourceRef, name: string): ApiStatusError {
  return new ApiStatusError(
    failureStatus(409, 'AlreadyExists', `${qualified(ref)} "${name}" already exists`, refDetails(ref, name)),
  );
}

/** 409 Conflict (stale resourceVersion or failed precondition). */
export function conflict(ref: ResourceRef, name: string, why: string): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualified(ref)} "${name}": ${why}`,
      refDetails(ref, name),
    ),
  );
}

/** The message the real server uses for an optimistic-concurrency failure. */
export const MODIFIED_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

/** 422 Invalid with field causes: `Pod "x" is invalid: spec.containers: Required value`. */
export function invalid(
  group: string,
  kind: string,
  name: string,
  causes: readonly StatusCause[],
): ApiStatusError {
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const joined = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  const qualifiedKind = group === '' ? kind : `${kind}.${group}`;
  const details: StatusDetails =
    group === '' ? { name, kind, causes: [...causes] } : { name, group, kind, causes: [...causes] };
  return new ApiStatusError(
    failureStatus(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${joined}`, details),
  );
}

/** 400 BadRequest. */
export function badRequest(message: string): ApiStatusError {
  return new ApiStatusError(failureStatus(400, 'BadRequest', message));
}

/** The message of a 410 for a continue token older than the history window. */
export const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** 410 Expired (`too old resource version: 5 (10)` for watches, or an expired continue token). */
export function expired(message: string): ApiStatusError {
  return new ApiStatusError(failureStatus(410, 'Expired', message));
}

/** 401 Unauthorized. */
export function unauthorized(message = 'Unauthorized'): ApiStatusError {
  return new ApiStatusError(failureStatus(401, 'Unauthorized', message));
}

/** 404 for a path the server does not serve. */
export function pathNotFound(): ApiStatusError {
  return new ApiStatusError(
    failureStatus(404, 'NotFound', 'the server could not find the requested resource', {}),
  );
}

/** 405 MethodNotAllowed. */
export function methodNotAllowed(): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
      {},
    ),
  );
}

/**
 * 415 UnsupportedMediaType, with kube-apiserver's message listing the accepted media types.
 */
export function unsupportedMediaType(accepted: readonly string[]): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    ),
  );
}

/**
 * 504 Timeout of a request that did not complete within the server's request timeout
 * (kube-apiserver's `--request-timeout`, `WithTimeoutForNonLongRunningRequests`).
 */
export function requestTimedOut(): ApiStatusError {
  return new ApiStatusError(
    failureStatus(
      504,
      'Timeout',
      'Timeout: request did not complete within requested timeout - context deadline exceeded',
      {},
    ),
  );
}

/** 504 Timeout for a resourceVersion newer than the server has seen. */
export function tooLargeResourceVersion(requested: number, current: number): ApiStatusError {
  return new ApiStatusError(
    failureStatus(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    }),
  );
}

/** 413 RequestEntityTooLarge, as kube-apiserver answers a body over its limit (3 MiB). */
export function requestEntityTooLarge(limitBytes: number): ApiStatusError {
  return new ApiStatusError(
    failureStatus(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limitBytes}`),
  );
}

/**
 * What kube-apiserver answers when etcd refuses a write over its request limit: a 500 with
 * etcd's message and no reason (the error is not mapped to a Status; kubernetes#112152).
 */
export function requestTooLarge(): ApiStatusError {
  return new ApiStatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'etcdserver: request is too large',
    code: 500,
  });
}

/**
 * 403 Forbidden as kube-apiserver's authorization filter answers: `pods is forbidden: …`,
 * `pods "web" is forbidden: …`, or `forbidden: …` for a non-resource path.
 */
export function forbidden(group: string, resource: string, name: string, message: string): ApiStatusError {
  const qualifiedResource = group === '' ? resource : `${resource}.${group}`;
  const text =
    resource === '' && group === ''
      ? `forbidden: ${message}`
      : name === ''
        ? `${qualifiedResource} is forbidden: ${message}`
        : `${qualifiedResource} ${JSON.stringify(name)} is forbidden: ${message}`;
  const details: StatusDetails = group === '' ? { name, kind: resource } : { name, group, kind: resource };
  return new ApiStatusError(failureStatus(403, 'Forbidden', text, details));
}

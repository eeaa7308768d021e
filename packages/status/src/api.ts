/**
 * The few API calls the status side makes (GET, POST, PUT, PATCH, DELETE of plain JSON objects
 * by path), as a small interface so any REST client — the reference agent's, a test double —
 * can be injected. Errors carry the HTTP status in a numeric `code` field.
 *
 * @module
 */

/** Patch content types: JSON merge patch or strategic merge patch. */
export type PatchKind = 'merge' | 'strategic';

/**
 * JSON over REST to the API server. Paths are absolute API paths (`/api/v1/nodes/n1`).
 * A failed call rejects with an error whose `code` is the HTTP status (see {@link apiErrorCode}).
 */
export interface StatusApi {
  /** GET `path`; resolves `undefined` on 404. */
  get<T>(path: string, signal?: AbortSignal): Promise<T | undefined>;
  /** POST `body` to the collection `path`. */
  create<T>(path: string, body: T, signal?: AbortSignal): Promise<T>;
  /** PUT `body` to `path` (its `metadata.resourceVersion` is the precondition). */
  replace<T>(path: string, body: T, signal?: AbortSignal): Promise<T>;
  /** PATCH `path` with a merge or strategic-merge patch. */
  patch<T>(path: string, kind: PatchKind, patch: unknown, signal?: AbortSignal): Promise<T>;
  /** DELETE `path` with DeleteOptions (`gracePeriodSeconds`, `preconditions`). */
  delete(path: string, options?: Record<string, unknown>, signal?: AbortSignal): Promise<unknown>;
}

/** The HTTP status of a failed API call (`err.code`, or `err.statusCode`), else `undefined`. */
export function apiErrorCode(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === 'number') return e.code;
  if (typeof e.statusCode === 'number') return e.statusCode;
  return undefined;
}

/** The message of anything thrown. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

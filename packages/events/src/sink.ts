/**
 * Where events go: a small {@link EventSink} contract (create an Event, patch an existing
 * one) and an adapter over any JSON REST client with `create` and `patch`, such as the
 * reference agent's `ApiClient` or {@link HttpJsonClient}.
 *
 * @module
 */
import type { CoreEvent } from './event.js';

/**
 * Stores events (upstream `record.EventSink`). An answer from the server must reject with an
 * error carrying the HTTP status as a numeric `code` (and the Status `reason` when there is
 * one), as {@link EventSinkError} does; any other rejection counts as a transport failure
 * and is retried.
 */
export interface EventSink {
  /** Creates `event` in its namespace; resolves with the stored Event. */
  create(event: CoreEvent, signal?: AbortSignal): Promise<CoreEvent | undefined>;
  /** Applies the strategic merge `patch` to the Event named by `event`; resolves with the stored Event. */
  patch(
    event: CoreEvent,
    patch: Readonly<Record<string, unknown>>,
    signal?: AbortSignal,
  ): Promise<CoreEvent | undefined>;
}

/** A non-2xx answer of the API server, with its HTTP status and the Status body's `reason`. */
export class EventSinkError extends Error {
  override readonly name = 'EventSinkError';
  /**
   * @param code HTTP status code.
   * @param reason the Status `reason` (`NotFound`, `AlreadyExists`, `Conflict`, …), or `''`.
   * @param message what the request was and what the server said.
   */
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** The HTTP status and Status reason of an error from a sink, or `undefined` for a transport failure. */
export function statusOf(error: unknown): { code: number; reason: string } | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, reason } = error as { code?: unknown; reason?: unknown };
  if (typeof code !== 'number') return undefined;
  return { code, reason: typeof reason === 'string' ? reason : '' };
}

/**
 * The two calls an event sink needs from a JSON REST client (paths are API paths such as
 * `/api/v1/namespaces/default/events`). The reference agent's `ApiClient` has this shape.
 */
export interface JsonApiClient {
  /** POSTs `body` to the collection `path`; rejects with a numeric `code` on a non-2xx answer. */
  create<T>(path: string, body: T, signal?: AbortSignal): Promise<T>;
  /** PATCHes `path` with a strategic merge patch; rejects with a numeric `code` on a non-2xx answer. */
  patch<T>(path: string, kind: 'strategic', patch: unknown, signal?: AbortSignal): Promise<T>;
}

function eventsPath(event: CoreEvent): string {
  const ns = event.metadata.namespace || 'default';
  return `/api/v1/namespaces/${encodeURIComponent(ns)}/events`;
}

/** An {@link EventSink} over a {@link JsonApiClient}: core/v1 Events in the event's namespace. */
export function apiClientEventSink(client: JsonApiClient): EventSink {
  return {
    create: (event, signal) =>
      client.create<CoreEvent>(eventsPath(event), { apiVersion: 'v1', kind: 'Event', ...event }, signal),
    patch: (event, patch, signal) =>
      client.patch<CoreEvent>(
        `${eventsPath(event)}/${encodeURIComponent(event.metadata.name ?? '')}`,
        'strategic',
        patch,
        signal,
      ),
  };
}

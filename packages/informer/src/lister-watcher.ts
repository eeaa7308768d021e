/**
 * The transport contract of the reflector: one list call and one watch call.
 *
 * @module
 */
import type { KubeObject, ListOptions, ObjectList, WatchEvent, WatchOptions } from './types.js';

/** Called whenever bytes arrive on a watch, so the reflector can detect stalled streams. */
export type ActivityCallback = () => void;

/**
 * Lists and watches one collection. Implementations reject with `StatusError` for API
 * errors (so 410 can be told apart), and the watch iterable throws `WatchDecodeError`
 * for a malformed line, `StatusError` for an in-stream `ERROR` event is left to the
 * caller (the event is yielded as is). Aborting `signal` ends the request.
 */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  /** Fetches one page (or the whole collection when `limit` is unset). */
  list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>>;
  /**
   * Opens a watch. The promise settles once the server answered (rejects on a non-200);
   * iteration ends when the server closes the stream cleanly and throws when the
   * connection breaks or a line is malformed.
   */
  watch(
    options: WatchOptions,
    signal: AbortSignal,
    onActivity?: ActivityCallback,
  ): Promise<AsyncIterable<WatchEvent<T>>>;
}

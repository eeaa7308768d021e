/**
 * A streaming decoder for the watch protocol: newline-delimited JSON events
 * (`{"type":"ADDED","object":{…}}`) that can arrive split across chunks, several to a
 * chunk, or with a multi-byte UTF-8 character cut in two.
 *
 * @module
 */
import { StringDecoder } from 'node:string_decoder';
import { WatchDecodeError } from './errors.js';
import type { WatchEvent, WatchEventType } from './types.js';

const EVENT_TYPES: ReadonlySet<string> = new Set<WatchEventType>([
  'ADDED',
  'MODIFIED',
  'DELETED',
  'BOOKMARK',
  'ERROR',
]);

/** What one {@link WatchDecoder.push} produced: the complete events, then maybe an error. */
export interface DecodeResult {
  /** Events decoded from complete lines, in order (those before a malformed line). */
  readonly events: WatchEvent[];
  /** Set when a line was malformed; the stream must be abandoned after `events`. */
  readonly error?: WatchDecodeError;
}

/**
 * Decodes a watch response body incrementally. After an error the decoder is poisoned:
 * the caller must close the watch and start a new one.
 */
export class WatchDecoder {
  readonly #utf8 = new StringDecoder('utf8');
  #pending = '';
  #failed: WatchDecodeError | undefined;

  /** Feeds one chunk of the body. */
  push(chunk: Buffer | string): DecodeResult {
    if (this.#failed) return { events: [], error: this.#failed };
    const text = typeof chunk === 'string' ? chunk : this.#utf8.write(chunk);
    let buffer = this.#pending + text;
    const events: WatchEvent[] = [];
    let start = 0;
    for (;;) {
      const nl = buffer.indexOf('\n', start);
      if (nl < 0) break;
      const line = buffer.slice(start, nl);
      start = nl + 1;
      if (line.trim() === '') continue;
      const decoded = decodeLine(line);
      if (decoded instanceof WatchDecodeError) {
        this.#failed = decoded;
        this.#pending = '';
        return { events, error: decoded };
      }
      events.push(decoded);
    }
    buffer = start === 0 ? buffer : buffer.slice(start);
    this.#pending = buffer;
    return { events };
  }

  /** Ends the body: a final line without a newline is decoded too. */
  end(): DecodeResult {
    if (this.#failed) return { events: [], error: this.#failed };
    const rest = this.#pending + this.#utf8.end();
    this.#pending = '';
    if (rest.trim() === '') return { events: [] };
    const decoded = decodeLine(rest);
    if (decoded instanceof WatchDecodeError) {
      this.#failed = decoded;
      return { events: [], error: decoded };
    }
    return { events: [decoded] };
  }
}

/** Decodes one line, or returns (not throws) the error for a malformed one. */
export function decodeLine(line: string): WatchEvent | WatchDecodeError {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return new WatchDecodeError(line, err);
  }
  if (typeof value !== 'object' || value === null) return new WatchDecodeError(line);
  const { type, object } = value as { type?: unknown; object?: unknown };
  if (typeof type !== 'string' || !EVENT_TYPES.has(type)) return new WatchDecodeError(line);
  if (typeof object !== 'object' || object === null || Array.isArray(object))
    return new WatchDecodeError(line);
  return value as WatchEvent;
}

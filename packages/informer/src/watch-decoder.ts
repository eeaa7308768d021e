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
  /**
   * The text of the incomplete last line, as the pieces it arrived in: a large event split
   * over many chunks is joined once, when its newline arrives, and only the new text of
   * each chunk is searched for a newline, so decoding is linear in the size of the event.
   */
  #pieces: string[] = [];
  #failed: WatchDecodeError | undefined;

  /** Feeds one chunk of the body. */
  push(chunk: Buffer | string): DecodeResult {
    if (this.#failed) return { events: [], error: this.#failed };
    const text = typeof chunk === 'string' ? chunk : this.#utf8.write(chunk);
    const events: WatchEvent[] = [];
    let nl = text.indexOf('\n');
    if (nl < 0) {
      if (text !== '') this.#pieces.push(text);
      return { events };
    }
    let line: string;
    if (this.#pieces.length > 0) {
      this.#pieces.push(text.slice(0, nl));
      line = this.#pieces.join('');
      this.#pieces = [];
    } else {
      line = text.slice(0, nl);
    }
    for (;;) {
      if (!isBlank(line)) {
        const decoded = decodeLine(line);
        if (decoded instanceof WatchDecodeError) {
          this.#failed = decoded;
          this.#pieces = [];
          return { events, error: decoded };
        }
        events.push(decoded);
      }
      const start = nl + 1;
      nl = text.indexOf('\n', start);
      if (nl < 0) {
        if (start < text.length) this.#pieces.push(text.slice(start));
        return { events };
      }
      line = text.slice(start, nl);
    }
  }

  /** Ends the body: a final line without a newline is decoded too. */
  end(): DecodeResult {
    if (this.#failed) return { events: [], error: this.#failed };
    this.#pieces.push(this.#utf8.end());
    const rest = this.#pieces.join('');
    this.#pieces = [];
    if (isBlank(rest)) return { events: [] };
    const decoded = decodeLine(rest);
    if (decoded instanceof WatchDecodeError) {
      this.#failed = decoded;
      return { events: [], error: decoded };
    }
    return { events: [decoded] };
  }
}

/** True for a line of whitespace only, without copying a long line (as `trim()` would). */
function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    // space, \t, \r, \n, \v, \f
    if (c !== 0x20 && (c < 0x09 || c > 0x0d)) return false;
  }
  return true;
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

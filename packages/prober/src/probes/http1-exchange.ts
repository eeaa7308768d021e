/**
 * One plain-HTTP GET of an `httpGet` probe on a connection of its own, without `node:http`: the
 * request bytes are built once per probe target, the response head is read as Go's
 * `http.ReadResponse` reads it (informational 1xx heads skipped, its error texts), and the body
 * (`Content-Length`, chunked, or up to the close) is decoded up to the 10 KiB the probe keeps,
 * then the connection is closed. At thousands of probes a second, `node:http`'s request and
 * response objects cost about a third of an HTTP probe's CPU (see the README's figures); the
 * exchange on the wire is the same.
 *
 * @module
 */
import { connect, type Socket } from 'node:net';

/** Go's `http.Transport` default `MaxResponseHeaderBytes`. */
const MAX_HEAD_BYTES = 10 << 20;
/** A chunk-size line longer than this is malformed (Go's chunked reader allows 4 KiB). */
const MAX_CHUNK_LINE = 4096;

/** A failure of the exchange whose message is already Go's text (`unexpected EOF`, ...). @internal */
export class HTTPTransportError extends Error {}

/** The probe's deadline as the exchange sees it: one step waits on it at a time. @internal */
export interface ExchangeDeadline {
  readonly expired: boolean;
  onExpire: (() => void) | undefined;
}

/** The head of a probe's HTTP response and the reader of its body. @internal */
export interface ProbeHTTPResponse {
  /** The status code. */
  readonly statusCode: number;
  /** The first `Location` header, if any. */
  readonly location: string | undefined;
  /** At most `limit` bytes of the body as text; rejects on a transport error or the deadline. */
  readBody(): Promise<string>;
  /** Ends the exchange (the body is not wanted). */
  destroy(): void;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: Go's isCTL: control bytes other than HTAB
const CTL = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * The request bytes of a GET of `path` in Go's order (`Host`, `User-Agent` unless empty,
 * `Connection: close`, then the other headers sorted by name), or Go's error for a header name or
 * value it would not send.
 */
export function http1Request(
  path: string,
  host: string,
  headers: Readonly<Record<string, readonly string[]>>,
): Buffer {
  for (const name in headers) {
    if (!TOKEN.test(name))
      throw new HTTPTransportError(`net/http: invalid header field name ${JSON.stringify(name)}`);
    for (const value of headers[name] as readonly string[]) {
      // Go leaves the value out of the error: it may be a secret.
      if (CTL.test(value))
        throw new HTTPTransportError(`net/http: invalid header field value for ${JSON.stringify(name)}`);
    }
  }
  let text = `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n`;
  const userAgent = headers['User-Agent']?.[0]?.trim();
  if (userAgent) text += `User-Agent: ${userAgent}\r\n`;
  text += 'Connection: close\r\n';
  for (const name of Object.keys(headers).sort()) {
    if (name === 'User-Agent') continue;
    for (const value of headers[name] as readonly string[]) text += `${name}: ${value}\r\n`;
  }
  return Buffer.from(`${text}\r\n`, 'utf8');
}

/**
 * Connects to `host:port`, sends `request` and resolves with the response head; the body, up to
 * `limit` bytes, is read by {@link ProbeHTTPResponse.readBody}. The deadline's expiry ends the
 * exchange at any step; it rejects with the value the caller's deadline passes.
 */
export function http1Get(
  host: string,
  port: number,
  request: Buffer,
  deadline: ExchangeDeadline,
  limit: number,
  timedOut: unknown,
): Promise<ProbeHTTPResponse> {
  return new Promise<ProbeHTTPResponse>((resolve, reject) => {
    new Http1Exchange(host, port, request, deadline, limit, timedOut, resolve, reject);
  });
}

enum Phase {
  Head,
  Body,
  Done,
}

enum BodyMode {
  None,
  Length,
  UntilClose,
  Chunked,
}

enum ChunkState {
  SizeLine,
  Data,
  DataEnd,
  Trailer,
}

class Http1Exchange implements ProbeHTTPResponse {
  statusCode = 0;
  location: string | undefined = undefined;
  readonly #socket: Socket;
  readonly #deadline: ExchangeDeadline;
  readonly #limit: number;
  readonly #timedOut: unknown;
  #phase = Phase.Head;
  #resolveHead: ((r: ProbeHTTPResponse) => void) | undefined;
  #rejectHead: ((e: unknown) => void) | undefined;
  #head: Buffer | undefined = undefined;
  #mode = BodyMode.None;
  #remaining = 0;
  #chunkState = ChunkState.SizeLine;
  #line = '';
  #body: Buffer[] = [];
  #bodySize = 0;
  #bodyText: string | undefined = undefined;
  #bodyError: unknown = undefined;
  #resolveBody: ((text: string) => void) | undefined;
  #rejectBody: ((e: unknown) => void) | undefined;

  constructor(
    host: string,
    port: number,
    request: Buffer,
    deadline: ExchangeDeadline,
    limit: number,
    timedOut: unknown,
    resolve: (r: ProbeHTTPResponse) => void,
    reject: (e: unknown) => void,
  ) {
    this.#deadline = deadline;
    this.#limit = limit;
    this.#timedOut = timedOut;
    this.#resolveHead = resolve;
    this.#rejectHead = reject;
    const socket = connect({ host, port });
    this.#socket = socket;
    deadline.onExpire = () => this.#fail(this.#timedOut);
    socket.once('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.once('end', () => this.#onEnd());
    socket.once('error', (error) => this.#fail(error));
    socket.once('close', () => this.#onEnd());
  }

  readBody(): Promise<string> {
    if (this.#bodyText !== undefined) return Promise.resolve(this.#bodyText);
    if (this.#phase === Phase.Done) return Promise.reject(this.#bodyError);
    return new Promise<string>((resolve, reject) => {
      this.#resolveBody = resolve;
      this.#rejectBody = reject;
    });
  }

  destroy(): void {
    if (this.#phase === Phase.Done) return;
    this.#phase = Phase.Done;
    this.#release();
  }

  #release(): void {
    this.#socket.destroy();
    this.#deadline.onExpire = undefined;
  }

  #onData(chunk: Buffer): void {
    if (this.#phase === Phase.Head) {
      const head = this.#head === undefined ? chunk : Buffer.concat([this.#head, chunk]);
      this.#head = head;
      this.#readHeads();
    } else if (this.#phase === Phase.Body) {
      this.#feedBody(chunk);
    }
  }

  /** Parses complete heads from the buffered bytes; a final (non-1xx) head starts the body. */
  #readHeads(): void {
    for (;;) {
      const head = this.#head as Buffer;
      const end = headEnd(head);
      if (end === undefined) {
        if (head.length > MAX_HEAD_BYTES) {
          this.#fail(
            new HTTPTransportError(
              `net/http: server response headers exceeded ${MAX_HEAD_BYTES} bytes; aborted`,
            ),
          );
        }
        return;
      }
      const lines = head.toString('latin1', 0, end[0]).split('\n');
      const rest = head.subarray(end[1]);
      let parsed: ParsedHead;
      try {
        parsed = parseHead(lines);
      } catch (error) {
        this.#fail(error);
        return;
      }
      // Informational heads (100 Continue, 103 Early Hints) are skipped, as Go's transport does.
      if (parsed.status >= 100 && parsed.status < 200 && parsed.status !== 101) {
        this.#head = rest;
        continue;
      }
      this.statusCode = parsed.status;
      this.location = parsed.location;
      this.#mode = parsed.mode;
      this.#remaining = parsed.length;
      this.#head = undefined;
      this.#phase = Phase.Body;
      const resolve = this.#resolveHead as (r: ProbeHTTPResponse) => void;
      this.#resolveHead = undefined;
      this.#rejectHead = undefined;
      resolve(this);
      if (this.#mode === BodyMode.None || (this.#mode === BodyMode.Length && this.#remaining === 0)) {
        this.#complete();
      } else if (rest.length > 0) {
        this.#feedBody(rest);
      }
      return;
    }
  }

  #feedBody(data: Buffer): void {
    if (this.#mode === BodyMode.Chunked) {
      this.#feedChunked(data);
      return;
    }
    if (this.#mode === BodyMode.Length) {
      const n = Math.min(this.#remaining, data.length);
      this.#keep(data.subarray(0, n));
      this.#remaining -= n;
      if (this.#remaining === 0) this.#complete();
      return;
    }
    this.#keep(data);
  }

  #feedChunked(data: Buffer): void {
    let i = 0;
    while (i < data.length && this.#phase === Phase.Body) {
      switch (this.#chunkState) {
        case ChunkState.SizeLine:
        case ChunkState.Trailer: {
          const nl = data.indexOf(10, i);
          const part = data.toString('latin1', i, nl === -1 ? data.length : nl);
          this.#line += part;
          if (this.#line.length > MAX_CHUNK_LINE) {
            this.#fail(new HTTPTransportError('http: malformed chunked encoding'));
            return;
          }
          if (nl === -1) return;
          i = nl + 1;
          const line = this.#line.endsWith('\r') ? this.#line.slice(0, -1) : this.#line;
          this.#line = '';
          if (this.#chunkState === ChunkState.Trailer) {
            if (line === '') this.#complete();
            continue;
          }
          const size = parseChunkSize(line);
          if (size === undefined) {
            this.#fail(new HTTPTransportError('invalid byte in chunk length'));
            return;
          }
          if (size === 0) this.#chunkState = ChunkState.Trailer;
          else {
            this.#remaining = size;
            this.#chunkState = ChunkState.Data;
          }
          break;
        }
        case ChunkState.Data: {
          const n = Math.min(this.#remaining, data.length - i);
          this.#keep(data.subarray(i, i + n));
          i += n;
          this.#remaining -= n;
          if (this.#remaining === 0 && this.#phase === Phase.Body) {
            this.#chunkState = ChunkState.DataEnd;
            this.#line = '';
          }
          break;
        }
        case ChunkState.DataEnd: {
          // The CRLF after a chunk's data.
          const b = data[i] as number;
          i++;
          if (b === 13 && this.#line === '') this.#line = '\r';
          else if (b === 10) {
            this.#line = '';
            this.#chunkState = ChunkState.SizeLine;
          } else {
            this.#fail(new HTTPTransportError('http: malformed chunked encoding'));
            return;
          }
          break;
        }
      }
    }
  }

  /** Keeps body bytes up to the limit; at the limit the rest of the body is not read. */
  #keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#body.push(bytes);
    this.#bodySize += bytes.length;
    if (this.#bodySize >= this.#limit) this.#complete();
  }

  #complete(): void {
    if (this.#phase === Phase.Done) return;
    this.#phase = Phase.Done;
    this.#release();
    const all = this.#body.length === 1 ? (this.#body[0] as Buffer) : Buffer.concat(this.#body);
    this.#body = [];
    this.#bodyText = all.toString('utf8', 0, Math.min(all.length, this.#limit));
    this.#resolveBody?.(this.#bodyText);
  }

  #onEnd(): void {
    if (this.#phase === Phase.Body && this.#mode === BodyMode.UntilClose) {
      this.#complete();
      return;
    }
    if (this.#phase === Phase.Head && (this.#head === undefined || this.#head.length === 0)) {
      // Closed before any byte of a response: Go's transport reports the read's io.EOF.
      this.#fail(new HTTPTransportError('EOF'));
      return;
    }
    this.#fail(new HTTPTransportError('unexpected EOF'));
  }

  #fail(error: unknown): void {
    if (this.#phase === Phase.Done) return;
    const head = this.#phase === Phase.Head;
    this.#phase = Phase.Done;
    this.#release();
    if (head) {
      const reject = this.#rejectHead as (e: unknown) => void;
      this.#resolveHead = undefined;
      this.#rejectHead = undefined;
      reject(error);
      return;
    }
    this.#bodyError = error;
    this.#rejectBody?.(error);
  }
}

/** The end of the head's lines and the start of what follows it (`\r\n\r\n` or bare `\n\n`). */
function headEnd(buf: Buffer): [number, number] | undefined {
  let from = 0;
  for (;;) {
    const nl = buf.indexOf(10, from);
    if (nl === -1) return undefined;
    const next = buf[nl + 1];
    if (next === 10) return [nl, nl + 2];
    if (next === 13 && buf[nl + 2] === 10) return [nl, nl + 3];
    if (next === undefined || (next === 13 && buf[nl + 2] === undefined)) return undefined;
    from = nl + 1;
  }
}

interface ParsedHead {
  readonly status: number;
  readonly location: string | undefined;
  readonly mode: BodyMode;
  readonly length: number;
}

/** Go's `ReadResponse` checks and texts for the status line; the headers a probe needs. */
function parseHead(rawLines: string[]): ParsedHead {
  const lines = rawLines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const statusLine = lines[0] ?? '';
  const space = statusLine.indexOf(' ');
  if (space === -1) throw new HTTPTransportError(`malformed HTTP response ${JSON.stringify(statusLine)}`);
  const proto = statusLine.slice(0, space);
  const status = statusLine.slice(space + 1).replace(/^ +/, '');
  const codeText = status.split(' ', 1)[0] as string;
  if (!/^[0-9]{3}$/.test(codeText))
    throw new HTTPTransportError(`malformed HTTP status code ${JSON.stringify(codeText)}`);
  if (!/^HTTP\/[0-9]\.[0-9]$/.test(proto))
    throw new HTTPTransportError(`malformed HTTP version ${JSON.stringify(proto)}`);
  const code = Number(codeText);
  let location: string | undefined;
  let chunked = false;
  let length: number | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new HTTPTransportError(`malformed MIME header line: ${line}`);
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    if (name === 'location') location ??= value;
    else if (name === 'transfer-encoding') chunked = value.toLowerCase() === 'chunked';
    else if (name === 'content-length') {
      if (!/^[0-9]+$/.test(value) || (length !== undefined && Number(value) !== length)) {
        throw new HTTPTransportError(`bad Content-Length ${JSON.stringify(value)}`);
      }
      length = Number(value);
    }
  }
  // No body for 1xx, 204 and 304 (the request is a GET); chunked wins over a length, as in Go.
  if ((code >= 100 && code < 200) || code === 204 || code === 304)
    return { status: code, location, mode: BodyMode.None, length: 0 };
  if (chunked) return { status: code, location, mode: BodyMode.Chunked, length: 0 };
  if (length !== undefined) return { status: code, location, mode: BodyMode.Length, length };
  return { status: code, location, mode: BodyMode.UntilClose, length: 0 };
}

/** A chunk-size line's size (hex digits, extensions after `;` ignored), or undefined. */
function parseChunkSize(line: string): number | undefined {
  const semi = line.indexOf(';');
  const hex = (semi === -1 ? line : line.slice(0, semi)).replace(/[ \t]+$/, '');
  if (!/^[0-9a-fA-F]{1,15}$/.test(hex)) return undefined;
  return Number.parseInt(hex, 16);
}

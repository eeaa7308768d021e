/**
 * SPDY/3.1 framing as Kubernetes' streaming connections use it (the `moby/spdystream`
 * wire format behind `Upgrade: SPDY/3.1`): control frames (`SYN_STREAM`, `SYN_REPLY`,
 * `RST_STREAM`, `SETTINGS`, `PING`, `GOAWAY`, `HEADERS`, `WINDOW_UPDATE`), data frames with
 * `FIN`, and the zlib-compressed name/value header blocks with the SPDY/3 dictionary (one
 * compression context per direction for the whole connection).
 *
 * {@link SpdyConnection} runs either end of such a connection over an already upgraded
 * socket: the client opens odd-numbered streams and waits for their `SYN_REPLY`, the server
 * answers each `SYN_STREAM`. As spdystream, there is no flow control (`WINDOW_UPDATE` is
 * read and ignored; nothing waits for a window) and `SETTINGS` are ignored. The peer's pings
 * are answered; with `pingIntervalMs` this end pings too.
 *
 * @module
 */
import type { Duplex } from 'node:stream';
import { createInflate, type Inflate, constants as zlibConstants } from 'node:zlib';

/** The words the SPDY/3 header dictionary is made of, each 32-bit-length-prefixed. */
const DICTIONARY_WORDS = [
  'options',
  'head',
  'post',
  'put',
  'delete',
  'trace',
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'accept-ranges',
  'age',
  'allow',
  'authorization',
  'cache-control',
  'connection',
  'content-base',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'etag',
  'expect',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'pragma',
  'proxy-authenticate',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'server',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'vary',
  'via',
  'warning',
  'www-authenticate',
  'method',
  'get',
  'status',
  '200 OK',
  'version',
  'HTTP/1.1',
  'url',
  'public',
  'set-cookie',
  'keep-alive',
  'origin',
];

/** The unprefixed tail of the SPDY/3 header dictionary. */
const DICTIONARY_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request' +
  '401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented' +
  '503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 ' +
  'Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,' +
  'application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=' +
  'gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** The SPDY/3 zlib dictionary for header blocks (1423 bytes, from the SPDY/3 draft). */
export const SPDY_HEADER_DICTIONARY: Buffer = Buffer.concat([
  ...DICTIONARY_WORDS.map((w) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(w.length);
    return Buffer.concat([len, Buffer.from(w, 'latin1')]);
  }),
  Buffer.from(DICTIONARY_TAIL, 'latin1'),
]);

/** SPDY control frame types. */
export const SpdyFrameType = {
  SynStream: 1,
  SynReply: 2,
  RstStream: 3,
  Settings: 4,
  Ping: 6,
  GoAway: 7,
  Headers: 8,
  WindowUpdate: 9,
} as const;

/** The `FIN` flag of data, `SYN_STREAM`, `SYN_REPLY` and `HEADERS` frames. */
export const SPDY_FLAG_FIN = 0x01;

/** `RST_STREAM` status codes used here. */
export const SpdyRstStatus = { ProtocolError: 1, Cancel: 5, InternalError: 6 } as const;

/** Header names (lower case, as on the wire) to their values. */
export type SpdyHeaders = Readonly<Record<string, readonly string[]>>;

/** A malformed frame or header block, or a peer breaking the protocol. */
export class SpdyProtocolError extends Error {
  override readonly name = 'SpdyProtocolError';
}

/** One parsed frame; control frames keep their (still compressed) payload. */
export type SpdyRawFrame =
  | { readonly control: true; readonly type: number; readonly flags: number; readonly payload: Buffer }
  | { readonly control: false; readonly streamId: number; readonly flags: number; readonly data: Buffer };

/** Incremental frame splitter: feed bytes with {@link SpdyFrameReader.push}. */
export class SpdyFrameReader {
  #buf: Buffer = Buffer.alloc(0);

  /** Appends `chunk` and returns every frame now complete. */
  push(chunk: Buffer): SpdyRawFrame[] {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const frames: SpdyRawFrame[] = [];
    let at = 0;
    while (this.#buf.length - at >= 8) {
      const b = this.#buf;
      const len = b.readUIntBE(at + 5, 3);
      if (b.length - at - 8 < len) break;
      const flags = b[at + 4] as number;
      const body = Buffer.from(b.subarray(at + 8, at + 8 + len));
      if (((b[at] as number) & 0x80) !== 0) {
        const version = b.readUInt16BE(at) & 0x7fff;
        if (version !== 3) throw new SpdyProtocolError(`unsupported SPDY version ${version}`);
        frames.push({ control: true, type: b.readUInt16BE(at + 2), flags, payload: body });
      } else {
        frames.push({ control: false, streamId: b.readUInt32BE(at) & 0x7fffffff, flags, data: body });
      }
      at += 8 + len;
    }
    this.#buf = this.#buf.subarray(at);
    return frames;
  }
}

/** Encodes a control frame. */
export function spdyControlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8003, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(payload.length, 4);
  head[4] = flags;
  return Buffer.concat([head, payload]);
}

/** Encodes a data frame. */
export function spdyDataFrame(streamId: number, flags: number, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head.writeUInt32BE(data.length, 4);
  head[4] = flags;
  return Buffer.concat([head, data]);
}

/** The uncompressed name/value block of `headers` (names lower-cased, values NUL-joined). */
export function encodeSpdyHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [];
  const entries = Object.entries(headers).filter(([, v]) => v.length > 0);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(entries.length);
  parts.push(count);
  for (const [name, values] of entries) {
    for (const s of [name.toLowerCase(), values.join('\0')]) {
      const bytes = Buffer.from(s, 'utf8');
      const len = Buffer.alloc(4);
      len.writeUInt32BE(bytes.length);
      parts.push(len, bytes);
    }
  }
  return Buffer.concat(parts);
}

/** Parses an uncompressed name/value block. */
export function decodeSpdyHeaderBlock(block: Buffer): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const need = (at: number, n: number): void => {
    if (block.length < at + n) throw new SpdyProtocolError('truncated SPDY header block');
  };
  need(0, 4);
  const count = block.readUInt32BE(0);
  let at = 4;
  for (let i = 0; i < count; i++) {
    need(at, 4);
    const nl = block.readUInt32BE(at);
    need(at + 4, nl + 4);
    const name = block.toString('utf8', at + 4, at + 4 + nl).toLowerCase();
    at += 4 + nl;
    const vl = block.readUInt32BE(at);
    need(at + 4, vl);
    const value = block.toString('utf8', at + 4, at + 4 + vl);
    at += 4 + vl;
    if (name === '') throw new SpdyProtocolError('empty SPDY header name');
    out[name] = [...(out[name] ?? []), ...value.split('\0')];
  }
  return out;
}

/**
 * The sending side of the header compression context. Header blocks go out as zlib
 * "stored" (uncompressed) deflate blocks followed by the empty stored block a sync flush
 * writes — a valid zlib stream any SPDY peer inflates, with no dictionary needed to produce
 * it.
 */
export class SpdyHeaderCompressor {
  #started = false;

  /** The compressed form of `headers`, continuing this connection's zlib stream. */
  compress(headers: SpdyHeaders): Buffer {
    const raw = encodeSpdyHeaderBlock(headers);
    const parts: Buffer[] = [];
    if (!this.#started) {
      parts.push(Buffer.from([0x78, 0x01]));
      this.#started = true;
    }
    for (let at = 0; at < raw.length; at += 0xffff) {
      const piece = raw.subarray(at, at + 0xffff);
      const head = Buffer.alloc(5);
      head[0] = 0x00; // BFINAL=0, BTYPE=00 (stored)
      head.writeUInt16LE(piece.length, 1);
      head.writeUInt16LE(~piece.length & 0xffff, 3);
      parts.push(head, piece);
    }
    // The empty stored block a sync flush ends with: inflaters (Go's flate) hand out the
    // block's bytes when they reach it, without reading past the frame.
    parts.push(Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]));
    return Buffer.concat(parts);
  }
}

/** The receiving side of the header compression context (zlib with the SPDY/3 dictionary). */
export class SpdyHeaderDecompressor {
  readonly #inflate: Inflate = createInflate({ dictionary: SPDY_HEADER_DICTIONARY });
  #chunks: Buffer[] = [];
  #error: Error | undefined;
  #rejectPending: ((err: Error) => void) | undefined;

  constructor() {
    this.#inflate.on('data', (c: Buffer) => this.#chunks.push(c));
    this.#inflate.on('error', (err: Error) => {
      this.#error = err;
      this.#rejectPending?.(this.#spdyError(err));
    });
  }

  /** Inflates one header block (calls must not overlap: await each). */
  decompress(block: Buffer): Promise<Record<string, string[]>> {
    if (this.#error !== undefined) return Promise.reject(this.#spdyError(this.#error));
    return new Promise((resolve, reject) => {
      this.#chunks = [];
      this.#rejectPending = reject;
      this.#inflate.write(block);
      this.#inflate.flush(zlibConstants.Z_SYNC_FLUSH, () => {
        this.#rejectPending = undefined;
        if (this.#error !== undefined) return reject(this.#spdyError(this.#error));
        try {
          resolve(decodeSpdyHeaderBlock(Buffer.concat(this.#chunks)));
        } catch (err) {
          reject(err);
        }
      });
    });
  }

  #spdyError(err: Error): SpdyProtocolError {
    return new SpdyProtocolError(`SPDY header block: ${err.message}`);
  }

  /** Releases the inflater. */
  close(): void {
    this.#rejectPending = undefined;
    this.#inflate.close();
  }
}

/** One SPDY stream of a {@link SpdyConnection}. */
export class SpdyStream {
  /** Called with each data frame's bytes from the peer. */
  onData: ((chunk: Buffer) => void) | undefined;
  /** Called once when the peer half-closed (`FIN`), reset the stream or the connection ended. */
  onEnd: ((reset: boolean) => void) | undefined;
  #remoteEnded = false;
  #localEnded = false;
  readonly #pending: Buffer[] = [];
  #pendingEnd = false;

  /** @internal */
  constructor(
    /** The stream id (odd when the client opened it). */
    readonly id: number,
    /** The headers of its `SYN_STREAM`. */
    readonly headers: SpdyHeaders,
    private readonly conn: SpdyConnection,
  ) {}

  /** Whether the peer has half-closed the stream. */
  get remoteEnded(): boolean {
    return this.#remoteEnded;
  }

  /** Sends `chunk` (split into frames of at most 32 KiB); false once the socket buffers. */
  write(chunk: Buffer): boolean {
    if (this.#localEnded) return false;
    let ok = true;
    for (let at = 0; at < chunk.length; at += 32768) {
      ok = this.conn.writeRaw(spdyDataFrame(this.id, 0, chunk.subarray(at, at + 32768)));
    }
    return ok;
  }

  /** Half-closes the stream (an empty data frame with `FIN`). */
  end(): void {
    if (this.#localEnded) return;
    this.#localEnded = true;
    this.conn.writeRaw(spdyDataFrame(this.id, SPDY_FLAG_FIN, Buffer.alloc(0)));
  }

  /** Resets the stream (`RST_STREAM` with `CANCEL`). */
  reset(): void {
    if (this.#localEnded && this.#remoteEnded) return;
    this.#localEnded = true;
    const p = Buffer.alloc(8);
    p.writeUInt32BE(this.id, 0);
    p.writeUInt32BE(SpdyRstStatus.Cancel, 4);
    this.conn.writeRaw(spdyControlFrame(SpdyFrameType.RstStream, 0, p));
    this.remoteEnd(true);
  }

  /** @internal Delivers data from the peer (held until a reader is attached). */
  deliver(chunk: Buffer): void {
    if (this.#remoteEnded || chunk.length === 0) return;
    if (this.onData === undefined) this.#pending.push(chunk);
    else this.onData(chunk);
  }

  /** Attaches the data and end handlers, replaying what arrived before. */
  read(onData: (chunk: Buffer) => void, onEnd: (reset: boolean) => void): void {
    this.onData = onData;
    this.onEnd = onEnd;
    for (const c of this.#pending.splice(0)) onData(c);
    if (this.#pendingEnd) onEnd(false);
  }

  /** @internal The peer half-closed or reset. */
  remoteEnd(reset: boolean): void {
    if (this.#remoteEnded) return;
    this.#remoteEnded = true;
    if (this.onEnd === undefined) this.#pendingEnd = true;
    else this.onEnd(reset);
  }
}

/** Options of {@link SpdyConnection}. */
export interface SpdyConnectionOptions {
  /** Whether this end is the server (answers `SYN_STREAM`s) rather than the client. */
  readonly server: boolean;
  /** Server side: called for each stream the peer opens, after its `SYN_REPLY` went out. */
  readonly onStream?: (stream: SpdyStream) => void;
  /** Called once when the connection ends (socket closed, `GOAWAY` or a protocol error). */
  readonly onClose?: (err?: Error) => void;
  /** Bytes already read from the socket after the upgrade response/request. */
  readonly head?: Buffer;
  /**
   * Send a `PING` this often (milliseconds) to keep idle connections open through proxies,
   * as client-go's SPDY round tripper does with its `PingPeriod`; 0 disables.
   * @default 0
   */
  readonly pingIntervalMs?: number;
}

/** Either end of a SPDY/3.1 connection over an upgraded socket. */
export class SpdyConnection {
  readonly #socket: Duplex;
  readonly #opts: SpdyConnectionOptions;
  readonly #reader = new SpdyFrameReader();
  readonly #compressor = new SpdyHeaderCompressor();
  readonly #decompressor = new SpdyHeaderDecompressor();
  readonly #streams = new Map<number, SpdyStream>();
  readonly #awaitingReply = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  #nextId: number;
  #inbound: Promise<void> = Promise.resolve();
  #closed = false;
  #goAway = false;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  #nextPingId: number;

  constructor(socket: Duplex, opts: SpdyConnectionOptions) {
    this.#socket = socket;
    this.#opts = opts;
    this.#nextId = opts.server ? 2 : 1;
    this.#nextPingId = opts.server ? 2 : 1;
    if ((opts.pingIntervalMs ?? 0) > 0) {
      this.#pingTimer = setInterval(() => this.ping(), opts.pingIntervalMs);
      this.#pingTimer.unref?.();
    }
    socket.on('data', (c: Buffer) => this.#onBytes(c));
    socket.on('error', (err: Error) => this.#end(err));
    // Frames already read are handled before the end is signalled.
    const ended = (): void => {
      this.#inbound = this.#inbound.then(() => this.#end());
    };
    socket.on('close', ended);
    socket.on('end', ended);
    if (opts.head !== undefined && opts.head.length > 0) this.#onBytes(opts.head);
  }

  /** The underlying socket (for backpressure: pause/resume). */
  get socket(): Duplex {
    return this.#socket;
  }

  /** Whether the connection has ended. */
  get closed(): boolean {
    return this.#closed;
  }

  /** @internal Writes an encoded frame. */
  writeRaw(frame: Buffer): boolean {
    if (this.#closed || !this.#socket.writable) return false;
    return this.#socket.write(frame);
  }

  /** Opens a stream with `headers` (client side); resolves once the peer's `SYN_REPLY` came. */
  createStream(headers: SpdyHeaders): Promise<SpdyStream> {
    if (this.#closed || this.#goAway) return Promise.reject(new SpdyProtocolError('SPDY connection closed'));
    const id = this.#nextId;
    this.#nextId += 2;
    const stream = new SpdyStream(id, headers, this);
    this.#streams.set(id, stream);
    const p = Buffer.alloc(10);
    p.writeUInt32BE(id, 0);
    p.writeUInt32BE(0, 4);
    const block = this.#compressor.compress(headers);
    this.writeRaw(spdyControlFrame(SpdyFrameType.SynStream, 0, Buffer.concat([p, block])));
    return new Promise((resolve, reject) => {
      this.#awaitingReply.set(id, { resolve: () => resolve(stream), reject });
    });
  }

  /** Sends a `PING` with this end's next ping id (odd for the client, even for the server). */
  ping(): void {
    const p = Buffer.alloc(4);
    p.writeUInt32BE(this.#nextPingId >>> 0);
    this.#nextPingId = (this.#nextPingId + 2) % 0x100000000;
    this.writeRaw(spdyControlFrame(SpdyFrameType.Ping, 0, p));
  }

  /** Sends `GOAWAY` and closes the socket once written. */
  close(): void {
    if (this.#closed) return;
    const p = Buffer.alloc(8);
    p.writeUInt32BE(0, 0);
    p.writeUInt32BE(0, 4);
    this.writeRaw(spdyControlFrame(SpdyFrameType.GoAway, 0, p));
    this.#socket.end();
    this.#end();
  }

  #onBytes(chunk: Buffer): void {
    let frames: SpdyRawFrame[];
    try {
      frames = this.#reader.push(chunk);
    } catch (err) {
      this.#fail(err as Error);
      return;
    }
    for (const f of frames) {
      this.#inbound = this.#inbound.then(() => this.#handle(f)).catch((err: Error) => this.#fail(err));
    }
  }

  async #handle(f: SpdyRawFrame): Promise<void> {
    if (this.#closed) return;
    if (!f.control) {
      const s = this.#streams.get(f.streamId);
      if (s === undefined) return;
      s.deliver(f.data);
      if ((f.flags & SPDY_FLAG_FIN) !== 0) s.remoteEnd(false);
      return;
    }
    const p = f.payload;
    const need = (n: number): void => {
      if (p.length < n) throw new SpdyProtocolError(`short SPDY control frame of type ${f.type}`);
    };
    switch (f.type) {
      case SpdyFrameType.SynStream: {
        need(10);
        const id = p.readUInt32BE(0) & 0x7fffffff;
        const headers = await this.#decompressor.decompress(p.subarray(10));
        if (!this.#opts.server) {
          this.#rst(id, SpdyRstStatus.ProtocolError);
          return;
        }
        const stream = new SpdyStream(id, headers, this);
        this.#streams.set(id, stream);
        const r = Buffer.alloc(4);
        r.writeUInt32BE(id);
        this.writeRaw(
          spdyControlFrame(SpdyFrameType.SynReply, 0, Buffer.concat([r, this.#compressor.compress({})])),
        );
        if ((f.flags & SPDY_FLAG_FIN) !== 0) stream.remoteEnd(false);
        this.#opts.onStream?.(stream);
        return;
      }
      case SpdyFrameType.SynReply: {
        need(4);
        const id = p.readUInt32BE(0) & 0x7fffffff;
        await this.#decompressor.decompress(p.subarray(4));
        this.#awaitingReply.get(id)?.resolve();
        this.#awaitingReply.delete(id);
        if ((f.flags & SPDY_FLAG_FIN) !== 0) this.#streams.get(id)?.remoteEnd(false);
        return;
      }
      case SpdyFrameType.Headers: {
        need(4);
        await this.#decompressor.decompress(p.subarray(4));
        if ((f.flags & SPDY_FLAG_FIN) !== 0)
          this.#streams.get(p.readUInt32BE(0) & 0x7fffffff)?.remoteEnd(false);
        return;
      }
      case SpdyFrameType.RstStream: {
        need(8);
        const id = p.readUInt32BE(0) & 0x7fffffff;
        const waiting = this.#awaitingReply.get(id);
        this.#awaitingReply.delete(id);
        waiting?.reject(new SpdyProtocolError(`stream ${id} reset by peer (status ${p.readUInt32BE(4)})`));
        this.#streams.get(id)?.remoteEnd(true);
        return;
      }
      case SpdyFrameType.Ping: {
        need(4);
        // Echo the peer's pings (their ids have the peer's parity).
        const odd = (p.readUInt32BE(0) & 1) === 1;
        if (odd === this.#opts.server)
          this.writeRaw(spdyControlFrame(SpdyFrameType.Ping, 0, p.subarray(0, 4)));
        return;
      }
      case SpdyFrameType.GoAway:
        // No new streams; the open ones run until the socket closes.
        this.#goAway = true;
        return;
      default:
        return; // SETTINGS, WINDOW_UPDATE and unknown types: ignored
    }
  }

  #rst(id: number, status: number): void {
    const p = Buffer.alloc(8);
    p.writeUInt32BE(id, 0);
    p.writeUInt32BE(status, 4);
    this.writeRaw(spdyControlFrame(SpdyFrameType.RstStream, 0, p));
  }

  #fail(err: Error): void {
    this.#socket.destroy();
    this.#end(err);
  }

  #end(err?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#pingTimer !== undefined) clearInterval(this.#pingTimer);
    for (const w of this.#awaitingReply.values())
      w.reject(err ?? new SpdyProtocolError('SPDY connection closed'));
    this.#awaitingReply.clear();
    for (const s of this.#streams.values()) s.remoteEnd(false);
    this.#decompressor.close();
    this.#opts.onClose?.(err);
  }
}

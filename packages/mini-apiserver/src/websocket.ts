/**
 * The server side of RFC 6455 WebSocket, as much as the streaming subresources need: the
 * opening handshake (`Sec-WebSocket-Accept`, sub-protocol selection), masked client frames,
 * fragmented messages, ping/pong, and the closing handshake. Frames the client must not send
 * (unmasked, reserved bits, an oversized or fragmented control frame, an unexpected
 * continuation) close the connection with 1002 (protocol error); a message over the size limit
 * with 1009.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** WebSocket opcodes. */
export const WsOpcode = {
  Continuation: 0x0,
  Text: 0x1,
  Binary: 0x2,
  Close: 0x8,
  Ping: 0x9,
  Pong: 0xa,
} as const;

/** Whether `req` is a WebSocket upgrade request (`Connection: Upgrade`, `Upgrade: websocket`). */
export function isWebSocketRequest(req: IncomingMessage): boolean {
  const connection = String(req.headers.connection ?? '').toLowerCase();
  return (
    String(req.headers.upgrade ?? '').toLowerCase() === 'websocket' &&
    connection.split(',').some((t) => t.trim() === 'upgrade')
  );
}

/** The sub-protocols the client offered (`Sec-WebSocket-Protocol`, comma-separated, all headers). */
export function webSocketProtocols(req: IncomingMessage): string[] {
  const raw = req.headers['sec-websocket-protocol'];
  const all = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return all
    .flatMap((v) => v.split(','))
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/**
 * Why `req` is not an acceptable RFC 6455 handshake (gorilla/websocket's messages), or
 * undefined when it is: `Sec-WebSocket-Version` must be 13 and `Sec-WebSocket-Key` the base64
 * of 16 bytes.
 */
export function webSocketHandshakeError(req: IncomingMessage): string | undefined {
  const version = String(req.headers['sec-websocket-version'] ?? '');
  if (!version.split(',').some((v) => v.trim() === '13')) {
    return "websocket: unsupported version: 13 not found in 'Sec-Websocket-Version' header";
  }
  const key = String(req.headers['sec-websocket-key'] ?? '').trim();
  if (!/^[A-Za-z0-9+/]{22}==$/.test(key)) {
    return "websocket: not a websocket handshake: 'Sec-WebSocket-Key' header must be Base64 encoded value of 16-byte in length";
  }
  return undefined;
}

/** `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`. */
export function webSocketAccept(key: string): string {
  return createHash('sha1').update(`${key}${WS_GUID}`).digest('base64');
}

/** Encodes one unmasked (server→client) frame. */
export function encodeWsFrame(opcode: number, payload: Buffer, fin = true): Buffer {
  const len = payload.length;
  const first = (fin ? 0x80 : 0) | opcode;
  let header: Buffer;
  if (len < 126) header = Buffer.from([first, len]);
  else if (len < 65536) {
    header = Buffer.alloc(4);
    header[0] = first;
    header[1] = 126;
    header.writeUInt16BE(len, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([header, payload]);
}

/** Options of {@link WebSocketConnection}. */
export interface WebSocketConnectionOptions {
  /** Largest message accepted (bytes); larger ones close the connection with 1009. @default 16 MiB */
  readonly maxMessageBytes?: number;
  /** Called with each complete text or binary message. */
  readonly onMessage?: (data: Buffer, binary: boolean) => void;
  /** Called once when the connection is gone (close frame exchanged, socket closed or error). */
  readonly onClose?: (code: number, reason: string) => void;
}

/** A server-side WebSocket over an upgraded socket. */
export class WebSocketConnection {
  readonly #socket: Duplex;
  readonly #opts: WebSocketConnectionOptions;
  #buf: Buffer = Buffer.alloc(0);
  #fragments: Buffer[] = [];
  #fragmentBytes = 0;
  #fragmentOpcode = -1;
  #closeSent = false;
  #closed = false;

  constructor(socket: Duplex, head: Buffer, opts: WebSocketConnectionOptions) {
    this.#socket = socket;
    this.#opts = opts;
    socket.on('data', (c: Buffer) => this.#onBytes(c));
    socket.on('close', () => this.#finish(1006, ''));
    socket.on('error', () => this.#finish(1006, ''));
    if (head.length > 0) queueMicrotask(() => this.#onBytes(head));
  }

  /** The upgraded socket (for backpressure: pause/resume, drain). */
  get socket(): Duplex {
    return this.#socket;
  }

  /** Whether the connection is gone. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Sends a binary (default) or text message; false once the socket buffers. */
  send(data: Buffer, binary = true): boolean {
    if (this.#closeSent || !this.#socket.writable) return false;
    return this.#socket.write(encodeWsFrame(binary ? WsOpcode.Binary : WsOpcode.Text, data));
  }

  /** Starts the closing handshake with `code` (the socket closes once the client answers). */
  close(code = 1000, reason = ''): void {
    if (this.#closeSent || !this.#socket.writable) return;
    this.#closeSent = true;
    const p = Buffer.alloc(2 + Buffer.byteLength(reason));
    p.writeUInt16BE(code, 0);
    p.write(reason, 2);
    this.#socket.write(encodeWsFrame(WsOpcode.Close, p));
  }

  /** Drops the connection without a closing handshake. */
  destroy(): void {
    this.#socket.destroy();
  }

  #protocolError(code: number, reason: string): void {
    this.close(code, reason);
    this.#socket.end();
    this.#finish(code, reason);
  }

  #onBytes(chunk: Buffer): void {
    if (this.#closed) return;
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const max = this.#opts.maxMessageBytes ?? 16 << 20;
    for (;;) {
      const b = this.#buf;
      if (b.length < 2) return;
      const b0 = b[0] as number;
      const b1 = b[1] as number;
      let len = b1 & 0x7f;
      let p = 2;
      if (len === 126) {
        if (b.length < 4) return;
        len = b.readUInt16BE(2);
        p = 4;
      } else if (len === 127) {
        if (b.length < 10) return;
        const big = b.readBigUInt64BE(2);
        if (big > BigInt(max)) {
          this.#protocolError(1009, 'message too big');
          return;
        }
        len = Number(big);
        p = 10;
      }
      if ((b1 & 0x80) === 0) {
        this.#protocolError(1002, 'client frames must be masked');
        return;
      }
      if ((b0 & 0x70) !== 0) {
        this.#protocolError(1002, 'reserved bits set');
        return;
      }
      if (b.length < p + 4 + len) {
        if (len > max) {
          this.#protocolError(1009, 'message too big');
          return;
        }
        return;
      }
      const mask = b.subarray(p, p + 4);
      const payload = Buffer.from(b.subarray(p + 4, p + 4 + len));
      for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] as number) ^ (mask[i & 3] as number);
      this.#buf = b.subarray(p + 4 + len);
      this.#frame((b0 & 0x80) !== 0, b0 & 0x0f, payload, max);
      if (this.#closed) return;
    }
  }

  #frame(fin: boolean, opcode: number, payload: Buffer, max: number): void {
    if (opcode >= 0x8) {
      if (!fin || payload.length > 125) {
        this.#protocolError(1002, 'invalid control frame');
        return;
      }
      if (opcode === WsOpcode.Ping) {
        if (!this.#closeSent && this.#socket.writable)
          this.#socket.write(encodeWsFrame(WsOpcode.Pong, payload));
      } else if (opcode === WsOpcode.Close) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        const reason = payload.length > 2 ? payload.toString('utf8', 2) : '';
        if (!this.#closeSent && this.#socket.writable) {
          this.#closeSent = true;
          this.#socket.write(encodeWsFrame(WsOpcode.Close, payload.subarray(0, 2)));
        }
        this.#socket.end();
        this.#finish(code, reason);
      } else if (opcode !== WsOpcode.Pong) {
        this.#protocolError(1002, `unknown opcode ${opcode}`);
      }
      return;
    }
    if (opcode === WsOpcode.Continuation) {
      if (this.#fragmentOpcode < 0) {
        this.#protocolError(1002, 'unexpected continuation frame');
        return;
      }
    } else if (opcode === WsOpcode.Text || opcode === WsOpcode.Binary) {
      if (this.#fragmentOpcode >= 0) {
        this.#protocolError(1002, 'expected a continuation frame');
        return;
      }
      this.#fragmentOpcode = opcode;
    } else {
      this.#protocolError(1002, `unknown opcode ${opcode}`);
      return;
    }
    this.#fragmentBytes += payload.length;
    if (this.#fragmentBytes > max) {
      this.#protocolError(1009, 'message too big');
      return;
    }
    this.#fragments.push(payload);
    if (!fin) return;
    const message =
      this.#fragments.length === 1 ? (this.#fragments[0] as Buffer) : Buffer.concat(this.#fragments);
    const binary = this.#fragmentOpcode === WsOpcode.Binary;
    this.#fragments = [];
    this.#fragmentBytes = 0;
    this.#fragmentOpcode = -1;
    this.#opts.onMessage?.(message, binary);
  }

  #finish(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#opts.onClose?.(code, reason);
  }
}

/**
 * Answers the client's WebSocket handshake with `101 Switching Protocols` choosing
 * `protocol` (omitted when undefined), and wraps the socket. The caller checked the request
 * ({@link isWebSocketRequest}) and the offered protocols.
 */
export function acceptWebSocket(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  protocol: string | undefined,
  opts: WebSocketConnectionOptions,
): WebSocketConnection {
  const lines = [
    'HTTP/1.1 101 Switching Protocols',
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Accept: ${webSocketAccept(String(req.headers['sec-websocket-key'] ?? ''))}`,
  ];
  if (protocol !== undefined) lines.push(`Sec-WebSocket-Protocol: ${protocol}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  return new WebSocketConnection(socket, head, opts);
}

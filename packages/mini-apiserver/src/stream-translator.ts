/**
 * kube-apiserver's WebSocket handling of the streaming pod subresources
 * (`TranslateStreamCloseWebsocketRequests`, `PortForwardWebsockets`):
 *
 * - exec/attach asked over WebSocket with `v5.channel.k8s.io` are answered here — the
 *   WebSocket channel protocol towards the client — and run against the kubelet over SPDY/3.1
 *   (`v4.channel.k8s.io`, else v3/v2), as upstream's `StreamTranslatorHandler`: stdin
 *   (channel 0, closed by the v5 close signal `[255, 0]`), stdout (1), stderr (2), the status
 *   (3: `Success`, `NonZeroExitCode` with the exit code, or an `InternalError`) and terminal
 *   resize (4);
 * - port-forward asked over WebSocket with `SPDY/3.1+portforward.k8s.io` is tunnelled, as
 *   upstream's `TunnelingHandler`: the kubelet gets a SPDY upgrade request, its answer's
 *   protocol goes back as `SPDY/3.1+<protocol>`, and then the SPDY bytes the client frames
 *   travel in binary WebSocket messages one way and as plain bytes the other.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { SpdyConnection, type SpdyStream } from '@nodeagent/core';
import {
  acceptWebSocket,
  isWebSocketRequest,
  type WebSocketConnection,
  webSocketProtocols,
} from './websocket.js';

/** The WebSocket remote-command protocol with the stream-close signal (upstream `StreamProtocolV5Name`). */
export const STREAM_PROTOCOL_V5 = 'v5.channel.k8s.io';
/** The SPDY remote-command protocols offered to the kubelet, best first. */
export const SPDY_EXEC_PROTOCOLS: readonly string[] = [
  'v4.channel.k8s.io',
  'v3.channel.k8s.io',
  'v2.channel.k8s.io',
];
/** Prefix of WebSocket sub-protocols that tunnel SPDY (upstream `WebsocketsSPDYTunnelingPrefix`). */
export const WEBSOCKET_SPDY_TUNNELING_PREFIX = 'SPDY/3.1+';
/** The v5 "close this channel" signal channel (upstream `StreamClose`). */
export const STREAM_CLOSE_CHANNEL = 255;

/** Channels of the remote-command protocols. */
export const StreamChannel = { Stdin: 0, Stdout: 1, Stderr: 2, Error: 3, Resize: 4 } as const;

/** Whether `req` is a WebSocket upgrade offering `v5.channel.k8s.io` (upstream `IsWebSocketRequestWithStreamCloseProtocol`). */
export function isWebSocketRequestWithStreamCloseProtocol(req: IncomingMessage): boolean {
  return isWebSocketRequest(req) && webSocketProtocols(req).includes(STREAM_PROTOCOL_V5);
}

/** Whether `req` is a WebSocket upgrade offering a `SPDY/3.1+….k8s.io` protocol (upstream `IsWebSocketRequestWithTunnelingProtocol`). */
export function isWebSocketRequestWithTunnelingProtocol(req: IncomingMessage): boolean {
  return isWebSocketRequest(req) && tunnelingSpdyProtocols(req).length > 0;
}

function tunnelingSpdyProtocols(req: IncomingMessage): string[] {
  return webSocketProtocols(req)
    .filter((p) => p.startsWith(WEBSOCKET_SPDY_TUNNELING_PREFIX) && p.endsWith('.k8s.io'))
    .map((p) => p.slice(WEBSOCKET_SPDY_TUNNELING_PREFIX.length));
}

/** Where the kubelet is: a connection opener, the request path (with query) and the `Host`. */
export interface KubeletStreamTarget {
  /** Opens a (TLS) connection to the kubelet. */
  readonly dial: () => Promise<Duplex>;
  /** Path and query of `/exec/…`, `/attach/…` or `/portForward/…`. */
  readonly path: string;
  /** The `Host` header value. */
  readonly host: string;
}

/** The streams an exec/attach asked for (upstream translator `Options`). */
export interface StreamTranslatorOptions {
  /** Stdin requested. */
  readonly stdin: boolean;
  /** Stdout requested. */
  readonly stdout: boolean;
  /** Stderr requested. */
  readonly stderr: boolean;
  /** A TTY requested (then no separate stderr stream, and resize events). */
  readonly tty: boolean;
}

/** A `metav1.Status` as written on the error channel. */
export interface StreamStatus {
  /** `Success` or `Failure`. */
  readonly status: 'Success' | 'Failure';
  /** Human-readable description. */
  readonly message?: string;
  /** Machine-readable reason. */
  readonly reason?: string;
  /** HTTP-like code (errors only). */
  readonly code?: number;
  /** Causes (the exit code). */
  readonly details?: { readonly causes?: readonly { reason?: string; message?: string }[] };
}

/** The kubelet refused the SPDY upgrade (its `Status`, or the body as text). */
export class StreamUpgradeError extends Error {
  override readonly name = 'StreamUpgradeError';
  constructor(
    message: string,
    /** The kubelet's `Status` body when it sent one. */
    readonly status?: StreamStatus & Record<string, unknown>,
  ) {
    super(message);
  }
}

interface ResponseHead {
  readonly code: number;
  readonly headers: Record<string, string>;
  readonly raw: Buffer;
  readonly rest: Buffer;
}

/** Reads an HTTP response head from `socket` (until the blank line); rejects past 1 MiB or on close. */
export function readResponseHead(socket: Duplex): Promise<ResponseHead> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const done = (): void => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
    };
    const onData = (c: Buffer): void => {
      buf = Buffer.concat([buf, c]);
      let end = buf.indexOf('\r\n\r\n');
      let sep = 4;
      if (end < 0) {
        end = buf.indexOf('\n\n');
        sep = 2;
      }
      if (end < 0) {
        if (buf.length > 1 << 20) {
          done();
          reject(new Error('header size limit exceeded'));
        }
        return;
      }
      done();
      socket.pause();
      const text = buf.toString('latin1', 0, end);
      const [statusLine = '', ...lines] = text.split(/\r?\n/);
      const m = /^HTTP\/\d\.\d (\d{3})/.exec(statusLine);
      if (m === null) {
        reject(new Error(`malformed HTTP response: ${JSON.stringify(statusLine)}`));
        return;
      }
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({
        code: Number(m[1]),
        headers,
        raw: buf.subarray(0, end + sep),
        rest: buf.subarray(end + sep),
      });
    };
    const onError = (err: Error): void => {
      done();
      reject(err);
    };
    const onClose = (): void => {
      done();
      reject(new Error('connection closed before the response'));
    };
    socket.on('data', onData);
    socket.once('error', onError);
    socket.once('close', onClose);
  });
}

/** Reads what follows a response head: `Content-Length` bytes or until the close, at most 64 KiB. */
function readBody(socket: Duplex, head: ResponseHead): Promise<string> {
  const limit = Math.min(Number(head.headers['content-length'] ?? 1 << 16), 1 << 16);
  return new Promise((resolve) => {
    let buf = head.rest;
    const finish = (): void => {
      socket.off('data', onData);
      socket.destroy();
      resolve(buf.subarray(0, limit).toString('utf8'));
    };
    const onData = (c: Buffer): void => {
      buf = Buffer.concat([buf, c]);
      if (buf.length >= limit) finish();
    };
    if (buf.length >= limit) {
      finish();
      return;
    }
    socket.on('data', onData);
    socket.once('end', finish);
    socket.once('close', finish);
    socket.once('error', finish);
    socket.resume();
  });
}

function upgradeRequest(target: KubeletStreamTarget, protocols: readonly string[]): string {
  return [
    `POST ${target.path} HTTP/1.1`,
    `Host: ${target.host}`,
    'Connection: Upgrade',
    'Upgrade: SPDY/3.1',
    ...protocols.map((p) => `X-Stream-Protocol-Version: ${p}`),
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

function isSpdyUpgrade(head: ResponseHead): boolean {
  return (
    head.code === 101 &&
    (head.headers.connection ?? '').toLowerCase().includes('upgrade') &&
    (head.headers.upgrade ?? '').toLowerCase().includes('spdy/3.1')
  );
}

/**
 * Upgrades a kubelet connection to SPDY/3.1 offering `protocols` (client-go's SPDY round
 * tripper): resolves with the connection and the protocol the kubelet chose; a refusal
 * rejects with {@link StreamUpgradeError} carrying the kubelet's `Status` when it sent one,
 * else `unable to upgrade connection: <body>`.
 */
export async function upgradeToSpdy(
  target: KubeletStreamTarget,
  protocols: readonly string[],
): Promise<{ conn: SpdyConnection; protocol: string }> {
  const socket = await target.dial();
  socket.write(upgradeRequest(target, protocols));
  const head = await readResponseHead(socket).catch((err: Error) => {
    socket.destroy();
    throw err;
  });
  if (!isSpdyUpgrade(head)) {
    const body = (await readBody(socket, head)).trim();
    let status: (StreamStatus & Record<string, unknown>) | undefined;
    try {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      if (parsed.kind === 'Status') status = parsed as StreamStatus & Record<string, unknown>;
    } catch {
      // not a Status
    }
    if (status !== undefined) throw new StreamUpgradeError(status.message ?? body, status);
    throw new StreamUpgradeError(`unable to upgrade connection: ${body}`);
  }
  // client-go's SPDY round tripper as kube-apiserver's translator configures it: a ping every 5 s.
  const conn = new SpdyConnection(socket, { server: false, head: head.rest, pingIntervalMs: 5000 });
  socket.resume();
  return { conn, protocol: head.headers['x-stream-protocol-version'] ?? '' };
}

/** `metav1.Status` JSON of an internal error (upstream `apierrors.NewInternalError`). */
export function internalErrorStatus(message: string): StreamStatus & Record<string, unknown> {
  return {
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: ${message}`,
    reason: 'InternalError',
    details: { causes: [{ message }] },
    code: 500,
  };
}

/** The status written for a command that exited with `code` (upstream `codeExitToStatusError`). */
export function exitCodeStatus(code: number): StreamStatus & Record<string, unknown> {
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: command terminated with exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

/**
 * What the kubelet's error stream said, as client-go's error decoders read it: v4 JSON
 * status (success, exit code, or the status message as an error), v2/v3 plain text.
 */
export function decodeErrorStream(
  protocol: string,
  data: string,
): { ok: true } | { exitCode: number } | { error: string } {
  if (protocol !== 'v4.channel.k8s.io') return data === '' ? { ok: true } : { error: data };
  if (data === '') return { ok: true };
  let status: StreamStatus;
  try {
    status = JSON.parse(data) as StreamStatus;
  } catch (err) {
    return { error: `error stream protocol error: ${(err as Error).message} in ${JSON.stringify(data)}` };
  }
  if (status.status === 'Success') return { ok: true };
  if (status.status !== 'Failure') return { error: 'error stream protocol error: unknown error' };
  if (status.reason === 'NonZeroExitCode') {
    if (status.details === undefined) return { error: 'error stream protocol error: details must be set' };
    const cause = status.details.causes?.find((c) => c.reason === 'ExitCode');
    if (cause === undefined) return { error: 'error stream protocol error: no ExitCode cause given' };
    const rc = Number(cause.message);
    if (!/^\d+$/.test(cause.message ?? '') || rc > 255)
      return {
        error: `error stream protocol error: invalid exit code value ${JSON.stringify(cause.message)}`,
      };
    return { exitCode: rc };
  }
  return { error: status.message ?? '' };
}

/** The outcome of one translated session (for the caller's accounting). */
export interface TranslationResult {
  /** The code upstream's `apiserver_stream_translator_requests_total` counts: 200, 400 or 500 (or the kubelet's Status code). */
  readonly code: number;
}

/**
 * Serves an exec/attach WebSocket (v5) request by running it against the kubelet over SPDY
 * (upstream `StreamTranslatorHandler`). Resolves once the session is over.
 */
export function translateStream(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: KubeletStreamTarget,
  opts: StreamTranslatorOptions,
  finishTimeoutMs = 15 * 60_000,
): Promise<TranslationResult> {
  return new Promise((resolveSession) => {
    let stdinStream: SpdyStream | undefined;
    let resizeStream: SpdyStream | undefined;
    let spdy: SpdyConnection | undefined;
    const stdinQueue: Buffer[] = [];
    let stdinClosed = false;
    let resizeBuf = '';
    let finished = false;
    let clientGone = false;

    const ws: WebSocketConnection = acceptWebSocket(req, socket, head, STREAM_PROTOCOL_V5, {
      onMessage: (data) => {
        if (data.length === 0) return;
        const channel = data[0] as number;
        const body = data.subarray(1);
        if (channel === STREAM_CLOSE_CHANNEL) {
          if (body.length !== 1) return;
          if (body[0] === StreamChannel.Stdin && opts.stdin) closeStdin();
          return;
        }
        if (channel === StreamChannel.Stdin && opts.stdin && !stdinClosed) {
          if (stdinStream === undefined) stdinQueue.push(body);
          else if (!stdinStream.write(body)) pauseUntilDrain(ws.socket, spdy?.socket);
        } else if (channel === StreamChannel.Resize && opts.tty) {
          resizeBuf += body.toString('utf8');
          forwardResize();
        }
      },
      onClose: () => {
        clientGone = true;
        spdy?.close();
        if (!finished) {
          finished = true;
          resolveSession({ code: 200 });
        }
      },
    });

    const send = (channel: number, data: Buffer): void => {
      if (!ws.send(Buffer.concat([Buffer.from([channel]), data]))) pauseUntilDrain(spdy?.socket, ws.socket);
    };
    // Tell the client the connection is up: an empty message on the lowest writable channel.
    send(
      opts.stdout ? StreamChannel.Stdout : opts.stderr ? StreamChannel.Stderr : StreamChannel.Error,
      Buffer.alloc(0),
    );

    function closeStdin(): void {
      if (stdinClosed) return;
      stdinClosed = true;
      if (stdinStream !== undefined) stdinStream.end();
    }

    function forwardResize(): void {
      // A stream of JSON TerminalSize objects; forwarded one by one as client-go encodes them
      // once the SPDY resize stream is open.
      if (resizeStream === undefined) return;
      for (;;) {
        const end = resizeBuf.indexOf('}');
        if (end < 0) return;
        const piece = resizeBuf.slice(0, end + 1);
        resizeBuf = resizeBuf.slice(end + 1);
        let size: { Width?: unknown; Height?: unknown };
        try {
          size = JSON.parse(piece) as { Width?: unknown; Height?: unknown };
        } catch {
          continue;
        }
        const width = Number(size.Width ?? 0);
        const height = Number(size.Height ?? 0);
        resizeStream.write(Buffer.from(`${JSON.stringify({ Width: width, Height: height })}\n`));
      }
    }

    const finish = (status: StreamStatus & Record<string, unknown>, code: number): void => {
      if (finished) return;
      finished = true;
      if (!clientGone) {
        send(StreamChannel.Error, Buffer.from(JSON.stringify(status)));
        ws.close(1000);
        // Wait for the client to close (it does once it has read everything), bounded.
        const timer = setTimeout(() => ws.destroy(), finishTimeoutMs);
        timer.unref?.();
        ws.socket.once('close', () => clearTimeout(timer));
      }
      spdy?.close();
      resolveSession({ code });
    };

    void (async () => {
      let protocol: string;
      try {
        const up = await upgradeToSpdy(target, SPDY_EXEC_PROTOCOLS);
        spdy = up.conn;
        protocol = up.protocol;
        if (clientGone) {
          spdy.close();
          return;
        }
        if (!SPDY_EXEC_PROTOCOLS.includes(protocol)) {
          throw new Error(`unsupported streaming protocol: ${JSON.stringify(protocol)}`);
        }
      } catch (err) {
        if (err instanceof StreamUpgradeError && err.status !== undefined) {
          return finish({ metadata: {}, ...err.status }, Number(err.status.code ?? 500));
        }
        return finish(internalErrorStatus((err as Error).message), 500);
      }
      const conn = spdy;
      try {
        const errorStream = await conn.createStream({ streamtype: ['error'] });
        const outputs: Promise<void>[] = [];
        let errorText = '';
        const errorDone = new Promise<void>((resolve) =>
          errorStream.read(
            (c) => {
              errorText += c.toString('utf8');
            },
            () => resolve(),
          ),
        );
        if (opts.stdin) {
          const s = await conn.createStream({ streamtype: ['stdin'] });
          for (const c of stdinQueue.splice(0)) s.write(c);
          stdinStream = s;
          if (stdinClosed) s.end();
        }
        const pipeOut = (s: SpdyStream, channel: number): Promise<void> =>
          new Promise((resolve) =>
            s.read(
              (c) => send(channel, c),
              () => resolve(),
            ),
          );
        if (opts.stdout)
          outputs.push(pipeOut(await conn.createStream({ streamtype: ['stdout'] }), StreamChannel.Stdout));
        if (opts.stderr && !opts.tty) {
          outputs.push(pipeOut(await conn.createStream({ streamtype: ['stderr'] }), StreamChannel.Stderr));
        }
        if (opts.tty && protocol !== 'v2.channel.k8s.io') {
          resizeStream = await conn.createStream({ streamtype: ['resize'] });
          forwardResize();
        }
        await Promise.all(outputs);
        await errorDone;
        const outcome = decodeErrorStream(protocol, errorText);
        if ('ok' in outcome) finish({ metadata: {}, status: 'Success' }, 200);
        else if ('exitCode' in outcome) finish(exitCodeStatus(outcome.exitCode), 200);
        else finish(internalErrorStatus(outcome.error), 500);
      } catch (err) {
        finish(internalErrorStatus((err as Error).message), 500);
      }
    })();
  });
}

/** Pauses `reader` until `writer` drains (coarse backpressure between the two connections). */
function pauseUntilDrain(reader: Duplex | undefined, writer: Duplex | undefined): void {
  if (reader === undefined || writer === undefined || reader.isPaused()) return;
  reader.pause();
  writer.once('drain', () => reader.resume());
  writer.once('close', () => reader.resume());
}

/**
 * Serves a port-forward WebSocket request offering `SPDY/3.1+portforward.k8s.io` by
 * tunnelling SPDY to the kubelet (upstream `TunnelingHandler`). A kubelet that does not
 * upgrade gets its response replayed to the client unchanged. Resolves once the tunnel is
 * open (or the refusal was replayed); rejects when the kubelet cannot be reached.
 */
export async function tunnelPortForward(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: KubeletStreamTarget,
): Promise<TranslationResult> {
  const protocols = tunnelingSpdyProtocols(req);
  const upstream = await target.dial();
  upstream.write(upgradeRequest(target, protocols));
  const response = await readResponseHead(upstream).catch((err: Error) => {
    upstream.destroy();
    throw err;
  });
  if (response.code !== 101) {
    socket.write(response.raw);
    if (response.rest.length > 0) socket.write(response.rest);
    upstream.pipe(socket);
    upstream.resume();
    upstream.on('close', () => socket.end());
    socket.on('close', () => upstream.destroy());
    return { code: response.code };
  }
  if (!isSpdyUpgrade(response)) {
    upstream.destroy();
    const text = 'unable to upgrade: missing upgrade headers in response';
    socket.end(
      `HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${text.length + 1}\r\nConnection: close\r\n\r\n${text}\n`,
    );
    return { code: 500 };
  }
  const chosen = (response.headers['x-stream-protocol-version'] ?? '').trim();
  const ws = acceptWebSocket(
    req,
    socket,
    head,
    chosen === '' ? undefined : `${WEBSOCKET_SPDY_TUNNELING_PREFIX}${chosen}`,
    {
      onMessage: (data, binary) => {
        if (!binary) {
          ws.close(1003, 'invalid message type received');
          upstream.destroy();
          return;
        }
        if (!upstream.write(data)) pauseUntilDrain(ws.socket, upstream);
      },
      onClose: () => upstream.destroy(),
    },
  );
  const toClient = (c: Buffer): void => {
    if (!ws.send(c)) pauseUntilDrain(upstream, ws.socket);
  };
  if (response.rest.length > 0) toClient(response.rest);
  upstream.on('data', toClient);
  upstream.on('close', () => {
    ws.close(1000);
    ws.socket.end();
  });
  upstream.on('error', () => upstream.destroy());
  upstream.resume();
  return { code: 101 };
}

/**
 * A small CRI streaming server for the fake's `Exec`: `Exec` answers with a one-time URL on
 * a loopback HTTP server; a WebSocket upgrade to it (sub-protocol `v5.channel.k8s.io` or
 * `v4.channel.k8s.io`, the channel framing of the kubelet's remotecommand server) runs the
 * command through the same scripts as `ExecSync` and sends its stdout (channel 1), stderr
 * (channel 2) and the v4 status (channel 3: `Success`, or `NonZeroExitCode` with the exit
 * code), then closes. A SPDY/3.1 upgrade (`v4.channel.k8s.io`, what the kubelet's
 * clients and kube-apiserver's stream translator send) gets the same over SPDY streams: the
 * client's `error`/`stdout`/`stderr` (and `stdin`/`resize`) streams; once all expected ones
 * are open the command runs, its output goes to `stdout`/`stderr`, the status to `error`, and
 * the connection closes. Stdin data and TTY resizes are accepted but not used.
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { SpdyConnection, type SpdyStream } from '@nodeagent/core';
import type { ExecDeps } from './exec.js';
import { runExecSync } from './exec.js';

/** One pending exec session. */
interface PendingExec {
  readonly containerId: string;
  readonly cmd: readonly string[];
  readonly stdout: boolean;
  readonly stderr: boolean;
  /** Stdin requested (a SPDY client then opens a stdin stream; its data is not used). */
  readonly stdin?: boolean;
  /** TTY requested (a SPDY client then opens a resize stream and no stderr stream). */
  readonly tty?: boolean;
}

const PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

const SPDY_PROTOCOL = 'v4.channel.k8s.io';

/** The kubelet's v4 status for a command that exited non-zero. */
function nonZeroExitStatus(cmd: readonly string[], exitCode: number): object {
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${cmd.join(' ')}], exit code ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

/** Encodes one server→client WebSocket frame (unmasked). */
export function wsFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  let header: Buffer;
  if (len < 126) header = Buffer.from([0x80 | opcode, len]);
  else if (len < 65536) {
    header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(len, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([header, payload]);
}

/** Parses client frames from `buf`; returns the complete frames and the unparsed rest. */
export function parseClientFrames(buf: Buffer): {
  frames: { opcode: number; payload: Buffer }[];
  rest: Buffer;
} {
  const frames: { opcode: number; payload: Buffer }[] = [];
  let at = 0;
  for (;;) {
    if (buf.length - at < 2) break;
    const b0 = buf[at] as number;
    const b1 = buf[at + 1] as number;
    let len = b1 & 0x7f;
    let p = at + 2;
    if (len === 126) {
      if (buf.length - p < 2) break;
      len = buf.readUInt16BE(p);
      p += 2;
    } else if (len === 127) {
      if (buf.length - p < 8) break;
      len = Number(buf.readBigUInt64BE(p));
      p += 8;
    }
    const masked = (b1 & 0x80) !== 0;
    const mask = masked ? buf.subarray(p, p + 4) : undefined;
    if (masked) p += 4;
    if (buf.length - p < len) break;
    const payload = Buffer.from(buf.subarray(p, p + len));
    if (mask !== undefined)
      for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] as number) ^ (mask[i % 4] as number);
    frames.push({ opcode: b0 & 0x0f, payload });
    at = p + len;
  }
  return { frames, rest: buf.subarray(at) };
}

/** The fake's streaming server. */
export class FakeStreamingServer {
  readonly #pending = new Map<string, PendingExec>();
  readonly #sockets = new Set<Duplex>();
  #server: Server | undefined;
  #url: Promise<string> | undefined;

  constructor(readonly deps: ExecDeps) {}

  /** Registers an exec session and returns its URL (starting the server on first use). */
  async execUrl(session: PendingExec): Promise<string> {
    const base = await this.#start();
    const token = randomBytes(12).toString('base64url');
    this.#pending.set(token, session);
    return `${base}/exec/${token}`;
  }

  #start(): Promise<string> {
    this.#url ??= new Promise((resolve, reject) => {
      const server = createServer((_req, res) => {
        res.writeHead(400, { 'Content-Type': 'text/plain' }).end('Upgrade request required');
      });
      server.on('upgrade', (req, socket, head) => {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => socket.destroy());
        void this.#serve(req, socket, head);
      });
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        this.#server = server;
        resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      });
    });
    return this.#url;
  }

  async #serve(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const refuse = (code: number, text: string): void => {
      socket.end(
        `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? 'Error'}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
      );
    };
    const token = /^\/exec\/([^/?]+)/.exec(req.url ?? '')?.[1];
    const session = token === undefined ? undefined : this.#pending.get(token);
    if (token === undefined || session === undefined) return refuse(404, 'unknown or used streaming token');
    const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
    if (upgrade === 'spdy/3.1') return this.#serveSpdy(req, socket, head, token, session, refuse);
    if (upgrade !== 'websocket') {
      return refuse(400, 'the fake streaming server speaks WebSocket and SPDY/3.1 only');
    }
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim());
    const protocol = PROTOCOLS.find((p) => offered.includes(p));
    if (protocol === undefined)
      return refuse(403, `requested protocol(s) are not supported: ${offered.join(', ')}`);
    this.#pending.delete(token);
    const accept = createHash('sha1')
      .update(`${String(req.headers['sec-websocket-key'] ?? '')}${WS_GUID}`)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`,
    );
    let buffered = head;
    const onData = (chunk: Buffer): void => {
      const { frames, rest } = parseClientFrames(Buffer.concat([buffered, chunk]));
      buffered = rest;
      for (const f of frames) {
        if (f.opcode === 0x9)
          socket.write(wsFrame(0xa, f.payload)); // ping → pong
        else if (f.opcode === 0x8) socket.end(wsFrame(0x8, Buffer.alloc(0)));
      }
    };
    socket.on('data', onData);
    const send = (channel: number, data: string | Uint8Array): void => {
      if (!socket.writable) return;
      const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data);
      socket.write(wsFrame(0x2, Buffer.concat([Buffer.from([channel]), bytes])));
    };
    // The kubelet's server first writes an empty message on the lowest writable channel.
    send(session.stdout ? 1 : 2, Buffer.alloc(0));
    let status: object;
    try {
      const result = await runExecSync(this.deps, session.containerId, session.cmd, 0);
      if (session.stdout && result.stdout !== '') send(1, result.stdout);
      if (session.stderr && result.stderr !== '') send(2, result.stderr);
      status =
        result.exitCode === 0
          ? { metadata: {}, status: 'Success' }
          : nonZeroExitStatus(session.cmd, result.exitCode);
    } catch (err) {
      status = { metadata: {}, status: 'Failure', message: (err as Error).message };
    }
    send(3, JSON.stringify(status));
    if (socket.writable) socket.end(wsFrame(0x8, Buffer.from([0x03, 0xe8])));
  }

  /** SPDY/3.1 with `v4.channel.k8s.io`: the streams the client opens by `streamtype`. */
  #serveSpdy(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    token: string,
    session: PendingExec,
    refuse: (code: number, text: string) => void,
  ): void {
    const offered = (req.headers['x-stream-protocol-version'] ?? '')
      .toString()
      .split(',')
      .map((p) => p.trim());
    if (!offered.includes(SPDY_PROTOCOL)) {
      refuse(
        403,
        `unable to upgrade: unable to negotiate protocol: client supports ${JSON.stringify(offered)}, server supports ["${SPDY_PROTOCOL}"]`,
      );
      return;
    }
    this.#pending.delete(token);
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${SPDY_PROTOCOL}\r\n\r\n`,
    );
    const expected = new Set(['error']);
    if (session.stdout) expected.add('stdout');
    if (session.stderr && session.tty !== true) expected.add('stderr');
    if (session.stdin === true) expected.add('stdin');
    if (session.tty === true) expected.add('resize');
    const streams = new Map<string, SpdyStream>();
    let started = false;
    const conn = new SpdyConnection(socket, {
      server: true,
      head,
      onStream: (s) => {
        const type = s.headers.streamtype?.[0] ?? '';
        streams.set(type, s);
        s.read(
          () => {},
          () => {},
        );
        if (!started && [...expected].every((t) => streams.has(t))) {
          started = true;
          void run();
        }
      },
    });
    const run = async (): Promise<void> => {
      let status: object;
      try {
        const result = await runExecSync(this.deps, session.containerId, session.cmd, 0);
        if (result.stdout !== '') streams.get('stdout')?.write(Buffer.from(result.stdout));
        if (result.stderr !== '') streams.get('stderr')?.write(Buffer.from(result.stderr));
        status =
          result.exitCode === 0
            ? { metadata: {}, status: 'Success' }
            : nonZeroExitStatus(session.cmd, result.exitCode);
      } catch (err) {
        status = { metadata: {}, status: 'Failure', message: (err as Error).message };
      }
      streams.get('stdout')?.end();
      streams.get('stderr')?.end();
      const errorStream = streams.get('error');
      errorStream?.write(Buffer.from(JSON.stringify(status)));
      errorStream?.end();
      conn.close();
    };
  }

  /** Closes the server and every session. */
  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
    this.#pending.clear();
    const server = this.#server;
    this.#server = undefined;
    this.#url = undefined;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * The kubelet's "proxy the stream" step for `/exec`, `/attach` and `/portForward`: the
 * runtime's CRI call returned a streaming-server URL; the client's upgrade request (SPDY or
 * WebSocket, whatever it asked for) is replayed to that URL and the two connections are
 * spliced, so the runtime's answer — `101 Switching Protocols` or a refusal — reaches the
 * client unchanged and the streams flow both ways with TCP backpressure.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';

/** Headers that must not be replayed to the runtime. */
const DROPPED_HEADERS = new Set(['authorization', 'host', 'proxy-authorization']);

/** Whether `req` asks to switch protocols (`Connection: Upgrade` plus an `Upgrade` header). */
export function isUpgradeRequest(req: IncomingMessage): boolean {
  const connection = String(req.headers.connection ?? '').toLowerCase();
  return req.headers.upgrade !== undefined && connection.split(',').some((t) => t.trim() === 'upgrade');
}

/** The raw request head replayed to `target`. */
export function upgradeRequestHead(req: IncomingMessage, target: URL): string {
  const lines = [
    `${req.method ?? 'GET'} ${target.pathname}${target.search} HTTP/1.1`,
    `Host: ${target.host}`,
  ];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] ?? '';
    if (DROPPED_HEADERS.has(name.toLowerCase())) continue;
    lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Opens the connection to a streaming URL; resolves once connected. */
export type StreamingDialer = (target: URL) => Promise<Duplex>;

/** The default {@link StreamingDialer}: TCP, or TLS (unverified, as the kubelet's) for `https:`. */
export const dialStreamingServer: StreamingDialer = (target) =>
  new Promise((resolve, reject) => {
    const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const onConnect = (): void => {
      upstream.off('error', reject);
      resolve(upstream);
    };
    const upstream: Socket =
      target.protocol === 'https:'
        ? tlsConnect({ host, port, servername: host, rejectUnauthorized: false }, onConnect)
        : netConnect({ host, port }, onConnect);
    upstream.once('error', reject);
  });

/**
 * Connects to `target` (with `dial`), replays the upgrade request and splices `client` with
 * it. Resolves once the connection is open (rejects when it cannot be opened; the caller then
 * answers the client). Either side closing closes the other.
 */
export function proxyUpgrade(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  target: URL,
  dial: StreamingDialer = dialStreamingServer,
): Promise<void> {
  return dial(target).then((upstream) => {
    upstream.write(upgradeRequestHead(req, target));
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
    const close = (): void => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', close);
    upstream.on('close', close);
    client.on('error', close);
    client.on('close', close);
  });
}

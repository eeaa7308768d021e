/**
 * `host:port` text, as Go's `net.JoinHostPort` writes it.
 *
 * @module
 */

/**
 * `host:port`, with the host in brackets when it contains a colon (an IPv6 address):
 * `10.0.0.1:80`, `[fd00::1]:80` — Go's `net.JoinHostPort`.
 */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

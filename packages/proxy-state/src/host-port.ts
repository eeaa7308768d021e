/**
 * `ip:port` text as the renderers and tracers write it.
 *
 * @module
 */

/** `ip:port`, with an IPv6 address in brackets (Go's `net.JoinHostPort`). */
export function joinHostPort(ip: string, port: number | string): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/**
 * Small helpers shared by the HTTP servers: bind-address parsing, Go's RFC 3339 time format,
 * and listening/closing with promises.
 *
 * @module
 */
import type { Server } from 'node:http';
import { ipFamilyOf } from '@nodeagent/core';

/** A `host:port` bind address that cannot be used. */
export class InvalidBindAddressError extends Error {
  override readonly name = 'InvalidBindAddressError';
}

/** A parsed bind address; `host` is `''` for "every address". */
export interface BindAddress {
  /** IP literal without brackets, or `''` for all addresses. */
  readonly host: string;
  /** TCP port (0 = pick a free one). */
  readonly port: number;
}

/**
 * Parses `0.0.0.0:10256`, `[::]:10256`, `:10256` or a bare IP (then `defaultPort`).
 * @throws InvalidBindAddressError
 */
export function parseBindAddress(text: string, defaultPort: number): BindAddress {
  const t = text.trim();
  let host = t;
  let portText: string | undefined;
  const bracket = /^\[([^\]]*)\](?::(\d+))?$/.exec(t);
  if (bracket) {
    host = bracket[1] ?? '';
    portText = bracket[2];
  } else if (t.includes(':') && ipFamilyOf(t) !== null) {
    // A bare IPv6 address (IPv4-mapped ones included): no port.
    host = t;
  } else {
    const i = t.lastIndexOf(':');
    if (i >= 0) {
      host = t.slice(0, i);
      portText = t.slice(i + 1);
    }
  }
  if (host !== '' && ipFamilyOf(host) === null) {
    throw new InvalidBindAddressError(
      `bind address ${JSON.stringify(text)}: ${JSON.stringify(host)} is not an IP`,
    );
  }
  const port = portText === undefined ? defaultPort : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535 || portText === '') {
    throw new InvalidBindAddressError(`bind address ${JSON.stringify(text)}: port must be 0-65535`);
  }
  return { host, port };
}

/**
 * A time as Go's `time.Time` marshals to JSON (RFC 3339 with nanoseconds, trailing zeros of
 * the fraction dropped), in UTC. Zero (`undefined`) is Go's zero time.
 */
export function goTime(ms: number | undefined): string {
  if (ms === undefined) return '0001-01-01T00:00:00Z';
  const iso = new Date(ms).toISOString(); // 2024-01-02T03:04:05.678Z
  const [base, frac = '000Z'] = iso.split('.');
  const digits = frac.slice(0, -1).replace(/0+$/, '');
  return digits === '' ? `${base}Z` : `${base}.${digits}Z`;
}

/** Starts listening; resolves with the bound port. */
export function listen(server: Server, address: BindAddress): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    const done = () => {
      server.off('error', onError);
      const a = server.address();
      resolve(typeof a === 'object' && a !== null ? a.port : address.port);
    };
    if (address.host === '') server.listen(address.port, done);
    else server.listen(address.port, address.host, done);
  });
}

/** Closes a server and every open connection. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * CRI endpoint parsing: `unix:///absolute/path` for a local runtime socket and
 * `tcp://host:port` for a remote one, validated before any channel is created.
 *
 * @module
 */

/** A validated CRI endpoint. */
export type CriEndpoint =
  | {
      /** Unix domain socket. */
      readonly kind: 'unix';
      /** Absolute socket path. */
      readonly path: string;
    }
  | {
      /** TCP (plaintext gRPC). */
      readonly kind: 'tcp';
      /** Host name or IP address (IPv6 without brackets). */
      readonly host: string;
      /** Port, 1-65535. */
      readonly port: number;
    };

/** Thrown for an endpoint that is not `unix:///absolute/path` or `tcp://host:port`. */
export class InvalidEndpointError extends Error {
  /**
   * @param endpoint the rejected input.
   * @param reason what is wrong with it.
   */
  constructor(
    readonly endpoint: string,
    reason: string,
  ) {
    super(
      `invalid CRI endpoint ${JSON.stringify(endpoint)}: ${reason} (expected unix:///absolute/path or tcp://host:port)`,
    );
    this.name = 'InvalidEndpointError';
  }
}

/** containerd's default CRI socket, used when nothing else is configured. */
export const DEFAULT_CRI_ENDPOINT = 'unix:///run/containerd/containerd.sock';

// sockaddr_un.sun_path holds 108 bytes including the terminating NUL on Linux.
const MAX_UNIX_PATH_BYTES = 107;

/**
 * Parses and validates a CRI endpoint.
 *
 * @throws {@link InvalidEndpointError} for any other scheme, a relative or over-long socket
 * path, a missing host or an out-of-range port.
 *
 * @example
 * ```ts
 * parseEndpoint('unix:///run/containerd/containerd.sock'); // { kind: 'unix', path: '/run/…' }
 * parseEndpoint('tcp://10.0.0.5:10010'); // { kind: 'tcp', host: '10.0.0.5', port: 10010 }
 * ```
 */
export function parseEndpoint(endpoint: string): CriEndpoint {
  if (endpoint.startsWith('unix://')) {
    const path = endpoint.slice('unix://'.length);
    if (!path.startsWith('/')) throw new InvalidEndpointError(endpoint, 'the socket path must be absolute');
    if (path.includes('\0')) throw new InvalidEndpointError(endpoint, 'the socket path contains a NUL byte');
    if (Buffer.byteLength(path) > MAX_UNIX_PATH_BYTES) {
      throw new InvalidEndpointError(endpoint, `the socket path is longer than ${MAX_UNIX_PATH_BYTES} bytes`);
    }
    return { kind: 'unix', path };
  }
  if (endpoint.startsWith('tcp://')) {
    const rest = endpoint.slice('tcp://'.length);
    const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:/[\]\s]+)):(\d{1,5})$/.exec(rest);
    if (!match) throw new InvalidEndpointError(endpoint, 'expected host:port ([v6addr]:port for IPv6)');
    const host = match[1] ?? match[2] ?? '';
    const port = Number(match[3]);
    if (port < 1 || port > 65535) throw new InvalidEndpointError(endpoint, `port ${port} is out of range`);
    return { kind: 'tcp', host, port };
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(endpoint)?.[1];
  throw new InvalidEndpointError(
    endpoint,
    scheme === undefined ? 'no scheme' : `unsupported scheme ${JSON.stringify(scheme)}`,
  );
}

/** The @grpc/grpc-js target string for an endpoint. */
export function grpcTarget(endpoint: CriEndpoint): string {
  if (endpoint.kind === 'unix') return `unix://${endpoint.path}`;
  return endpoint.host.includes(':')
    ? `ipv6:[${endpoint.host}]:${endpoint.port}`
    : `dns:${endpoint.host}:${endpoint.port}`;
}

/** Formats an endpoint back into its `unix://` / `tcp://` form. */
export function formatEndpoint(endpoint: CriEndpoint): string {
  if (endpoint.kind === 'unix') return `unix://${endpoint.path}`;
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return `tcp://${host}:${endpoint.port}`;
}

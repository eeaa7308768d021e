/**
 * Typed errors of the informer.
 *
 * @module
 */
import type { Status } from './types.js';

/** An error response of the API server: an HTTP status or an in-stream `ERROR` event. */
export class StatusError extends Error {
  override readonly name = 'StatusError';
  /** The HTTP status code (or the `code` of an in-stream Status). */
  readonly code: number;
  /** The Status `reason` (`Expired`, `Gone`, `NotFound`, …) when the server sent one. */
  readonly reason: string | undefined;
  /** The Status body, when the server sent one. */
  readonly status: Status | undefined;

  constructor(code: number, status?: Status, context?: string) {
    const what = status?.message ?? status?.reason ?? `HTTP ${code}`;
    super(context ? `${context}: ${what} (${code})` : `${what} (${code})`);
    this.code = code;
    this.reason = status?.reason;
    this.status = status;
  }

  /** True for 410 Gone / reason Expired: the requested resource version is too old. */
  get isExpired(): boolean {
    return this.code === 410 || this.reason === 'Expired' || this.reason === 'Gone';
  }
}

/** A watch stream carried a line that is not a valid watch event. */
export class WatchDecodeError extends Error {
  override readonly name = 'WatchDecodeError';
  /** The offending line (truncated to 200 characters). */
  readonly line: string;
  constructor(line: string, cause?: unknown) {
    const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
    super(`malformed watch event: ${shown}`, cause === undefined ? undefined : { cause });
    this.line = shown;
  }
}

/** A watch was aborted because no bytes arrived within the idle timeout. */
export class WatchIdleTimeoutError extends Error {
  override readonly name = 'WatchIdleTimeoutError';
  /** The idle timeout that expired, in milliseconds. */
  readonly idleTimeoutMs: number;
  constructor(idleTimeoutMs: number) {
    super(`watch idle for ${idleTimeoutMs} ms; aborting and rewatching`);
    this.idleTimeoutMs = idleTimeoutMs;
  }
}

/** `start()` or `waitForSync()` gave up because the informer was stopped before it synced. */
export class InformerStoppedError extends Error {
  override readonly name = 'InformerStoppedError';
  constructor(what = 'informer') {
    super(`${what} was stopped before it synced`);
  }
}

/** An object without `metadata.name` cannot be keyed. */
export class ObjectKeyError extends Error {
  override readonly name = 'ObjectKeyError';
  constructor(message: string) {
    super(message);
  }
}

/** The server's TLS certificate could not be verified (wrong or missing CA, wrong host name, expired). */
export class TlsVerificationError extends Error {
  override readonly name = 'TlsVerificationError';
  /** Node's verification error code, e.g. `SELF_SIGNED_CERT_IN_CHAIN`, `ERR_TLS_CERT_ALTNAME_INVALID`. */
  readonly code: string;
  /** The server, e.g. `https://10.96.0.1:443`. */
  readonly server: string;
  constructor(server: string, cause: Error & { code?: string | undefined }) {
    super(
      `TLS verification of ${server} failed: ${cause.message} (${cause.code}); check the cluster's ` +
        'certificate-authority(-data) and server name in the kubeconfig',
      { cause },
    );
    this.code = cause.code ?? 'UNKNOWN';
    this.server = server;
  }
}

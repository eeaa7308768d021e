/**
 * Node socket errors spelled as Go's `net` package spells them, so probe messages read as the
 * kubelet's (`dial tcp 10.1.2.3:80: connect: connection refused`).
 *
 * @module
 */

const SYSCALL_TEXT: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connect: connection refused',
  EHOSTUNREACH: 'connect: no route to host',
  ENETUNREACH: 'connect: network is unreachable',
  EADDRNOTAVAIL: 'connect: cannot assign requested address',
  EACCES: 'connect: permission denied',
  EPERM: 'connect: operation not permitted',
  ECONNRESET: 'read: connection reset by peer',
  EPIPE: 'write: broken pipe',
};

/** The text of a dial error to `address` (`host:port`), as Go's `net.OpError` prints it. */
export function dialErrorText(address: string, error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'ETIMEDOUT') return `dial tcp ${address}: i/o timeout`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
    return `dial tcp: lookup ${host}: no such host`;
  }
  const text = typeof code === 'string' ? SYSCALL_TEXT[code] : undefined;
  return `dial tcp ${address}: ${text ?? (error instanceof Error ? error.message : String(error))}`;
}

/** True for errors that happened while connecting (Go reports them as `dial tcp ...`). */
export function isDialError(error: unknown): boolean {
  const syscall = (error as { syscall?: unknown } | undefined)?.syscall;
  return syscall === 'connect' || syscall === 'getaddrinfo';
}

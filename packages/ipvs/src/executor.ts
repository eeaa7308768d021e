/**
 * The side-effect boundary: everything that touches IPVS, ipsets or the dummy interface goes
 * through an {@link IpvsExecutor}. `SpawnIpvsExecutor` runs the real tools; `FakeIpvsExecutor`
 * (from `@nodeagent/ipvs/testing`) applies the same operations to an in-memory table.
 *
 * @module
 */
import { CommandError } from '@nodeagent/core';
import type { ConnectionCounts } from './diff.js';
import type { IpvsState } from './model.js';
import type { IpvsOperation } from './operations.js';

/** Reads and changes the IPVS table, ipsets and the dummy interface's addresses. */
export interface IpvsExecutor {
  /** The current state: virtual/real servers, bound addresses, and every ipset. */
  read(): Promise<IpvsState>;
  /**
   * Applies operations in order. Not atomic: operations before a failing one stay applied.
   * @throws IpvsOperationError (or a command error of the real executor) on the first failure.
   */
  apply(operations: readonly IpvsOperation[]): Promise<void>;
  /**
   * Sets the IPVS connection timeouts (`ipvsadm --set tcp tcpfin udp`), in whole seconds
   * (durations are cut to seconds); a 0 leaves that timeout as it is.
   */
  configureTimeouts(timeouts: IpvsTimeouts): Promise<void>;
  /** The ipset tool's version text (`ipset --version`, e.g. `ipset v7.17, protocol version: 7`). */
  ipsetVersion(): Promise<string>;
}

/** kube-proxy's `--ipvs-tcp-timeout`, `--ipvs-tcpfin-timeout` and `--ipvs-udp-timeout`; 0 = leave as is. */
export interface IpvsTimeouts {
  /** Idle TCP connections, milliseconds. @default 0 */
  readonly tcpMs?: number;
  /** TCP connections after a FIN, milliseconds. @default 0 */
  readonly tcpFinMs?: number;
  /** UDP flows, milliseconds. @default 0 */
  readonly udpMs?: number;
}

/** Timeouts as the whole seconds the kernel takes (`[tcp, tcpfin, udp]`, 0 = unchanged). */
export function timeoutSeconds(t: IpvsTimeouts): [number, number, number] {
  const s = (ms: number | undefined) => {
    const v = ms ?? 0;
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`IPVS timeout ${v}ms must be >= 0`);
    return Math.min(Math.floor(v / 1000), 2 ** 32 - 1);
  };
  return [s(t.tcpMs), s(t.tcpFinMs), s(t.udpMs)];
}

/** Where graceful termination reads real-server connection counts from. */
export interface IpvsStatsSource {
  /** Active and inactive connection counts keyed by `uniqueRealServerKey(vs, rs)`. */
  readConnections(): Promise<ReadonlyMap<string, ConnectionCounts>>;
}

/** An operation the (fake) kernel refused; the message mimics the tools' errors. */
export class IpvsOperationError extends Error {
  override readonly name = 'IpvsOperationError';
  /** The operation that failed. */
  readonly operation: IpvsOperation;
  /** Its index in the applied list. */
  readonly index: number;
  /** @param operation the failed operation; @param index its position; @param message the error text. */
  constructor(operation: IpvsOperation, index: number, message: string) {
    super(`operation ${index} (${operation.kind}) failed: ${message}`);
    this.operation = operation;
    this.index = index;
  }
}

/** A failed tool call of the real executor. */
export class IpvsCommandError extends CommandError {
  override readonly name = 'IpvsCommandError';
}

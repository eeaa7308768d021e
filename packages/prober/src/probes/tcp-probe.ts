/**
 * The `tcpSocket` probe (upstream `pkg/probe/tcp`): a TCP connect within the timeout, then close.
 *
 * @module
 */
import { connect } from 'node:net';
import { dialErrorText } from './go-net-errors.js';
import type { ProbeRun } from './probe-run.js';
import { joinHostPort } from './resolve-port.js';

/**
 * Connects to `host:port` within `timeoutMs`: success when the connection opens (it is closed
 * at once), failure with Go's dial error text otherwise (`dial tcp 10.0.0.5:80: i/o timeout`).
 * Never a probe error.
 */
export function tcpProbe(
  host: string,
  port: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ProbeRun> {
  const address = joinHostPort(host, port);
  return new Promise<ProbeRun>((resolve) => {
    const socket = connect({ host, port });
    let done = false;
    const finish = (run: ProbeRun): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(run);
    };
    const onAbort = (): void =>
      finish({ outcome: 'failure', output: `dial tcp ${address}: operation was canceled` });
    const timer = setTimeout(
      () => finish({ outcome: 'failure', output: `dial tcp ${address}: i/o timeout` }),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => finish({ outcome: 'success', output: '' }));
    socket.once('error', (error) => finish({ outcome: 'failure', output: dialErrorText(address, error) }));
  });
}

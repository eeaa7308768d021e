/**
 * The `grpc` probe (upstream `pkg/probe/grpc`): plaintext, connect to podIP:port and call
 * `grpc.health.v1.Health/Check` with the probe's `service` within the timeout; only `SERVING`
 * succeeds. Every problem is a failure with upstream's message, never a probe error.
 *
 * @module
 */
import { Client, credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { formatGoDuration, joinHostPort } from '@nodeagent/core';
import {
  decodeHealthCheckResponse,
  encodeHealthCheckRequest,
  HEALTH_CHECK_PATH,
  servingStatusName,
} from './grpc-health.js';
import type { ProbeRun } from './probe-run.js';

/** Runs one health check of `service` at `host:port`. */
export async function grpcProbe(
  host: string,
  port: number,
  service: string,
  timeoutMs: number,
  userAgent: string,
  signal?: AbortSignal,
): Promise<ProbeRun> {
  const addr = joinHostPort(host, port);
  const timeoutText = formatGoDuration(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  let client: Client;
  try {
    client = new Client(addr, credentials.createInsecure(), {
      'grpc.primary_user_agent': userAgent,
      'grpc.enable_retries': 0,
      'grpc.max_reconnect_backoff_ms': 1000,
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.enable_http_proxy': 0,
    });
  } catch (error) {
    return {
      outcome: 'failure',
      output: `error: failed to connect service at ${JSON.stringify(addr)}: ${message(error)}`,
    };
  }
  // The worker's signal lives as long as the worker: whatever is added to it here is removed.
  let onAbort: (() => void) | undefined;
  try {
    const ready = await new Promise<Error | undefined>((resolve) => client.waitForReady(deadline, resolve));
    if (ready !== undefined) {
      return {
        outcome: 'failure',
        output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${timeoutText}: context deadline exceeded`,
      };
    }
    if (signal?.aborted)
      return { outcome: 'failure', output: `error: health rpc probe failed: context canceled` };
    const result = await new Promise<{ error: ServiceError | null; value: number | undefined }>((resolve) => {
      const call = client.makeUnaryRequest(
        HEALTH_CHECK_PATH,
        (s: string) => encodeHealthCheckRequest(s),
        (b: Buffer) => decodeHealthCheckResponse(b),
        service,
        new Metadata(),
        { deadline },
        (error, value) => resolve({ error, value }),
      );
      onAbort = () => call.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    if (result.error !== null) {
      const e = result.error;
      if (e.code === status.UNIMPLEMENTED) {
        return {
          outcome: 'failure',
          output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${e.details}`,
        };
      }
      if (e.code === status.DEADLINE_EXCEEDED) {
        return { outcome: 'failure', output: `timeout: health rpc did not complete within ${timeoutText}` };
      }
      return {
        outcome: 'failure',
        output: `error: health rpc probe failed: rpc error: code = ${codeName(e.code)} desc = ${e.details}`,
      };
    }
    const servingStatus = result.value ?? 0;
    if (servingStatus !== 1) {
      return {
        outcome: 'failure',
        output: `service unhealthy (responded with ${JSON.stringify(servingStatusName(servingStatus))})`,
      };
    }
    return { outcome: 'success', output: 'service healthy' };
  } finally {
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
    client.close();
  }
}

/** grpc-go's code names (`codes.Code.String()`). */
function codeName(code: number): string {
  const names = [
    'OK',
    'Canceled',
    'Unknown',
    'InvalidArgument',
    'DeadlineExceeded',
    'NotFound',
    'AlreadyExists',
    'PermissionDenied',
    'ResourceExhausted',
    'FailedPrecondition',
    'Aborted',
    'OutOfRange',
    'Unimplemented',
    'Internal',
    'Unavailable',
    'DataLoss',
    'Unauthenticated',
  ];
  return names[code] ?? `Code(${code})`;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

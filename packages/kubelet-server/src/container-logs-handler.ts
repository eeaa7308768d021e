/**
 * `GET /containerLogs/{namespace}/{pod}/{container}` as the kubelet answers it: the query
 * decoded and validated as `PodLogOptions` (400 `Unable to decode query.`, 422
 * `Invalid request.`), the pod and container looked up (404), the instance chosen from the
 * pod status (`previous` reads the last terminated one), its log path asked from the runtime,
 * and the file streamed with {@link readContainerLog}.
 *
 * @module
 */
import { access } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { type Clock, realClock } from '@nodeagent/core';
import { ContainerState, isNotFound } from '@nodeagent/cri';
import { readContainerLog } from './container-log-reader.js';
import type { KubeletServerHost, KubeletServerRuntime } from './kubelet-server-options.js';
import { containerSpec, KubeletRequestError, logContainerId } from './pod-containers.js';
import {
  PodLogOptionsDecodeError,
  parsePodLogOptions,
  rfc3339ToNs,
  validatePodLogOptions,
} from './pod-log-options.js';

/** One followed or read log, for diagnostics. */
export interface LogStreamInfo {
  /** The log file. */
  readonly path: string;
  /** Bytes read from it so far. */
  readonly bytesRead: number;
}

/** What the handler needs. */
export interface ContainerLogsContext {
  readonly host: KubeletServerHost;
  readonly runtime: KubeletServerRuntime;
  readonly clock?: Clock;
  readonly pollMs?: number;
  /** Open streams (added while reading, removed after). */
  readonly streams: Set<{ path: string; bytesRead: number }>;
}

/** Serves one container-log request; `segments` are the path parts after `/containerLogs/`. */
export async function serveContainerLogs(
  ctx: ContainerLogsContext,
  segments: readonly string[],
  query: URLSearchParams,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const [namespace = '', podName = '', containerName = ''] = segments;
  if (podName === '') throw new KubeletRequestError(400, '{"message": "Missing podID."}');
  if (containerName === '') throw new KubeletRequestError(400, '{"message": "Missing container name."}');
  let opts: ReturnType<typeof parsePodLogOptions>;
  try {
    opts = parsePodLogOptions(query);
  } catch (err) {
    if (err instanceof PodLogOptionsDecodeError)
      throw new KubeletRequestError(400, '{"message": "Unable to decode query."}');
    throw err;
  }
  if (validatePodLogOptions(opts).length > 0)
    throw new KubeletRequestError(422, '{"message": "Invalid request."}');
  const pod = ctx.host.getPodByName(namespace, podName);
  if (pod === undefined) throw new KubeletRequestError(404, `pod "${podName}" does not exist`);
  if (containerSpec(pod, containerName) === undefined) {
    throw new KubeletRequestError(404, `container "${containerName}" not found in pod "${podName}"`);
  }
  const id = logContainerId(pod, containerName, opts.previous);
  let logPath: string;
  try {
    logPath = (await ctx.runtime.containerStatus({ containerId: id })).status?.logPath ?? '';
  } catch (err) {
    if (isNotFound(err))
      throw new KubeletRequestError(400, `failed to get container status "${id}": ${err.message}`);
    throw err;
  }
  if (logPath === '')
    throw new KubeletRequestError(400, `container "${containerName}" in pod "${podName}" has no log file`);
  const clock = ctx.clock ?? realClock;
  let sinceNs: bigint | undefined;
  if (opts.sinceTime !== undefined) sinceNs = rfc3339ToNs(opts.sinceTime);
  else if (opts.sinceSeconds !== undefined)
    sinceNs = BigInt(clock.now() - opts.sinceSeconds * 1000) * 1_000_000n;
  try {
    await access(logPath);
  } catch (err) {
    throw new KubeletRequestError(400, `failed to open log file "${logPath}": ${(err as Error).message}`);
  }
  const info = { path: logPath, bytesRead: 0 };
  ctx.streams.add(info);
  try {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
    // Go's flushwriter: the headers go out at once, before the first line.
    res.flushHeaders();
    await readContainerLog(
      logPath,
      {
        timestamps: opts.timestamps,
        follow: opts.follow,
        ...(opts.tailLines !== undefined ? { tailLines: opts.tailLines } : {}),
        ...(opts.limitBytes !== undefined ? { limitBytes: opts.limitBytes } : {}),
        ...(sinceNs !== undefined ? { sinceNs } : {}),
      },
      res,
      {
        clock,
        signal,
        ...(ctx.pollMs !== undefined ? { pollMs: ctx.pollMs } : {}),
        onRead: (n) => {
          info.bytesRead += n;
        },
        isRunning: async () => {
          try {
            const s = await ctx.runtime.containerStatus({ containerId: id });
            return s.status?.state === ContainerState.CONTAINER_RUNNING;
          } catch {
            return false;
          }
        },
      },
    );
    res.end();
  } finally {
    ctx.streams.delete(info);
  }
}

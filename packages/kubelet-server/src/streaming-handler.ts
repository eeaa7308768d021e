/**
 * `/exec/{namespace}/{pod}/{container}`, `/attach/…` (also with the pod UID before the
 * container) and `/portForward/{namespace}/{pod}[/{uid}]`: the kubelet's streaming options
 * from the query (`command`, `input`, `output`, `error`, `tty`; `port`), the CRI call for a
 * streaming URL, then {@link proxyUpgrade} to it.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { CriError } from '@nodeagent/cri';
import type { KubeletServerHost, KubeletServerRuntime } from './kubelet-server-options.js';
import { containerSpec, KubeletRequestError, readySandboxId, runningContainerId } from './pod-containers.js';
import { proxyUpgrade, type StreamingDialer } from './stream-proxy.js';

/** The three streaming endpoints. */
export type StreamingKind = 'exec' | 'attach' | 'portForward';

/** The streams asked for (upstream `remotecommand.Options`). */
export interface StreamOptions {
  readonly stdin: boolean;
  readonly stdout: boolean;
  readonly stderr: boolean;
  readonly tty: boolean;
}

/** Reads the stream options of an exec/attach query (`"1"` means on), as upstream `NewOptions`. */
export function streamOptionsOf(query: URLSearchParams): StreamOptions {
  const tty = query.get('tty') === '1';
  const stdin = query.get('input') === '1';
  const stdout = query.get('output') === '1';
  let stderr = query.get('error') === '1';
  if (tty && stderr) stderr = false; // a TTY merges stderr into stdout
  if (!stdin && !stdout && !stderr) {
    throw new KubeletRequestError(400, 'you must specify at least 1 of stdin, stdout, stderr');
  }
  return { stdin, stdout, stderr, tty };
}

const HTTP_OF_CRI: Readonly<Record<string, number>> = {
  NOT_FOUND: 404,
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
  PERMISSION_DENIED: 403,
  UNIMPLEMENTED: 501,
};

/** Asks the runtime for the streaming URL of a request (path parts after the endpoint name). */
export async function streamingUrl(
  kind: StreamingKind,
  segments: readonly string[],
  query: URLSearchParams,
  host: KubeletServerHost,
  runtime: KubeletServerRuntime,
): Promise<URL> {
  const [namespace = '', podName = ''] = segments;
  const pod = host.getPodByName(namespace, podName);
  if (pod === undefined) throw new KubeletRequestError(404, 'pod does not exist');
  const uid = pod.metadata?.uid ?? '';
  try {
    if (kind === 'portForward') {
      const sandboxId = await readySandboxId(runtime, uid, podName);
      const port = query
        .getAll('port')
        .flatMap((p) => p.split(','))
        .filter((p) => p !== '')
        .map(Number);
      return new URL((await runtime.portForward({ podSandboxId: sandboxId, port })).url);
    }
    const containerName = segments.length >= 4 ? (segments[3] ?? '') : (segments[2] ?? '');
    if (containerSpec(pod, containerName) === undefined) {
      throw new KubeletRequestError(404, `container not found ("${containerName}")`);
    }
    const opts = streamOptionsOf(query);
    const containerId = await runningContainerId(runtime, uid, containerName);
    if (kind === 'exec') {
      const cmd = query.getAll('command');
      return new URL((await runtime.exec({ containerId, cmd, ...opts })).url);
    }
    return new URL((await runtime.attach({ containerId, ...opts })).url);
  } catch (err) {
    if (err instanceof CriError) throw new KubeletRequestError(HTTP_OF_CRI[err.code] ?? 500, err.message);
    throw err;
  }
}

/** Splices an upgrade request to `url`; failures to connect are written as 500 on the socket. */
export async function proxyToRuntime(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  url: URL,
  dial?: StreamingDialer,
): Promise<void> {
  try {
    await proxyUpgrade(req, socket, head, url, dial);
  } catch (err) {
    throw new KubeletRequestError(500, `error dialing backend: ${(err as Error).message}`);
  }
}

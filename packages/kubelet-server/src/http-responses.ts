/**
 * The kubelet server's answers: plain-text errors (also written raw on an upgrade socket, as
 * Go's `http.Error` would), JSON bodies, v1 `PodList`s, and `/runningpods/` from the runtime.
 *
 * @module
 * @internal
 */
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ContainerState, PodSandboxState } from '@nodeagent/cri';
import type { KubeletPod, KubeletServerRuntime } from './kubelet-server-options.js';

/** Writes a plain-text HTTP answer on a raw socket (an upgrade request that was refused). */
export function writeRaw(socket: Duplex, code: number, body: string): void {
  const bytes = Buffer.from(body, 'utf8');
  socket.end(
    `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Answers `res` with plain text (or destroys it when the headers already went out). */
export function sendText(
  res: ServerResponse,
  code: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(code, { 'Content-Type': contentType, 'X-Content-Type-Options': 'nosniff' }).end(body);
}

/** Answers `res` 200 with `body` as JSON. */
export function sendJson(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

/** A v1 `PodList` of `items`, as the kubelet encodes it. */
export function podList(items: readonly KubeletPod[]): unknown {
  return { kind: 'PodList', apiVersion: 'v1', metadata: {}, items };
}

/** `/runningpods/`: the runtime's ready sandboxes with their running containers, as v1 pods (upstream `ToAPIPod`). */
export async function runningPods(rt: KubeletServerRuntime): Promise<KubeletPod[]> {
  const [{ items }, { containers }] = await Promise.all([
    rt.listPodSandbox({ filter: { state: { state: PodSandboxState.SANDBOX_READY } } }),
    rt.listContainers({ filter: { state: { state: ContainerState.CONTAINER_RUNNING } } }),
  ]);
  return items.map((s) => ({
    metadata: {
      name: s.metadata?.name ?? '',
      namespace: s.metadata?.namespace ?? '',
      uid: s.metadata?.uid ?? '',
    },
    spec: {
      containers: containers
        .filter((c) => c.podSandboxId === s.id)
        .map((c) => ({ name: c.metadata?.name ?? '', image: c.image?.image ?? c.imageRef, resources: {} })),
    },
    status: {},
  }));
}

/**
 * `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward`, forwarded to the kubelet of
 * the pod's node as kube-apiserver does: the node's address from `status.addresses`
 * (InternalIP first, then Hostname, ExternalIP), the port from
 * `status.daemonEndpoints.kubeletEndpoint.Port`; HTTPS with the apiserver's kubelet client
 * certificate, the kubelet's serving certificate verified only when a CA is configured.
 * `pods/log` checks its `PodLogOptions` and container first (as `LogLocation`) and maps the
 * kubelet's refusals to Status objects (`GenericHttpResponseChecker`); the streaming
 * subresources go to the kubelet's `/exec`, `/attach`, `/portForward`: WebSocket v5
 * exec/attach translated to SPDY and WebSocket port-forward tunnelled as kube-apiserver
 * does (stream-translator.ts), SPDY and older WebSocket protocols spliced unchanged.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { ApiStatusError, badRequest, failureStatus, invalid, notFound } from './errors.js';
import type { KubeObject } from './object.js';
import { isTrueParam } from './query-params.js';
import type { ObjectStore } from './store.js';
import {
  isWebSocketRequestWithStreamCloseProtocol,
  isWebSocketRequestWithTunnelingProtocol,
  type KubeletStreamTarget,
  translateStream,
  tunnelPortForward,
} from './stream-translator.js';
import { webSocketHandshakeError } from './websocket.js';

/** How the mini-apiserver reaches kubelets (kube-apiserver's `--kubelet-client-*` flags). */
export interface KubeletClientOptions {
  /** PEM client certificate (`--kubelet-client-certificate`). */
  readonly cert?: string;
  /** PEM client key (`--kubelet-client-key`). */
  readonly key?: string;
  /** PEM CA to verify the kubelet's serving certificate (`--kubelet-certificate-authority`); unverified when absent. */
  readonly ca?: string;
  /** Address types tried in order (`--kubelet-preferred-address-types`). @default ['InternalIP', 'Hostname', 'ExternalIP'] */
  readonly preferredAddressTypes?: readonly string[];
}

/** The pod subresources forwarded to the node. */
export const NODE_PROXIED_POD_SUBRESOURCES: ReadonlySet<string> = new Set([
  'log',
  'exec',
  'attach',
  'portforward',
]);

interface PodShape {
  metadata?: { name?: string; namespace?: string };
  spec?: {
    nodeName?: string;
    containers?: { name: string }[];
    initContainers?: { name: string }[];
    ephemeralContainers?: { name: string }[];
  };
}

interface NodeShape {
  status?: {
    addresses?: { type?: string; address?: string }[];
    daemonEndpoints?: { kubeletEndpoint?: { Port?: number } };
  };
}

const POD_REF = { group: '', resource: 'pods' };

function getPod(store: ObjectStore, namespace: string, name: string): PodShape {
  const pod = store.tryGet('pods', namespace, name) as (KubeObject & PodShape) | undefined;
  if (pod === undefined) throw notFound(POD_REF, name);
  return pod;
}

function containerNames(pod: PodShape): string[] {
  const s = pod.spec;
  return [...(s?.containers ?? []), ...(s?.initContainers ?? []), ...(s?.ephemeralContainers ?? [])].map(
    (c) => c.name,
  );
}

/** The container a request addresses: the named one, or the only one (upstream `LogLocation`/`ExecLocation`). */
function resolveContainer(pod: PodShape, name: string, requested: string | null): string {
  let container = requested ?? '';
  if (container === '') {
    const all = pod.spec?.containers ?? [];
    if (all.length === 1) container = all[0]?.name ?? '';
    else {
      throw badRequest(
        `a container name must be specified for pod ${name}, choose one of: [${containerNames(pod).join(' ')}]`,
      );
    }
  }
  if (!containerNames(pod).includes(container))
    throw badRequest(`container ${container} is not valid for pod ${name}`);
  return container;
}

/** `https://<address>:<port>` of the kubelet on `nodeName`. @internal */
export function kubeletBase(store: ObjectStore, nodeName: string, client: KubeletClientOptions): URL {
  const node = store.tryGet('nodes', undefined, nodeName) as (KubeObject & NodeShape) | undefined;
  if (node === undefined) throw notFound({ group: '', resource: 'nodes' }, nodeName);
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 0;
  const addresses = node.status?.addresses ?? [];
  let address: string | undefined;
  for (const type of client.preferredAddressTypes ?? ['InternalIP', 'Hostname', 'ExternalIP']) {
    address = addresses.find((a) => a.type === type && a.address)?.address;
    if (address !== undefined) break;
  }
  if (address === undefined || port <= 0) {
    throw new ApiStatusError(
      failureStatus(
        500,
        'InternalError',
        `Internal error occurred: no preferred addresses found; known addresses: []`,
      ),
    );
  }
  return new URL(`https://${address.includes(':') ? `[${address}]` : address}:${port}`);
}

/** TLS options of a request to a kubelet. @internal */
export function tlsOptions(client: KubeletClientOptions): Record<string, unknown> {
  return {
    rejectUnauthorized: client.ca !== undefined,
    ...(client.ca !== undefined ? { ca: client.ca } : {}),
    ...(client.cert !== undefined ? { cert: client.cert } : {}),
    ...(client.key !== undefined ? { key: client.key } : {}),
  };
}

const GO_BOOL = /^(1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$/;

/** Validates `pods/log` query parameters as kube-apiserver (`PodLogOptions` decoding + `ValidatePodLogOptions`). */
export function podLogQuery(name: string, q: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  for (const b of ['follow', 'previous', 'timestamps', 'insecureSkipTLSVerifyBackend']) {
    const v = q.get(b);
    if (v === null || v === '') continue;
    if (!GO_BOOL.test(v)) throw badRequest(`strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
    if (/^(1|t|T|TRUE|true|True)$/.test(v) && b !== 'insecureSkipTLSVerifyBackend') out.set(b, 'true');
  }
  const ints: Record<string, number> = {};
  for (const i of ['sinceSeconds', 'tailLines', 'limitBytes']) {
    const v = q.get(i);
    if (v === null || v === '') continue;
    if (!/^[+-]?[0-9]+$/.test(v))
      throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
    ints[i] = Number(v);
    out.set(i, String(Number(v)));
  }
  const sinceTime = q.get('sinceTime');
  if (sinceTime !== null && sinceTime !== '') {
    if (
      !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(sinceTime) ||
      Number.isNaN(Date.parse(sinceTime))
    ) {
      throw badRequest(
        `parsing time ${JSON.stringify(sinceTime)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(sinceTime)} as "2006"`,
      );
    }
    out.set('sinceTime', sinceTime);
  }
  const causes: { field: string; message: string; reason: string }[] = [];
  if (ints.tailLines !== undefined && ints.tailLines < 0) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'tailLines',
      message: `Invalid value: ${ints.tailLines}: must be greater than or equal to 0`,
    });
  }
  if (ints.limitBytes !== undefined && ints.limitBytes < 1) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'limitBytes',
      message: `Invalid value: ${ints.limitBytes}: must be greater than 0`,
    });
  }
  if (ints.sinceSeconds !== undefined && sinceTime !== null && sinceTime !== '') {
    causes.push({
      reason: 'FieldValueForbidden',
      field: '',
      message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
    });
  } else if (ints.sinceSeconds !== undefined && ints.sinceSeconds < 1) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'sinceSeconds',
      message: `Invalid value: ${ints.sinceSeconds}: must be greater than 0`,
    });
  }
  if (causes.length > 0) throw invalid('', 'PodLogOptions', name, causes);
  return out;
}

/** Serves `GET pods/{name}/log` by streaming the kubelet's `/containerLogs`. */
export async function servePodLog(
  store: ObjectStore,
  client: KubeletClientOptions | undefined,
  namespace: string,
  name: string,
  q: URLSearchParams,
  res: ServerResponse,
): Promise<void> {
  const pod = getPod(store, namespace, name);
  const params = podLogQuery(name, q);
  const container = resolveContainer(pod, name, q.get('container'));
  const nodeName = pod.spec?.nodeName ?? '';
  if (nodeName === '') {
    // An unscheduled pod has no log yet: kube-apiserver answers an empty stream.
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end();
    return;
  }
  if (client === undefined)
    throw badRequest('mini-apiserver: no kubelet client configured (kubeletClient option)');
  const base = kubeletBase(store, nodeName, client);
  const path = `/containerLogs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${encodeURIComponent(container)}`;
  const url = new URL(`${path}${params.size > 0 ? `?${params}` : ''}`, base);
  await new Promise<void>((resolve, reject) => {
    const req = httpsRequest(url, { method: 'GET', ...tlsOptions(client) });
    res.on('close', () => req.destroy());
    req.on('error', (err) => {
      if (!res.headersSent) {
        reject(
          new ApiStatusError(failureStatus(500, 'InternalError', `Internal error occurred: ${err.message}`)),
        );
        return;
      }
      res.destroy();
      resolve();
    });
    req.on('response', (kres) => {
      const code = kres.statusCode ?? 500;
      if (code < 200 || code > 206) {
        const chunks: Buffer[] = [];
        kres.on('data', (c: Buffer) => chunks.push(c));
        kres.on('end', () => {
          const body = Buffer.concat(chunks)
            .toString('utf8')
            .slice(0, 1 << 16);
          if (code === 400) return reject(badRequest(body));
          if (code === 500)
            return reject(
              new ApiStatusError(failureStatus(500, 'InternalError', `Internal error occurred: ${body}`)),
            );
          const reason =
            code === 404
              ? 'NotFound'
              : code === 403
                ? 'Forbidden'
                : code === 401
                  ? 'Unauthorized'
                  : 'Unknown';
          const msg =
            code === 404
              ? 'the server could not find the requested resource'
              : code === 403
                ? 'the server does not allow access to the requested resource'
                : code === 401
                  ? 'the server has asked for the client to provide credentials'
                  : `the server responded with the status code ${code} but did not return more information`;
          reject(
            new ApiStatusError(
              failureStatus(code, reason, `${msg} ( pods/log ${name})`, { name, kind: 'pods/log' }),
            ),
          );
        });
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
      kres.pipe(res);
      kres.on('end', resolve);
      kres.on('error', () => {
        res.destroy();
        resolve();
      });
    });
    req.end();
  });
}

/** The kubelet path and query of a streaming subresource (upstream `ExecLocation`/`AttachLocation`/`PortForwardLocation`). */
export function streamingLocation(
  pod: PodShape,
  namespace: string,
  name: string,
  subresource: string,
  q: URLSearchParams,
): string {
  if (subresource === 'portforward') {
    const out = new URLSearchParams();
    for (const p of q.getAll('ports')) out.append('port', p);
    return `/portForward/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}${out.size > 0 ? `?${out}` : ''}`;
  }
  const container = resolveContainer(pod, name, q.get('container'));
  const out = new URLSearchParams();
  const on = isTrueParam;
  if (on(q.get('stdin'))) out.set('input', '1');
  if (on(q.get('stdout'))) out.set('output', '1');
  if (on(q.get('stderr'))) out.set('error', '1');
  if (on(q.get('tty'))) out.set('tty', '1');
  if (subresource === 'exec') for (const c of q.getAll('command')) out.append('command', c);
  const kind = subresource === 'exec' ? 'exec' : 'attach';
  return `/${kind}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${encodeURIComponent(container)}?${out}`;
}

/** Opens a TLS connection to the kubelet at `base`; rejects with `error dialing backend: …`. */
function dialKubelet(base: URL, client: KubeletClientOptions): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const upstream = tlsConnect(
      {
        host: base.hostname.replace(/^\[|\]$/g, ''),
        port: Number(base.port),
        servername: undefined,
        ...tlsOptions(client),
      },
      () => {
        upstream.off('error', onEarly);
        resolve(upstream);
      },
    );
    const onEarly = (err: Error): void => reject(new Error(`error dialing backend: ${err.message}`));
    upstream.once('error', onEarly);
  });
}

/** {@link dialKubelet} with the failure as kube-apiserver's 500 Status (before any upgrade was answered). */
function dialKubeletOrStatus(base: URL, client: KubeletClientOptions): Promise<Duplex> {
  return dialKubelet(base, client).catch((err: Error) => {
    throw new ApiStatusError(failureStatus(500, 'InternalError', `Internal error occurred: ${err.message}`));
  });
}

/** How a streaming upgrade was served (for the request log and counters). */
export type PodStreamMode = 'proxied' | 'translated' | 'tunneled';

/** Called when a translated or tunnelled session has an outcome code (upstream's stream metrics). */
export type PodStreamObserver = (mode: PodStreamMode, code: number) => void;

/**
 * Serves an upgrade request for a streaming pod subresource: a WebSocket exec/attach offering
 * `v5.channel.k8s.io` is translated to SPDY towards the kubelet, a WebSocket port-forward
 * offering `SPDY/3.1+portforward.k8s.io` is tunnelled (stream-translator.ts), anything else
 * (SPDY, older WebSocket protocols) is spliced to the kubelet unchanged. Resolves with the mode
 * once the connection is set up.
 */
export async function proxyPodStream(
  store: ObjectStore,
  client: KubeletClientOptions | undefined,
  namespace: string,
  name: string,
  subresource: string,
  q: URLSearchParams,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  observe?: PodStreamObserver,
): Promise<PodStreamMode> {
  const pod = getPod(store, namespace, name);
  const location = streamingLocation(pod, namespace, name, subresource, q);
  const nodeName = pod.spec?.nodeName ?? '';
  if (nodeName === '') throw badRequest(`pod ${name} does not have a host assigned`);
  if (client === undefined)
    throw badRequest('mini-apiserver: no kubelet client configured (kubeletClient option)');
  const base = kubeletBase(store, nodeName, client);
  const target: KubeletStreamTarget = {
    dial: () => dialKubelet(base, client),
    path: location,
    host: base.host,
  };
  const statusTarget: KubeletStreamTarget = { ...target, dial: () => dialKubeletOrStatus(base, client) };
  const translate = subresource !== 'portforward' && isWebSocketRequestWithStreamCloseProtocol(req);
  const tunnel = subresource === 'portforward' && isWebSocketRequestWithTunnelingProtocol(req);
  const handshakeError = translate || tunnel ? webSocketHandshakeError(req) : undefined;
  if (handshakeError !== undefined) throw badRequest(handshakeError);
  if (translate) {
    const on = isTrueParam;
    void translateStream(req, socket, head, target, {
      stdin: on(q.get('stdin')),
      stdout: on(q.get('stdout')),
      stderr: on(q.get('stderr')),
      tty: on(q.get('tty')),
    }).then((r) => observe?.('translated', r.code));
    return 'translated';
  }
  if (tunnel) {
    const r = await tunnelPortForward(req, socket, head, statusTarget);
    observe?.('tunneled', r.code);
    return 'tunneled';
  }
  const upstream = await statusTarget.dial();
  const lines = [`${req.method ?? 'GET'} ${location} HTTP/1.1`, `Host: ${base.host}`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const h = (req.rawHeaders[i] ?? '').toLowerCase();
    if (h === 'authorization' || h === 'host' || h === 'impersonate-user' || h === 'impersonate-group')
      continue;
    lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1] ?? ''}`);
  }
  upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
  if (head.length > 0) upstream.write(head);
  upstream.pipe(socket);
  socket.pipe(upstream);
  const close = (): void => {
    upstream.destroy();
    socket.destroy();
  };
  upstream.on('error', close);
  upstream.on('close', close);
  socket.on('error', close);
  socket.on('close', close);
  return 'proxied';
}

/**
 * The `httpGet` probe (upstream `pkg/probe/http/http.go`): TLS unverified, no keep-alive, no
 * proxy, no compression; redirects to the same host followed up to 10 times, a redirect to
 * another host returned as is (a warning); 200–399 success, anything else
 * `HTTP probe failed with statuscode: N`; at most 10 KiB of the body read.
 *
 * @module
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { ipFamilyOf, joinHostPort } from '@nodeagent/core';
import { dialErrorText, isDialError } from './go-net-errors.js';
import type { HTTPProbeRequest } from './http-request.js';
import { HTTPTransportError, http1Get, http1Request, type ProbeHTTPResponse } from './http1-exchange.js';
import { type Cancellable, ProbeCancel } from './probe-cancel.js';
import { errored, MAX_PROBE_OUTPUT_BYTES, type ProbeRun } from './probe-run.js';

const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);
/** Go's default redirect limit, which the kubelet's redirect checker keeps. */
const MAX_REDIRECTS = 10;

interface Target {
  readonly scheme: string;
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly url: string;
  readonly hostHeader: string | undefined;
}

class TimeoutSignal extends Error {}

/**
 * The one value a timed-out step is destroyed with: only its class is looked at, so one
 * instance serves every probe (an `Error` per timeout captures a stack each time).
 */
const TIMED_OUT = new TimeoutSignal('probe deadline exceeded');

/**
 * The probe's overall deadline (Go's `Client.Timeout`): expires once, calling the one step
 * (connect/headers or body read) that is waiting. Cheaper than an AbortController with
 * listeners per step at thousands of probes per second. Stopping the worker expires it too.
 */
class Deadline implements Cancellable {
  expired = false;
  /** What to do on expiry for the step in progress. */
  onExpire: (() => void) | undefined;
  timer: NodeJS.Timeout | undefined;
  readonly owner: ProbeCancel | undefined;

  constructor(owner: ProbeCancel | undefined) {
    this.owner = owner;
  }

  expire(): void {
    if (this.expired) return;
    this.expired = true;
    this.onExpire?.();
  }

  cancel(): void {
    this.expire();
  }

  /** Ends the deadline's timer and releases the owner's slot. */
  close(): void {
    clearTimeout(this.timer);
    if (this.owner !== undefined && this.owner.current === this) this.owner.current = undefined;
  }

  static expireIt(deadline: Deadline): void {
    deadline.expire();
  }
}

/** Sends `req` and classifies the answer like upstream `DoHTTPProbe`, within `timeoutMs` overall. */
export function httpProbe(req: HTTPProbeRequest, timeoutMs: number, signal?: AbortSignal): Promise<ProbeRun> {
  if (signal === undefined) return httpProbeWith(req, timeoutMs, undefined);
  const { cancel, detach } = ProbeCancel.fromSignal(signal);
  return httpProbeWith(req, timeoutMs, cancel).finally(detach);
}

/**
 * {@link httpProbe} with a worker's cancellation; with `errorsAsRuns` an unexpected failure
 * resolves as a probe error instead of rejecting. @internal
 */
export function httpProbeWith(
  req: HTTPProbeRequest,
  timeoutMs: number,
  cancel: ProbeCancel | undefined,
  errorsAsRuns = false,
): Promise<ProbeRun> {
  const deadline = new Deadline(cancel);
  deadline.timer = setTimeout(Deadline.expireIt, timeoutMs, deadline);
  if (cancel !== undefined) {
    if (cancel.aborted) deadline.expire();
    else cancel.current = deadline;
  }
  return probe(req, deadline).then(
    (run) => {
      deadline.close();
      return run;
    },
    (error: unknown) => {
      deadline.close();
      if (!errorsAsRuns) throw error;
      return errored(error instanceof Error ? error.message : String(error));
    },
  );
}

async function probe(req: HTTPProbeRequest, abort: Deadline): Promise<ProbeRun> {
  const first: Target = req;
  let target: Target = first;
  for (let redirects = 0; ; redirects++) {
    let response: ProbeHTTPResponse;
    try {
      response = await send(target, req.headers, abort);
    } catch (error) {
      return {
        outcome: 'failure',
        output: `Get ${JSON.stringify(target.url)}: ${requestErrorText(target, error)}`,
      };
    }
    const status = response.statusCode;
    const location = response.location;
    if (REDIRECT_CODES.has(status) && location !== undefined) {
      let next: URL;
      try {
        next = new URL(
          location,
          `${target.scheme}://${joinHostPort(target.host, target.port)}${target.path}`,
        );
      } catch {
        response.destroy();
        return {
          outcome: 'failure',
          output: `Get ${JSON.stringify(target.url)}: failed to parse Location header ${JSON.stringify(location)}`,
        };
      }
      const nextHost = next.hostname.replace(/^\[|\]$/g, '');
      if (nextHost !== first.host) return classify(status, await response.readBody().catch(() => ''));
      response.destroy();
      // Go's checker sees the requests made so far: the 10th redirect is not followed.
      if (redirects + 1 >= MAX_REDIRECTS) {
        return { outcome: 'failure', output: `Get ${JSON.stringify(location)}: stopped after 10 redirects` };
      }
      const relative = !/^[a-z][a-z0-9+.-]*:/i.test(location);
      const port = Number(next.port) || (next.protocol === 'https:' ? 443 : 80);
      target = {
        scheme: next.protocol.replace(/:$/, ''),
        host: nextHost,
        port,
        path: `${next.pathname}${next.search}`,
        url: next.href,
        hostHeader: relative ? target.hostHeader : undefined,
      };
      continue;
    }
    let body: string;
    try {
      body = await response.readBody();
    } catch (error) {
      const message =
        error instanceof TimeoutSignal
          ? 'context deadline exceeded (Client.Timeout or context cancellation while reading body)'
          : error instanceof Error
            ? error.message
            : String(error);
      return { outcome: 'failure', output: '', error: new Error(message) };
    }
    return classify(status, body);
  }
}

function classify(status: number, body: string): ProbeRun {
  if (status >= 200 && status < 400) {
    if (status >= 300)
      return { outcome: 'warning', output: `Probe terminated redirects, Response body: ${body}` };
    return { outcome: 'success', output: body };
  }
  // Upstream keeps the body out of the user-facing message (issue 99425).
  return { outcome: 'failure', output: `HTTP probe failed with statuscode: ${status}` };
}

function send(
  target: Target,
  headers: Readonly<Record<string, readonly string[]>>,
  deadline: Deadline,
): Promise<ProbeHTTPResponse> {
  if (target.scheme !== 'http' && target.scheme !== 'https') {
    return Promise.reject(new Error(`unsupported protocol scheme ${JSON.stringify(target.scheme)}`));
  }
  if (deadline.expired) return Promise.reject(TIMED_OUT);
  let request: Buffer;
  try {
    request = requestBytes(target, headers);
  } catch (error) {
    return Promise.reject(error);
  }
  if (target.scheme === 'http') {
    return http1Get(target.host, target.port, request, deadline, MAX_PROBE_OUTPUT_BYTES, TIMED_OUT);
  }
  return sendTLS(target, headers, deadline);
}

/**
 * The request bytes of `target` (also the check of its headers, for both schemes: Go checks
 * them before dialling), kept per prepared request: a worker sends the same request every
 * period.
 */
const requestOf = new WeakMap<Target, Buffer>();

function requestBytes(target: Target, headers: Readonly<Record<string, readonly string[]>>): Buffer {
  const known = requestOf.get(target);
  if (known !== undefined) return known;
  // Go's client sends the URL's host as is, port included (`10.0.0.1:80`), unless the probe
  // sets its own `Host`.
  const bytes = http1Request(
    target.path,
    target.hostHeader ?? joinHostPort(target.host, target.port),
    headers,
  );
  requestOf.set(target, bytes);
  return bytes;
}

/** HTTPS through `node:https` with verification off; its response read as a plain one is. */
function sendTLS(
  target: Target,
  headers: Readonly<Record<string, readonly string[]>>,
  deadline: Deadline,
): Promise<ProbeHTTPResponse> {
  return new Promise<ProbeHTTPResponse>((resolve, reject) => {
    let req: ClientRequest;
    const onAbort = (): void => {
      req?.destroy(TIMED_OUT);
    };
    try {
      req = httpsRequest(tlsOptions(target, headers));
    } catch (error) {
      reject(error);
      return;
    }
    deadline.onExpire = onAbort;
    req.once('response', (res: IncomingMessage) => {
      deadline.onExpire = undefined;
      resolve({
        statusCode: res.statusCode ?? 0,
        location: res.headers.location,
        readBody: () => readBody(res, deadline),
        destroy: () => res.destroy(),
      });
    });
    req.once('error', (error) => {
      deadline.onExpire = undefined;
      reject(error);
    });
    req.end();
  });
}

const tlsOptionsOf = new WeakMap<Target, RequestOptions>();

function tlsOptions(target: Target, headers: Readonly<Record<string, readonly string[]>>): RequestOptions {
  const known = tlsOptionsOf.get(target);
  if (known !== undefined) return known;
  const outgoing: Record<string, string | string[]> = {};
  for (const name in headers) {
    const values = headers[name] as readonly string[];
    outgoing[name] = values.length === 1 ? (values[0] as string) : [...values];
  }
  outgoing.Host = target.hostHeader ?? joinHostPort(target.host, target.port);
  const options: RequestOptions = {
    host: target.host,
    port: target.port,
    path: target.path,
    method: 'GET',
    headers: outgoing,
    agent: false,
    rejectUnauthorized: false,
    // SNI names a host, never an IP address.
    ...(ipFamilyOf(target.host) === null && target.host !== '' ? { servername: target.host } : {}),
  };
  tlsOptionsOf.set(target, options);
  return options;
}

/** Reads at most 10 KiB of the body, then closes the connection (a truncated body is fine). */
function readBody(res: IncomingMessage, deadline: Deadline): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: unknown): void => {
      deadline.onExpire = undefined;
      res.removeAllListeners('data');
      if (error !== undefined) reject(error);
      else resolve(Buffer.concat(chunks).subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8'));
    };
    const onAbort = (): void => {
      res.destroy();
      finish(TIMED_OUT);
    };
    if (deadline.expired) return onAbort();
    deadline.onExpire = onAbort;
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_PROBE_OUTPUT_BYTES) {
        res.destroy();
        finish();
      }
    });
    res.once('end', () => finish());
    res.once('error', (error) => finish(error));
    res.once('close', () => {
      if (!res.complete && size < MAX_PROBE_OUTPUT_BYTES) finish(new Error('unexpected EOF'));
    });
  });
}

function requestErrorText(target: Target, error: unknown): string {
  if (error instanceof TimeoutSignal)
    return 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
  if (error instanceof HTTPTransportError) return error.message;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') {
    return `net/http: invalid header field ${code === 'ERR_INVALID_CHAR' ? 'value' : 'name'}`;
  }
  if (isDialError(error)) return dialErrorText(joinHostPort(target.host, target.port), error);
  if (code === 'ECONNRESET' && (error as Error).message === 'socket hang up') return 'EOF';
  if (code === 'ECONNRESET') return 'read: connection reset by peer';
  return error instanceof Error ? error.message : String(error);
}

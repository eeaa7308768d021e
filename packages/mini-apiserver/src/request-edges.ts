/**
 * The edges of request handling kube-apiserver has outside its handlers: Go's refusal of a
 * malformed `%` escape, the request timeout of non-long-running requests, and the body checks
 * every verb shares.
 *
 * @module
 * @internal
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '@nodeagent/core';
import { requestTimedOut } from './errors.js';

/** The path with each segment `%`-decoded (a segment that is not UTF-8 is kept as sent). */
export function decodedPath(pathname: string): string {
  return pathname
    .split('/')
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    })
    .join('/');
}

/** Whether a request announces a body (a length above 0, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
}

/** Whether a path has a `%` not followed by two hex digits (Go's `url.ParseRequestURI` fails). */
export function hasMalformedEscape(pathname: string): boolean {
  return /%(?![0-9a-fA-F]{2})/.test(pathname);
}

/**
 * Answers 504 when the request has not completed within the request timeout, as
 * kube-apiserver's timeout filter does for non-long-running requests, and stops reading
 * its body (a body trickled byte by byte ends there).
 */
export function startRequestTimer(
  clock: Clock,
  timeoutMs: number,
  req: IncomingMessage,
  res: ServerResponse,
): { cancel(): void } {
  return clock.setTimeout(() => {
    if (res.headersSent) return;
    const text = JSON.stringify(requestTimedOut().status);
    res.writeHead(504, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-cache, private',
      Connection: 'close',
    });
    res.end(text, () => req.socket.destroy());
  }, timeoutMs);
}

/**
 * The query as Go's `url.ParseQuery` (and so kube-apiserver) sees it: a pair with a malformed
 * `%` escape or a `;` is dropped, the others are kept.
 */
export function goQuery(search: string): URLSearchParams {
  const kept = search
    .replace(/^\?/, '')
    .split('&')
    .filter((pair) => pair !== '' && !pair.includes(';') && !hasMalformedEscape(pair));
  return new URLSearchParams(kept.join('&'));
}

/**
 * Reading request bodies as kube-apiserver does: the body size limit (413), the content
 * types the server decodes (415 otherwise) and Go's `encoding/json` nesting limit (400).
 *
 * @module
 * @internal
 */
import type { IncomingMessage } from 'node:http';
import { badRequest, requestEntityTooLarge, unsupportedMediaType } from './errors.js';

/**
 * Deepest nesting of arrays and objects a body may have: Go's `encoding/json` scanner
 * (`maxNestingDepth`, used through `sigs.k8s.io/json` by kube-apiserver) refuses deeper
 * documents with `exceeded max depth`.
 */
export const MAX_JSON_NESTING_DEPTH = 10_000;

/**
 * Deepest nesting of a body the mini-apiserver stores. kube-apiserver decodes documents up to
 * {@link MAX_JSON_NESTING_DEPTH} into typed objects (pruning unknown fields); this server keeps
 * bodies as they are and handles them with recursive code (clone, patch, serialise), so it
 * refuses deeper bodies with 400 rather than overflow the stack (a 500). Real objects are
 * a few dozen levels deep.
 */
export const MAX_STORED_NESTING_DEPTH = 1000;

/** Media types the server decodes for create, update and delete bodies. */
export const BODY_MEDIA_TYPES: readonly string[] = ['application/json'];

/**
 * The media type of a body (`Content-Type` without parameters, lower case). A missing type
 * counts as the first supported one, as kube-apiserver's input negotiation does.
 */
export function mediaTypeOf(contentType: string | undefined): string {
  const t = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return t === '' ? 'application/json' : t;
}

/**
 * Refuses a body type the server does not decode with 415. The protobuf type is let through
 * (and fails to decode as JSON with 400), as before this check existed.
 */
export function checkBodyMediaType(contentType: string | undefined): void {
  const t = mediaTypeOf(contentType);
  if (BODY_MEDIA_TYPES.includes(t) || t === 'application/vnd.kubernetes.protobuf') return;
  throw unsupportedMediaType(BODY_MEDIA_TYPES);
}

/**
 * The deepest nesting of `[`/`{` in JSON text, scanning no further than past `limit`
 * (strings are skipped, so brackets inside them do not count).
 */
export function jsonNestingDepth(text: string, limit = MAX_JSON_NESTING_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/**
 * The nesting depth of a parsed value (an object or array counts 1, plus its deepest member),
 * measured without recursion and stopping past `limit`.
 */
export function valueNestingDepth(value: unknown, limit = MAX_STORED_NESTING_DEPTH): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) {
      max = depth;
      if (max > limit) return max;
    }
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return max;
}

/**
 * Parses JSON text, refusing with 400 documents nested deeper than
 * {@link MAX_JSON_NESTING_DEPTH} (Go's message) or than {@link MAX_STORED_NESTING_DEPTH}.
 */
export function parseJsonBody(text: string): unknown {
  const depth = jsonNestingDepth(text);
  if (depth > MAX_JSON_NESTING_DEPTH) {
    throw badRequest('the body of the request could not be decoded as JSON: exceeded max depth');
  }
  if (depth > MAX_STORED_NESTING_DEPTH) {
    throw badRequest(
      `the body of the request is nested ${depth} deep; mini-apiserver handles bodies nested at most ${MAX_STORED_NESTING_DEPTH} deep`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the body of the request could not be decoded as JSON: ${(err as Error).message}`);
  }
}

/** Reads a body of at most `limitBytes` (413 past it). */
export async function readRawBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limitBytes) throw requestEntityTooLarge(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    const b = c as Buffer;
    size += b.length;
    if (size > limitBytes) throw requestEntityTooLarge(limitBytes);
    chunks.push(b);
  }
  return Buffer.concat(chunks, size);
}

/** Reads a body of at most `limitBytes` (413 past it) and parses it as JSON (`undefined` when empty). */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const raw = await readRawBody(req, limitBytes);
  if (raw.length === 0) return undefined;
  return parseJsonBody(raw.toString('utf8'));
}

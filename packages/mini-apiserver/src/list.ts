/**
 * Paginated lists: resourceVersion / resourceVersionMatch semantics, continue tokens in the
 * real server's format (base64 of `{"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"}`),
 * selection by namespace and selectors, and a streaming JSON writer for the page.
 *
 * @module
 * @internal
 */
import type { ServerResponse } from 'node:http';
import { badRequest, CONTINUE_EXPIRED_MESSAGE, expired, tooLargeResourceVersion } from './errors.js';
import type { FieldSelector } from './fields.js';
import type { LabelSelector } from './labels.js';
import type { ResourceType } from './resources.js';
import { lowerBound, type ResourceTable, type Snapshot, type StoreEntry } from './table.js';

/** What a list request asks for. */
export interface ListRequest {
  readonly namespace: string | undefined;
  readonly labels: LabelSelector;
  readonly fields: FieldSelector;
  readonly limit: number | undefined;
  readonly continueToken: string | undefined;
  readonly resourceVersion: string | undefined;
  readonly resourceVersionMatch: string | undefined;
  readonly hasSelectors: boolean;
}

/** One page of a list. */
export interface ListPage {
  readonly rv: number;
  readonly items: readonly StoreEntry[];
  readonly continueToken: string | undefined;
  readonly remainingItemCount: number | undefined;
}

interface ContinueToken {
  readonly rv: number;
  readonly start: string;
}

function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString(
    'base64',
  );
}

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as {
      v?: unknown;
      rv?: unknown;
      start?: unknown;
    };
    if (parsed.v !== 'meta.k8s.io/v1' || typeof parsed.rv !== 'number' || typeof parsed.start !== 'string') {
      throw new Error('bad');
    }
    return { rv: parsed.rv, start: parsed.start };
  } catch {
    throw badRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
}

function parseRv(s: string): number {
  if (!/^[0-9]+$/.test(s)) throw badRequest(`invalid resource version "${s}"`);
  return Number(s);
}

/** Chooses the snapshot for a list request (latest, exact RV, or a continue token's RV). */
function selectSnapshot(
  table: ResourceTable,
  req: ListRequest,
  currentRv: number,
): { rv: number; snap: Snapshot; start: string } {
  if (req.continueToken) {
    if (req.resourceVersion !== undefined && req.resourceVersion !== '') {
      throw badRequest('specifying resource version is not allowed when using continue');
    }
    const tok = decodeContinue(req.continueToken);
    const snap = table.snapshotAt(tok.rv);
    if (!snap) throw expired(CONTINUE_EXPIRED_MESSAGE);
    return { rv: tok.rv, snap, start: tok.start };
  }
  const rvParam = req.resourceVersion ?? '';
  const match = req.resourceVersionMatch ?? '';
  if (match !== '' && match !== 'NotOlderThan' && match !== 'Exact') {
    throw badRequest(
      `resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
    );
  }
  if (match !== '' && rvParam === '') {
    throw badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
  }
  if (rvParam === '' || rvParam === '0') return { rv: currentRv, snap: table.currentSnapshot(), start: '' };
  const rv = parseRv(rvParam);
  if (rv > currentRv) throw tooLargeResourceVersion(rv, currentRv);
  if (match === 'Exact' && rv < currentRv) {
    const snap = table.snapshotAt(rv);
    if (!snap) throw expired(`too old resource version: ${rv} (${table.compactedRv + 1})`);
    return { rv, snap, start: '' };
  }
  return { rv: currentRv, snap: table.currentSnapshot(), start: '' };
}

/** Computes one page of a list. */
export function listPage(table: ResourceTable, req: ListRequest, currentRv: number): ListPage {
  const { rv, snap, start } = selectSnapshot(table, req, currentRv);
  const prefix = req.namespace !== undefined && table.type.namespaced ? `${req.namespace}/` : '';
  // Strings, so not Math.max: start from the later of the continue key and the namespace prefix.
  let i = Math.max(lowerBound(snap, start), lowerBound(snap, prefix));
  const limit = req.limit !== undefined && req.limit > 0 ? req.limit : Number.POSITIVE_INFINITY;
  const items: StoreEntry[] = [];
  const nameExact = req.fields.exact('metadata.name');
  for (; i < snap.length; i++) {
    const e = snap[i] as StoreEntry;
    if (prefix !== '' && !e.key.startsWith(prefix)) {
      i = snap.length;
      break;
    }
    if (nameExact !== undefined && e.name !== nameExact) continue;
    if (!req.labels.matches(e.labels) || !req.fields.matches(e.fields)) continue;
    items.push(e);
    if (items.length >= limit) {
      i++;
      break;
    }
  }
  let end = snap.length;
  if (prefix !== '') end = lowerBound(snap, `${prefix.slice(0, -1)}0`);
  const more = i < end;
  if (!more) return { rv, items, continueToken: undefined, remainingItemCount: undefined };
  table.remember(rv, snap);
  const last = items[items.length - 1] as StoreEntry;
  return {
    rv,
    items,
    continueToken: encodeContinue(rv, last.key),
    remainingItemCount: req.hasSelectors ? undefined : end - i,
  };
}

/** Writes a list page as `<Kind>List` JSON, streamed in chunks. */
export function writeListPage(res: ServerResponse, type: ResourceType, page: ListPage): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  let meta = `{"resourceVersion":"${page.rv}"`;
  if (page.continueToken !== undefined) meta += `,"continue":"${page.continueToken}"`;
  if (page.remainingItemCount !== undefined) meta += `,"remainingItemCount":${page.remainingItemCount}`;
  meta += '}';
  let buf = `{"kind":"${type.listKind}","apiVersion":"${type.apiVersion}","metadata":${meta},"items":[`;
  const items = page.items;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) buf += ',';
    buf += (items[i] as StoreEntry).json;
    if (buf.length >= 256 * 1024) {
      res.write(buf);
      buf = '';
    }
  }
  buf += ']}';
  res.end(buf);
}

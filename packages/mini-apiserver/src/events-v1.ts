/**
 * `events.k8s.io/v1` Events: the same stored objects as core/v1 Events, converted on the way
 * in and out as kube-apiserver converts them (`involvedObject` ↔ `regarding`, `message` ↔
 * `note`, `source` ↔ `deprecatedSource`, `firstTimestamp`/`lastTimestamp`/`count` ↔
 * `deprecatedFirstTimestamp`/`deprecatedLastTimestamp`/`deprecatedCount`,
 * `reportingComponent` ↔ `reportingController`), with the group's field selector names
 * (`regarding.*`, `reportingController`). Served: get, list, create, update, patch, delete.
 * Not served: watch and deletecollection.
 *
 * @module
 * @internal
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, methodNotAllowed, pathNotFound, unsupportedMediaType } from './errors.js';
import { parseFieldSelector } from './fields.js';
import { parseLabelSelector } from './labels.js';
import { listPage } from './list.js';
import { isPlainObject, type KubeObject } from './object.js';
import { applyPatch, PATCH_MEDIA_TYPES, patchTypeOf } from './patch.js';
import { checkBodyMediaType, readBody } from './request-body.js';
import type { ObjectStore } from './store.js';

/** The API group of the second Event shape. */
export const EVENTS_GROUP = 'events.k8s.io';

/** Discovery entry of `events.k8s.io/v1`. */
export const EVENTS_V1_RESOURCES: readonly unknown[] = [
  {
    name: 'events',
    singularName: 'event',
    namespaced: true,
    kind: 'Event',
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update'],
    shortNames: ['ev'],
  },
];

type Rec = Record<string, unknown>;

const RENAMES: ReadonlyArray<readonly [core: string, v1: string]> = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['reportingComponent', 'reportingController'],
];

/** Converts a stored core/v1 Event to its events.k8s.io/v1 shape. */
export function toEventsV1(core: KubeObject): KubeObject {
  const out: Rec = { kind: 'Event', apiVersion: 'events.k8s.io/v1' };
  for (const [k, v] of Object.entries(core)) {
    if (k === 'kind' || k === 'apiVersion') continue;
    const rename = RENAMES.find(([c]) => c === k);
    out[rename ? rename[1] : k] = v;
  }
  return out as KubeObject;
}

/** Converts an events.k8s.io/v1 Event to the core/v1 shape the store holds. */
export function fromEventsV1(v1: Rec): KubeObject {
  const out: Rec = {};
  for (const [k, v] of Object.entries(v1)) {
    if (k === 'kind' || k === 'apiVersion') continue;
    const rename = RENAMES.find(([, n]) => n === k);
    if (!rename && RENAMES.some(([c]) => c === k)) continue; // a core-only name: dropped as an unknown field
    out[rename ? rename[0] : k] = v;
  }
  return out as KubeObject;
}

const V1_FIELDS: Readonly<Record<string, string>> = {
  'metadata.name': 'metadata.name',
  'metadata.namespace': 'metadata.namespace',
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  reason: 'reason',
  reportingController: 'reportingComponent',
  source: 'source',
  type: 'type',
};

function coreFieldSelector(selector: string | null): string | null {
  if (selector === null || selector.trim() === '') return selector;
  return selector
    .split(',')
    .map((raw) => {
      const m = /^\s*([^=!]+?)\s*(==|!=|=)(.*)$/.exec(raw);
      if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${raw.trim()}'`);
      const field = V1_FIELDS[m[1] as string];
      if (field === undefined) throw badRequest(`field label not supported: ${m[1]}`);
      return `${field}${m[2]}${m[3]}`;
    })
    .join(',');
}

function send(res: ServerResponse, code: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.end(JSON.stringify(body));
}

/**
 * Serves `/apis/events.k8s.io/v1/...events...` from the core Event table.
 * @returns false when the path is not an events.k8s.io/v1 Events path
 */
export async function serveEventsV1(
  store: ObjectStore,
  method: string,
  pathname: string,
  q: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
  maxBodyBytes: number,
): Promise<boolean> {
  const m = /^\/apis\/events\.k8s\.io\/v1(?:\/namespaces\/([^/]+))?\/events(?:\/([^/]+))?\/?$/.exec(pathname);
  if (!m) return false;
  const namespace = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
  const name = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
  const coreType = store.typeOf('events');
  if (q.get('watch') === 'true' || q.get('watch') === '1') throw methodNotAllowed();
  if (name === undefined) {
    if (method === 'GET') {
      const labels = parseLabelSelector(q.get('labelSelector'));
      const fields = parseFieldSelector(coreType, coreFieldSelector(q.get('fieldSelector')));
      const limit = q.get('limit');
      const page = listPage(
        store.table(coreType),
        {
          namespace,
          labels,
          fields,
          limit: limit === null || limit === '' ? undefined : Number(limit),
          continueToken: q.get('continue') || undefined,
          resourceVersion: q.get('resourceVersion') ?? undefined,
          resourceVersionMatch: q.get('resourceVersionMatch') || undefined,
          hasSelectors: labels.requirements.length > 0 || fields.requirements.length > 0,
        },
        store.currentRv,
      );
      const meta: Rec = { resourceVersion: String(page.rv) };
      if (page.continueToken !== undefined) meta.continue = page.continueToken;
      send(res, 200, {
        kind: 'EventList',
        apiVersion: 'events.k8s.io/v1',
        metadata: meta,
        items: page.items.map((e) => toEventsV1(JSON.parse(e.json) as KubeObject)),
      });
      return true;
    }
    if (method === 'POST') {
      if (namespace === undefined) throw methodNotAllowed();
      checkBodyMediaType(req.headers['content-type']);
      const body = await readBody(req, maxBodyBytes);
      if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object');
      const core = fromEventsV1(body);
      core.metadata = { ...(isPlainObject(core.metadata) ? core.metadata : {}), namespace };
      send(res, 201, toEventsV1(store.create('events', core, { admit: true })));
      return true;
    }
    throw methodNotAllowed();
  }
  if (namespace === undefined) throw pathNotFound();
  switch (method) {
    case 'GET':
      send(res, 200, toEventsV1(store.get('events', namespace, name)));
      return true;
    case 'PUT': {
      checkBodyMediaType(req.headers['content-type']);
      const body = await readBody(req, maxBodyBytes);
      if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object');
      const core = fromEventsV1(body);
      core.metadata = { ...(isPlainObject(core.metadata) ? core.metadata : {}), namespace, name };
      send(res, 200, toEventsV1(store.update('events', core, { admit: true })));
      return true;
    }
    case 'PATCH': {
      const patchType = patchTypeOf(req.headers['content-type']);
      if (!patchType) throw unsupportedMediaType(PATCH_MEDIA_TYPES);
      const patch = await readBody(req, maxBodyBytes);
      const current = toEventsV1(store.get('events', namespace, name));
      const patched = applyPatch(patchType, current as never, patch as never);
      if (!isPlainObject(patched)) throw badRequest('the patch did not produce an object');
      const core = fromEventsV1(patched);
      core.metadata = { ...(isPlainObject(core.metadata) ? core.metadata : {}), namespace, name };
      send(res, 200, toEventsV1(store.update('events', core, { admit: true })));
      return true;
    }
    case 'DELETE': {
      const result = store.delete('events', namespace, name);
      send(res, 200, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name, group: EVENTS_GROUP, kind: 'events', uid: result.object.metadata?.uid ?? '' },
      });
      return true;
    }
    default:
      throw methodNotAllowed();
  }
}

/**
 * The three patch formats the API accepts: JSON merge patch (RFC 7386), JSON patch
 * (RFC 6902) and strategic merge patch with the merge keys of the fields agents touch.
 *
 * @module
 */
import { badRequest } from './errors.js';
import { isPlainObject } from './object.js';

type Json = unknown;
type Obj = Record<string, unknown>;

/** Applies an RFC 7386 JSON merge patch; returns a new value (inputs untouched). */
export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Obj = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw badRequest(`json patch: invalid path "${path}"`);
  return path.slice(1).split('/').map(unescapePointer);
}

function getAt(doc: Json, tokens: readonly string[]): Json {
  let cur: Json = doc;
  for (const t of tokens) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isPlainObject(cur)) cur = cur[t];
    else return undefined;
  }
  return cur;
}

function parentOf(doc: Json, tokens: readonly string[], path: string): { parent: Obj | Json[]; key: string } {
  const parent = getAt(doc, tokens.slice(0, -1));
  if (!Array.isArray(parent) && !isPlainObject(parent)) {
    throw badRequest(`json patch: the path "${path}" does not exist`);
  }
  return { parent, key: tokens[tokens.length - 1] as string };
}

function arrayIndex(arr: Json[], key: string, allowEnd: boolean, path: string): number {
  if (key === '-' && allowEnd) return arr.length;
  const i = Number(key);
  if (!/^(0|[1-9][0-9]*)$/.test(key) || i > arr.length || (!allowEnd && i === arr.length)) {
    throw badRequest(`json patch: index out of range in "${path}"`);
  }
  return i;
}

function removeAt(doc: Json, path: string): Json {
  const tokens = parsePointer(path);
  const { parent, key } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, key, false, path), 1)[0];
  if (!Object.hasOwn(parent, key)) throw badRequest(`json patch: the path "${path}" does not exist`);
  const v = parent[key];
  delete parent[key];
  return v;
}

function addAt(doc: Json, path: string, value: Json): Json {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const { parent, key } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true, path), 0, value);
  else parent[key] = value;
  return doc;
}

/** Applies an RFC 6902 JSON patch; returns the new document (the input is not modified). */
export function applyJsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badRequest('json patch: the patch must be an array of operations');
  let doc = structuredClone(target);
  for (const raw of ops) {
    if (!isPlainObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw badRequest('json patch: every operation needs "op" and "path"');
    }
    const { op, path } = raw;
    switch (op) {
      case 'add':
        doc = addAt(doc, path, structuredClone(raw.value));
        break;
      case 'remove':
        removeAt(doc, path);
        break;
      case 'replace': {
        const tokens = parsePointer(path);
        if (tokens.length === 0) {
          doc = structuredClone(raw.value);
          break;
        }
        removeAt(doc, path);
        doc = addAt(doc, path, structuredClone(raw.value));
        break;
      }
      case 'move': {
        if (typeof raw.from !== 'string') throw badRequest('json patch: "move" needs "from"');
        const v = removeAt(doc, raw.from);
        doc = addAt(doc, path, v);
        break;
      }
      case 'copy': {
        if (typeof raw.from !== 'string') throw badRequest('json patch: "copy" needs "from"');
        doc = addAt(doc, path, structuredClone(getAt(doc, parsePointer(raw.from))));
        break;
      }
      case 'test': {
        const actual = getAt(doc, parsePointer(path));
        if (JSON.stringify(actual) !== JSON.stringify(raw.value)) {
          throw badRequest(`json patch: test operation failed at "${path}"`);
        }
        break;
      }
      default:
        throw badRequest(`json patch: unknown operation "${op}"`);
    }
  }
  return doc;
}

/**
 * Merge keys of lists, by dotted path from the object root (`[]` marks list items).
 * Lists not listed here are replaced atomically, as for fields without a patch strategy
 * (upstream's `status.containerStatuses` and friends have none: a patch replaces them whole).
 */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  'metadata.ownerReferences': 'uid',
  'spec.containers': 'name',
  'spec.initContainers': 'name',
  'spec.ephemeralContainers': 'name',
  'spec.containers[].ports': 'containerPort',
  'spec.initContainers[].ports': 'containerPort',
  'spec.containers[].env': 'name',
  'spec.initContainers[].env': 'name',
  'spec.containers[].volumeMounts': 'mountPath',
  'spec.initContainers[].volumeMounts': 'mountPath',
  'spec.volumes': 'name',
  'spec.imagePullSecrets': 'name',
  'spec.ports': 'port',
  'spec.taints': 'key',
  'status.conditions': 'type',
  'status.podIPs': 'ip',
  'status.hostIPs': 'ip',
  'status.addresses': 'type',
};

/**
 * Where workload objects embed a pod template (`PodTemplateSpec`): Deployments, DaemonSets,
 * ReplicaSets, StatefulSets, Jobs at `spec.template`, CronJobs at `spec.jobTemplate.spec.template`.
 * The template's lists merge by the same keys as a Pod's.
 */
const POD_TEMPLATE_PREFIXES: readonly string[] = ['spec.template.', 'spec.jobTemplate.spec.template.'];

/** The merge key of the list at `path`, also inside a pod template. */
function mergeKeyOf(path: string): string | undefined {
  const key = MERGE_KEYS[path];
  if (key !== undefined) return key;
  for (const prefix of POD_TEMPLATE_PREFIXES) {
    const rest = path.startsWith(prefix) ? path.slice(prefix.length) : '';
    if (rest.startsWith('spec.') || rest.startsWith('metadata.')) return MERGE_KEYS[rest];
  }
  return undefined;
}

/** Primitive lists merged as sets (`patchStrategy: merge` without a key). */
const SET_LISTS: ReadonlySet<string> = new Set(['metadata.finalizers']);

const SET_ORDER = '$setElementOrder/';
const DELETE_FROM = '$deleteFromPrimitiveList/';

function mergeList(path: string, original: Json, patch: Json[]): Json[] {
  const key = mergeKeyOf(path);
  const orig = Array.isArray(original) ? original : [];
  if (patch.some((p) => isPlainObject(p) && p.$patch === 'replace')) {
    return patch.filter((p) => !(isPlainObject(p) && p.$patch === 'replace')).map((p) => stripDirectives(p));
  }
  if (SET_LISTS.has(path)) {
    const out = [...orig];
    for (const v of patch) if (!out.some((o) => JSON.stringify(o) === JSON.stringify(v))) out.push(v);
    return out;
  }
  if (key === undefined) return patch.map((p) => stripDirectives(p));
  const out: Json[] = orig.map((o) => o);
  for (const item of patch) {
    if (!isPlainObject(item)) {
      out.push(item);
      continue;
    }
    const k = item[key];
    const idx = out.findIndex((o) => isPlainObject(o) && o[key] === k);
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMerge(`${path}[]`, out[idx], item);
    else out.push(stripDirectives(item));
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v))
    return v
      .filter((x) => !(isPlainObject(x) && x.$patch !== undefined && Object.keys(x).length === 1))
      .map(stripDirectives);
  if (!isPlainObject(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith(SET_ORDER) || k.startsWith(DELETE_FROM))
      continue;
    out[k] = stripDirectives(x);
  }
  return out;
}

function orderBy(list: Json[], order: Json[], key: string | undefined): Json[] {
  const rank = (v: Json): number => {
    const id = key !== undefined && isPlainObject(v) ? v[key] : v;
    const i = order.findIndex(
      (o) => JSON.stringify(key !== undefined && isPlainObject(o) ? o[key] : o) === JSON.stringify(id),
    );
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return [...list].sort((a, b) => rank(a) - rank(b));
}

/**
 * Strategic merge of `patch` into `original` at `path` (dotted, `''` for the root).
 * Supports `$patch: replace|delete|merge`, `$retainKeys`, `$setElementOrder/<list>` and
 * `$deleteFromPrimitiveList/<list>`; `null` deletes a key.
 */
function strategicMerge(path: string, original: Json, patch: Json): Json {
  if (!isPlainObject(patch)) return structuredClone(patch);
  if (patch.$patch === 'replace') return stripDirectives(patch);
  if (patch.$patch === 'delete') return undefined;
  const out: Obj = isPlainObject(original) ? { ...original } : {};
  const prefix = path === '' ? '' : `${path}.`;
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k.startsWith(SET_ORDER) || k === '$retainKeys') continue;
    if (k.startsWith(DELETE_FROM)) {
      const field = k.slice(DELETE_FROM.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v)) {
        const drop = new Set(v.map((x) => JSON.stringify(x)));
        out[field] = cur.filter((x) => !drop.has(JSON.stringify(x)));
      }
      continue;
    }
    const childPath = `${prefix}${k}`;
    if (v === null) {
      delete out[k];
    } else if (Array.isArray(v)) {
      out[k] = mergeList(childPath, out[k], v);
    } else if (isPlainObject(v)) {
      const merged = strategicMerge(childPath, out[k], v);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    } else {
      out[k] = v;
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith(SET_ORDER) && Array.isArray(v)) {
      const field = k.slice(SET_ORDER.length);
      const cur = out[field];
      if (Array.isArray(cur)) out[field] = orderBy(cur, v, mergeKeyOf(`${prefix}${field}`));
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys.map(String));
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  return out;
}

/** Applies a strategic merge patch to a whole object; returns a new object. */
export function applyStrategicMergePatch(original: Json, patch: Json): Json {
  if (!isPlainObject(patch)) throw badRequest('strategic merge patch: the patch must be a JSON object');
  return strategicMerge('', structuredClone(original), patch) ?? {};
}

/** The patch content types the server accepts. */
export type PatchType = 'merge' | 'strategic' | 'json';

/** The patch media types the server applies, in kube-apiserver's order. */
export const PATCH_MEDIA_TYPES: readonly string[] = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];

/** The patch type of a `Content-Type`, or undefined for one the server does not apply. */
export function patchTypeOf(contentType: string | undefined): PatchType | undefined {
  const ct = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (ct === 'application/merge-patch+json') return 'merge';
  if (ct === 'application/strategic-merge-patch+json') return 'strategic';
  if (ct === 'application/json-patch+json') return 'json';
  return undefined;
}

/** Applies a patch of the given type. */
export function applyPatch(type: PatchType, original: Json, patch: Json): Json {
  switch (type) {
    case 'merge':
      return applyMergePatch(original, patch);
    case 'strategic':
      return applyStrategicMergePatch(original, patch);
    case 'json':
      return applyJsonPatch(original, patch);
  }
}

/**
 * The patch the status manager sends (upstream `statusutil.PatchPodStatus`): a two-way
 * strategic merge patch from the status the API has to the one wanted, with `metadata.uid`
 * so the API server refuses it (409) if the name now belongs to another pod. Lists with a
 * merge key (`conditions` by `type`, `podIPs`/`hostIPs` by `ip`) are patched per item with
 * `$setElementOrder`; other lists (container statuses) are replaced whole; vanished fields
 * are set to `null`.
 *
 * @module
 */
import type { V1PodStatus } from '@kubernetes/client-node';
import { stableJson } from './pod-status-normalize.js';

type Obj = Record<string, unknown>;

/** Merge keys of the pod status lists that have a `merge` patch strategy. */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  conditions: 'type',
  podIPs: 'ip',
  hostIPs: 'ip',
};

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function equal(a: unknown, b: unknown): boolean {
  return stableJson(a) === stableJson(b);
}

/**
 * A two-way strategic merge patch from `oldObj` to `newObj` (upstream
 * `CreateTwoWayMergePatch`): changed fields only, `null` for removed ones; top-level lists
 * named in `mergeKeys` are patched per item (with `$setElementOrder` and `$patch: delete`),
 * other lists replaced whole. Returns `{}` when nothing differs.
 */
export function twoWayMergePatch(
  oldObj: Obj,
  newObj: Obj,
  mergeKeys: Readonly<Record<string, string>> = {},
): Obj {
  return diffObject(oldObj, newObj, mergeKeys);
}

function diffObject(oldObj: Obj, newObj: Obj, mergeKeys: Readonly<Record<string, string>>): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(newObj)) {
    const o = oldObj[k];
    if (equal(o, v)) continue;
    const key = mergeKeys[k];
    if (key !== undefined && Array.isArray(v)) {
      Object.assign(out, diffKeyedList(k, key, Array.isArray(o) ? o : [], v));
    } else if (isObj(v) && isObj(o)) {
      out[k] = diffObject(o, v, {});
    } else {
      out[k] = v;
    }
  }
  for (const k of Object.keys(oldObj)) if (!(k in newObj)) out[k] = null;
  return out;
}

function diffKeyedList(field: string, key: string, oldList: unknown[], newList: unknown[]): Obj {
  const keyOf = (v: unknown) => (isObj(v) ? v[key] : v);
  const items: unknown[] = [];
  for (const item of newList) {
    const old = oldList.find((o) => keyOf(o) === keyOf(item));
    if (old === undefined || !isObj(old) || !isObj(item)) items.push(item);
    else if (!equal(old, item)) items.push({ [key]: keyOf(item), ...diffObject(old, item, {}) });
  }
  for (const old of oldList) {
    if (!newList.some((n) => keyOf(n) === keyOf(old))) items.push({ [key]: keyOf(old), $patch: 'delete' });
  }
  const out: Obj = { [`$setElementOrder/${field}`]: newList.map((n) => ({ [key]: keyOf(n) })) };
  if (items.length > 0) out[field] = items;
  return out;
}

/** The status patch, and whether nothing but the UID precondition would be sent. */
export interface PodStatusPatch {
  /** `{ metadata: { uid }, status: … }`, for `application/strategic-merge-patch+json`. */
  readonly patch: { readonly metadata: { readonly uid: string }; readonly status?: Obj };
  /** No field differs: upstream skips the call. */
  readonly unchanged: boolean;
}

/**
 * The strategic merge patch from `oldStatus` to `newStatus` for the pod `uid`. Both should be
 * normalized (see `normalizePodStatus`) so that representation differences are not changes.
 */
export function podStatusPatch(uid: string, oldStatus: V1PodStatus, newStatus: V1PodStatus): PodStatusPatch {
  const status = diffObject(oldStatus as Obj, newStatus as Obj, MERGE_KEYS);
  const unchanged = Object.keys(status).length === 0;
  return { patch: unchanged ? { metadata: { uid } } : { metadata: { uid }, status }, unchanged };
}

/**
 * Object keys: `namespace/name` for namespaced objects, `name` for cluster-scoped ones
 * (client-go's `MetaNamespaceKeyFunc`).
 *
 * @module
 */
import { ObjectKeyError } from './errors.js';
import type { KubeObject } from './types.js';

/**
 * A `DeletedFinalStateUnknown`-like tombstone: the object was deleted while the watch was
 * disconnected, so the informer only knows its last state.
 */
export interface DeletedFinalStateUnknown<T extends KubeObject = KubeObject> {
  /** Marks the tombstone. */
  readonly kind: 'DeletedFinalStateUnknown';
  /** The object's key. */
  readonly key: string;
  /** The last state the informer saw. */
  readonly obj: T;
}

/** Makes a tombstone. */
export function tombstone<T extends KubeObject>(key: string, obj: T): DeletedFinalStateUnknown<T> {
  return { kind: 'DeletedFinalStateUnknown', key, obj };
}

/** True when `value` is a {@link DeletedFinalStateUnknown}. */
export function isTombstone<T extends KubeObject>(
  value: T | DeletedFinalStateUnknown<T>,
): value is DeletedFinalStateUnknown<T> {
  return (
    (value as { kind?: unknown }).kind === 'DeletedFinalStateUnknown' &&
    typeof (value as { key?: unknown }).key === 'string' &&
    (value as { obj?: unknown }).obj !== undefined &&
    (value as { metadata?: unknown }).metadata === undefined
  );
}

/** The object itself, or the last known state a tombstone carries. */
export function objectOf<T extends KubeObject>(value: T | DeletedFinalStateUnknown<T>): T {
  return isTombstone(value) ? value.obj : value;
}

/** `namespace/name` (or `name`); throws {@link ObjectKeyError} when the name is missing. */
export function objectKey(obj: KubeObject | DeletedFinalStateUnknown): string {
  if (isTombstone(obj as KubeObject | DeletedFinalStateUnknown)) return (obj as DeletedFinalStateUnknown).key;
  const meta = (obj as KubeObject).metadata;
  const name = meta?.name;
  if (typeof name !== 'string' || name === '') throw new ObjectKeyError('object has no metadata.name');
  const ns = meta?.namespace;
  return typeof ns === 'string' && ns !== '' ? `${ns}/${name}` : name;
}

/** Splits a key into namespace (`''` for cluster-scoped) and name. */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: '', name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

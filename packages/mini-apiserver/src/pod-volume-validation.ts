/**
 * A pod's volumes and volume mounts as kube-apiserver validates them (upstream
 * `pkg/apis/core/validation` `validateVolumes`, `ValidateVolumeMounts`,
 * `validateLocalDescendingPath`): volume names are unique DNS-1123 labels, every mount names a
 * volume of the pod, and `subPath` / `subPathExpr` are relative paths without `..` — the
 * strings a node joins onto host paths. Field paths and messages are upstream's, including
 * its quirk of reporting `subPath` at `…volumeMounts.subPath` (no index).
 *
 * @module
 */
import type { StatusCause } from './errors.js';
import { isPlainObject } from './object.js';

function required(field: string): StatusCause {
  return { reason: 'FieldValueRequired', message: 'Required value', field };
}

function invalid(field: string, value: string, detail: string): StatusCause {
  return {
    reason: 'FieldValueInvalid',
    message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
    field,
  };
}

/** Upstream `validateLocalDescendingPath`. */
function localDescendingPath(path: string, field: string, causes: StatusCause[]): void {
  if (path.startsWith('/')) causes.push(invalid(field, path, 'must be a relative path'));
  if (path.split('/').includes('..')) causes.push(invalid(field, path, "must not contain '..'"));
}

/** Checks a name as a DNS-1123 label (the caller's `checkName`, which owns the messages). */
export type LabelCheck = (field: string, name: string) => StatusCause | undefined;

/** `spec.volumes`: names required, DNS-1123 labels, unique. Returns the names. */
export function validateVolumes(list: unknown, checkLabel: LabelCheck, causes: StatusCause[]): Set<string> {
  const names = new Set<string>();
  if (!Array.isArray(list)) return names;
  list.forEach((v: unknown, i: number) => {
    const field = `spec.volumes[${i}].name`;
    const name = isPlainObject(v) ? v.name : undefined;
    if (typeof name !== 'string' || name === '') {
      causes.push(required(field));
      return;
    }
    const bad = checkLabel(field, name);
    if (bad) causes.push(bad);
    if (names.has(name))
      causes.push({ reason: 'FieldValueDuplicate', message: `Duplicate value: "${name}"`, field });
    names.add(name);
  });
  return names;
}

/** `<container>.volumeMounts`: name of a pod volume, mountPath, subPath, subPathExpr. */
export function validateVolumeMounts(
  containerField: string,
  mounts: unknown,
  volumes: ReadonlySet<string>,
  causes: StatusCause[],
): void {
  if (!Array.isArray(mounts)) return;
  const fld = `${containerField}.volumeMounts`;
  mounts.forEach((m: unknown, i: number) => {
    const idx = `${fld}[${i}]`;
    const mnt = isPlainObject(m) ? m : {};
    const name = typeof mnt.name === 'string' ? mnt.name : '';
    if (name === '') causes.push(required(`${idx}.name`));
    else if (!volumes.has(name))
      causes.push({ reason: 'FieldValueNotFound', message: `Not found: "${name}"`, field: `${idx}.name` });
    if (typeof mnt.mountPath !== 'string' || mnt.mountPath === '') causes.push(required(`${idx}.mountPath`));
    const subPath = typeof mnt.subPath === 'string' ? mnt.subPath : '';
    const subPathExpr = typeof mnt.subPathExpr === 'string' ? mnt.subPathExpr : '';
    if (subPath !== '') localDescendingPath(subPath, `${fld}.subPath`, causes);
    if (subPathExpr !== '') {
      if (subPath !== '')
        causes.push(
          invalid(`${idx}.subPathExpr`, subPathExpr, 'subPathExpr and subPath are mutually exclusive'),
        );
      localDescendingPath(subPathExpr, `${fld}.subPathExpr`, causes);
    }
  });
}

/**
 * `dryRun=All` (`kubectl apply --dry-run=server`, `kubectl diff`, `kubectl delete
 * --dry-run=server`): the write runs through validation and defaulting as usual, and nothing is
 * stored, no resourceVersion is used and no watch event is sent. The answer is the object as it
 * would be.
 *
 * @module
 * @internal
 */
import { invalid } from './errors.js';
import { isPlainObject, type KubeObject } from './object.js';

/** The options kind named in the 422 of an unsupported `dryRun` value, by HTTP method. */
const OPTIONS_KIND: Readonly<Record<string, string>> = {
  POST: 'CreateOptions',
  PUT: 'UpdateOptions',
  PATCH: 'PatchOptions',
  DELETE: 'DeleteOptions',
};

/** Go's `%#v` of a `[]string`, as `field.NotSupported` prints the rejected value. */
function goStringSlice(values: readonly string[]): string {
  return `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
}

/**
 * Whether a write asks for a dry run: the `dryRun` query values (and, for DELETE, the
 * `dryRun` of the DeleteOptions body). `All` is the only value kube-apiserver accepts.
 * @throws ApiStatusError 422 (`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported
 *   value: ...`) for any other value.
 */
export function dryRunRequested(method: string, q: URLSearchParams, body?: unknown): boolean {
  const values = [...q.getAll('dryRun')];
  if (isPlainObject(body) && Array.isArray(body.dryRun)) {
    for (const v of body.dryRun) values.push(String(v));
  }
  if (values.length === 0) return false;
  if (values.some((v) => v !== 'All')) {
    throw invalid('meta.k8s.io', OPTIONS_KIND[method] ?? 'CreateOptions', '', [
      {
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${goStringSlice(values)}: supported values: "All"`,
        field: 'dryRun',
      },
    ]);
  }
  return true;
}

/**
 * What a dry-run commit answers instead of storing: the object with the resourceVersion it has
 * now (the previous one for updates and deletes; none for a create).
 */
export function dryRunObject(obj: KubeObject, previousRv: number | undefined): KubeObject {
  const out = structuredClone(obj);
  const meta = out.metadata as NonNullable<KubeObject['metadata']>;
  if (previousRv === undefined) delete meta.resourceVersion;
  else meta.resourceVersion = String(previousRv);
  return out;
}

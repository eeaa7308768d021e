/**
 * Query parameters decoded as kube-apiserver's parameter codec decodes them.
 *
 * @module
 * @internal
 */

/**
 * A boolean query parameter as apimachinery's `Convert_Slice_string_To_bool` reads it: absent is
 * false, `0` and any casing of `false` are false, and every other value (`true`, `True`, `1`,
 * `yes`, even the empty string) is true. This is how `watch=True` (the Python client's
 * spelling) starts a watch. kube-apiserver never answers 400 for such a value.
 */
export function queryBool(q: URLSearchParams, name: string): boolean {
  return isTrueParam(q.get(name));
}

/** {@link queryBool} for one raw value (`null` when the parameter is absent). */
export function isTrueParam(value: string | null): boolean {
  if (value === null) return false;
  return value !== '0' && value.toLowerCase() !== 'false';
}

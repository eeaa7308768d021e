/**
 * Copying optional fields under `exactOptionalPropertyTypes`, where `{ x: undefined }` is not
 * an object without `x`.
 *
 * @module
 */

/** The keys of `T` whose type admits `undefined`. */
export type UndefinedKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/** `T` with every field that may be `undefined` turned into an optional field without `undefined`. */
export type Defined<T> = { [K in Exclude<keyof T, UndefinedKeys<T>>]: T[K] } & {
  [K in UndefinedKeys<T>]?: Exclude<T[K], undefined>;
};

/**
 * Returns a copy of `fields` without the entries whose value is `undefined`, typed so that
 * the result can be passed where optional fields must be absent rather than `undefined`.
 * Replaces `...(x === undefined ? {} : { x })` spreads.
 *
 * @example
 * ```ts
 * const options: { readonly clock?: Clock } = definedFields({ clock: maybeClock });
 * ```
 */
export function definedFields<T extends object>(fields: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as Defined<T>;
}

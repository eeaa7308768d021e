/**
 * The compact shape of the generated schema definitions (`gen/openapi-models.ts`).
 *
 * @module
 * @internal
 */

/** A property type: a scalar with optional format, free-form, an array, a map or a reference. */
export type ModelType =
  | readonly ['string' | 'integer' | 'number' | 'boolean']
  | readonly ['string' | 'integer' | 'number' | 'boolean', string]
  | readonly ['object*']
  | readonly ['array', ModelType]
  | readonly ['map', ModelType]
  | readonly ['$ref', string];

/** One definition: its documentation, its GVK for top-level kinds, and its properties. */
export interface ModelDefinition {
  readonly description: string;
  readonly gvk?: { readonly group: string; readonly version: string; readonly kind: string };
  /** JSON name → `[type, description, required (1/0)]`. */
  readonly properties: Readonly<Record<string, readonly [ModelType, string, number]>>;
}

/** Definitions by OpenAPI name (`io.k8s.api.core.v1.Pod`). */
export type ModelDefinitions = Readonly<Record<string, ModelDefinition>>;

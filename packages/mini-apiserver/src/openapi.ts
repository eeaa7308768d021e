/**
 * OpenAPI for the kinds served: `/openapi/v2` (Swagger 2.0 definitions) and the schemas of the
 * `/openapi/v3/<group-version>` documents, so that `kubectl explain` works, plus
 * `fieldValidation` (`Strict`: unknown fields are a 400 `strict decoding error: unknown field
 * "spec.foo"`; `Warn`, the default: a `Warning` header per unknown field; `Ignore`). The schemas
 * are generated from @kubernetes/client-node's models (`gen/openapi-models.ts`).
 *
 * @module
 * @internal
 */

import { VERSION_INFO } from './discovery.js';
import { badRequest, invalid } from './errors.js';
import { MODELS } from './gen/openapi-models.js';
import { isPlainObject } from './object.js';
import type { ModelDefinition, ModelType } from './openapi-model-types.js';
import type { ResourceType } from './resources.js';

type Schema = Record<string, unknown>;

function schemaOf(t: ModelType, refPrefix: string, description: string, v3: boolean): Schema {
  const withDoc = (s: Schema): Schema => (description === '' ? s : { description, ...s });
  switch (t[0]) {
    case '$ref':
      return v3
        ? withDoc({ allOf: [{ $ref: `${refPrefix}${t[1]}` }] })
        : withDoc({ $ref: `${refPrefix}${t[1]}` });
    case 'array':
      return withDoc({ type: 'array', items: schemaOf(t[1], refPrefix, '', v3) });
    case 'map':
      return withDoc({ type: 'object', additionalProperties: schemaOf(t[1], refPrefix, '', v3) });
    case 'object*':
      return withDoc({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    default: {
      const s: Schema = { type: t[0] };
      if (t[1] !== undefined && t[1] !== '') s.format = t[1];
      return withDoc(s);
    }
  }
}

function definition(def: ModelDefinition, refPrefix: string, v3: boolean): Schema {
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const [name, [type, doc, req]] of Object.entries(def.properties)) {
    properties[name] = schemaOf(type, refPrefix, doc, v3);
    if (req === 1) required.push(name);
  }
  const out: Schema = { description: def.description, type: 'object', properties };
  if (required.length > 0) out.required = required;
  if (def.gvk) out['x-kubernetes-group-version-kind'] = [def.gvk];
  return out;
}

let v2Cache: unknown;
let v3Cache: Record<string, Schema> | undefined;

/** The `/openapi/v2` document: Swagger 2.0 with the definitions of every kind served. */
export function openApiV2(): unknown {
  if (v2Cache === undefined) {
    const definitions: Record<string, Schema> = {};
    for (const [name, def] of Object.entries(MODELS))
      definitions[name] = definition(def, '#/definitions/', false);
    v2Cache = {
      swagger: '2.0',
      info: { title: 'Kubernetes (mini-apiserver)', version: VERSION_INFO.gitVersion },
      paths: {},
      definitions,
    };
  }
  return v2Cache;
}

/** `components.schemas` of the `/openapi/v3/<group-version>` documents. */
export function openApiV3Schemas(): Record<string, Schema> {
  if (v3Cache === undefined) {
    v3Cache = {};
    for (const [name, def] of Object.entries(MODELS))
      v3Cache[name] = definition(def, '#/components/schemas/', true);
  }
  return v3Cache;
}

const BY_GVK = new Map<string, ModelDefinition>();
for (const def of Object.values(MODELS)) {
  if (def.gvk) BY_GVK.set(`${def.gvk.group}/${def.gvk.version}/${def.gvk.kind}`, def);
}

function walk(type: ModelType, value: unknown, path: string, out: string[]): void {
  switch (type[0]) {
    case '$ref': {
      const def = MODELS[type[1]];
      if (def && isPlainObject(value)) walkObject(def, value, path, out);
      return;
    }
    case 'array':
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) walk(type[1], value[i], `${path}[${i}]`, out);
      }
      return;
    case 'map':
      if (isPlainObject(value))
        for (const [k, v] of Object.entries(value)) walk(type[1], v, `${path}.${k}`, out);
      return;
    default:
      return;
  }
}

function walkObject(def: ModelDefinition, obj: Record<string, unknown>, path: string, out: string[]): void {
  for (const [k, v] of Object.entries(obj)) {
    const prop = def.properties[k];
    const p = path === '' ? k : `${path}.${k}`;
    if (!prop) out.push(p);
    else walk(prop[0], v, p, out);
  }
}

/** The paths of the fields of `obj` that the schema of `type`'s kind does not know (`spec.foo`). */
export function unknownFields(type: ResourceType, obj: unknown): string[] {
  const def = BY_GVK.get(`${type.group}/${type.version}/${type.kind}`);
  if (!def || !isPlainObject(obj)) return [];
  const out: string[] = [];
  walkObject(def, obj, '', out);
  return out;
}

/** A `fieldValidation` directive. */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/**
 * The `fieldValidation` query parameter of a write (`Warn` when absent, as kube-apiserver).
 * @throws ApiStatusError 422 for a value other than `Ignore`, `Warn`, `Strict`.
 */
export function fieldValidationOf(method: string, q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation') ?? '';
  if (v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  const kind = method === 'PUT' ? 'UpdateOptions' : method === 'PATCH' ? 'PatchOptions' : 'CreateOptions';
  throw invalid('meta.k8s.io', kind, '', [
    {
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(v)}: supported values: "", "Ignore", "Strict", "Warn"`,
      field: 'fieldValidation',
    },
  ]);
}

/**
 * Applies a `fieldValidation` directive to the object a write would store.
 * @returns the `Warning` header values to send (`Warn`).
 * @throws ApiStatusError 400 `strict decoding error: unknown field "spec.foo", ...` (`Strict`).
 */
export function checkFields(type: ResourceType, obj: unknown, directive: FieldValidation): string[] {
  if (directive === 'Ignore') return [];
  const unknown = unknownFields(type, obj);
  if (unknown.length === 0) return [];
  if (directive === 'Strict') {
    throw badRequest(
      `strict decoding error: ${unknown.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ')}`,
    );
  }
  return unknown.map((f) => `299 - ${JSON.stringify(`unknown field ${JSON.stringify(f)}`)}`);
}

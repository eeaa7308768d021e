#!/usr/bin/env node
// Generates src/gen/openapi-models.ts: the schemas of the kinds mini-apiserver serves (and every
// type they reach), derived from @kubernetes/client-node's generated models (their
// attributeTypeMap and the field documentation in their .d.ts files, which come from the
// Kubernetes OpenAPI document). Run: node packages/mini-apiserver/scripts/gen-openapi-models.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const pkgDir = dirname(require.resolve('@kubernetes/client-node/package.json'));
const modelsDir = join(pkgDir, 'dist', 'gen', 'models');
const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;

/** Root kinds: model class, OpenAPI definition name, group, version, kind. */
const ROOTS = [
  ['V1Pod', 'io.k8s.api.core.v1', '', 'v1', 'Pod'],
  ['V1Node', 'io.k8s.api.core.v1', '', 'v1', 'Node'],
  ['V1Service', 'io.k8s.api.core.v1', '', 'v1', 'Service'],
  ['CoreV1Event', 'io.k8s.api.core.v1', '', 'v1', 'Event'],
  ['V1Namespace', 'io.k8s.api.core.v1', '', 'v1', 'Namespace'],
  ['V1ConfigMap', 'io.k8s.api.core.v1', '', 'v1', 'ConfigMap'],
  ['V1Secret', 'io.k8s.api.core.v1', '', 'v1', 'Secret'],
  ['V1ServiceAccount', 'io.k8s.api.core.v1', '', 'v1', 'ServiceAccount'],
  ['V1EndpointSlice', 'io.k8s.api.discovery.v1', 'discovery.k8s.io', 'v1', 'EndpointSlice'],
  ['V1DaemonSet', 'io.k8s.api.apps.v1', 'apps', 'v1', 'DaemonSet'],
  ['V1Lease', 'io.k8s.api.coordination.v1', 'coordination.k8s.io', 'v1', 'Lease'],
  ['V1Role', 'io.k8s.api.rbac.v1', 'rbac.authorization.k8s.io', 'v1', 'Role'],
  ['V1ClusterRole', 'io.k8s.api.rbac.v1', 'rbac.authorization.k8s.io', 'v1', 'ClusterRole'],
  ['V1RoleBinding', 'io.k8s.api.rbac.v1', 'rbac.authorization.k8s.io', 'v1', 'RoleBinding'],
  ['V1ClusterRoleBinding', 'io.k8s.api.rbac.v1', 'rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding'],
];
const META = new Set([
  'V1ObjectMeta',
  'V1ManagedFieldsEntry',
  'V1OwnerReference',
  'V1LabelSelector',
  'V1LabelSelectorRequirement',
]);

function docs(cls) {
  const text = readFileSync(join(modelsDir, `${cls}.d.ts`), 'utf8');
  const clean = (c) =>
    c
      .split('\n')
      .map((l) => l.replace(/^\s*\* ?/, ''))
      .join('\n')
      .trim()
      .replace(/\\(['"])/g, '$1');
  const cm = /\/\*\*\n((?:(?!\*\/)[\s\S])*?)\*\/\n\s*export declare class/.exec(text);
  const props = {};
  const re = /(?:\/\*\*\n((?:(?!\*\/)[\s\S])*?)\*\/\n)?\s*'([^']+)'(\??):/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    props[m[2]] = { description: m[1] ? clean(m[1]) : '', required: m[3] !== '?' };
  }
  return { description: cm ? clean(cm[1]) : '', props };
}

const out = {};
const queue = [];
/** Core types first reached from another group's kind (a DaemonSet's pod template). */
const CORE = new Set(['V1PodTemplateSpec']);
function defName(cls, prefix) {
  const short = cls.replace(/^(CoreV1|V1|EventsV1|DiscoveryV1)/, '');
  if (CORE.has(cls)) return `io.k8s.api.core.v1.${short}`;
  return `${META.has(cls) ? 'io.k8s.apimachinery.pkg.apis.meta.v1' : prefix}.${short}`;
}
const names = new Map();
function ref(cls, prefix) {
  if (!names.has(cls)) {
    names.set(cls, defName(cls, prefix));
    queue.push([cls, prefix]);
  }
  return names.get(cls);
}
function typeOf(t, format, prefix) {
  if (t === 'string') return format ? ['string', format] : ['string'];
  if (t === 'Date' || t === 'V1MicroTime') return ['string', 'date-time'];
  if (t === 'number')
    return format === 'int32' || format === 'int64' ? ['integer', format] : ['number', format || 'double'];
  if (t === 'boolean') return ['boolean'];
  if (t === 'IntOrString') return ['string', 'int-or-string'];
  if (t === 'any' || t === 'object') return ['object*'];
  let m = /^Array<(.+)>$/.exec(t);
  if (m) return ['array', typeOf(m[1], format, prefix)];
  m = /^\{ \[key: string\]: (.+); \}$/.exec(t);
  if (m) return ['map', typeOf(m[1], format, prefix)];
  return ['$ref', ref(t, prefix)];
}

const mod = await import(join(modelsDir, 'all.js'));
for (const [cls, prefix, group, version, kind] of ROOTS) {
  names.set(cls, defName(cls, prefix));
  queue.push([cls, prefix, { group, version, kind }]);
}
while (queue.length > 0) {
  const [cls, prefix, gvk] = queue.shift();
  const model = mod[cls];
  if (!model) throw new Error(`no model ${cls}`);
  const d = docs(cls);
  const properties = {};
  for (const a of model.getAttributeTypeMap()) {
    const p = d.props[a.name] ?? { description: '', required: false };
    properties[a.baseName] = [typeOf(a.type, a.format, prefix), p.description, p.required ? 1 : 0];
  }
  out[names.get(cls)] = { description: d.description, ...(gvk ? { gvk } : {}), properties };
}

const header = `/**
 * Schemas of the kinds mini-apiserver serves and every type they reach, generated by
 * \`scripts/gen-openapi-models.mjs\` from @kubernetes/client-node ${version}'s models (the
 * Kubernetes OpenAPI document's types and field documentation). Do not edit.
 *
 * Each property is \`[type, description, required]\`; a type is \`['string' | 'integer' |
 * 'number' | 'boolean', format?]\`, \`['object*']\` (free-form), \`['array', item]\`,
 * \`['map', value]\` or \`['$ref', definitionName]\`.
 *
 * @module
 * @internal
 */
import type { ModelDefinitions } from '../openapi-model-types.js';

/** The generated definitions, by OpenAPI definition name. */
export const MODELS: ModelDefinitions = JSON.parse(${JSON.stringify(JSON.stringify(out))});
`;
writeFileSync(join(here, '..', 'src', 'gen', 'openapi-models.ts'), header);
console.log(`${Object.keys(out).length} definitions, ${header.length} bytes`);

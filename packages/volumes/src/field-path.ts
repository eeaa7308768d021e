/**
 * The values a downwardAPI volume writes (upstream `fieldpath.ExtractFieldPathAsString` and
 * `resource.ExtractResourceValueByContainerNameAndNodeAllocatable`): pod metadata by field
 * path, and a container's requests or limits divided by the item's `divisor` and rounded up,
 * with unset limits taken from the node's allocatable.
 *
 * @module
 */
import type {
  V1Container,
  V1ObjectFieldSelector,
  V1Pod,
  V1ResourceFieldSelector,
} from '@kubernetes/client-node';
import { milliValue, quantityValue } from '@nodeagent/core';
import { VolumeError } from './errors.js';

/** Go's `%q` of a string (printable characters kept, the rest escaped). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\v') out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Upstream `FormatMap`: `key="value"` lines, keys sorted, no trailing newline. */
export function formatMap(m: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${goQuote(m?.[k] ?? '')}`)
    .join('\n');
}

const SUBSCRIPTED = /^(metadata\.(?:annotations|labels))\['(.*)'\]$/;
const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Upstream `IsQualifiedName`: `[prefix/]name`, prefix a DNS subdomain, name at most 63 characters. */
function isQualifiedName(value: string): boolean {
  const parts = value.split('/');
  if (parts.length > 2) return false;
  const name = parts.at(-1) ?? '';
  if (name.length === 0 || name.length > 63 || !NAME_PART.test(name)) return false;
  if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    return prefix.length > 0 && prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix);
  }
  return true;
}

/**
 * The value of a downwardAPI volume item's `fieldRef`.
 * @throws VolumeError `unsupported fieldPath: ...` for a path a volume cannot project
 */
export function extractFieldPathAsString(pod: V1Pod, ref: V1ObjectFieldSelector): string {
  const fieldPath = ref.fieldPath;
  const m = pod.metadata ?? {};
  const sub = SUBSCRIPTED.exec(fieldPath);
  if (sub !== null) {
    const [, path, key = ''] = sub;
    const checked = path === 'metadata.annotations' ? key.toLowerCase() : key;
    if (!isQualifiedName(checked))
      throw new VolumeError('invalid', `invalid key subscript in ${fieldPath}: not a qualified name`);
    const map = path === 'metadata.annotations' ? m.annotations : m.labels;
    return map?.[key] ?? '';
  }
  if (/^[^[]+\[/.test(fieldPath))
    throw new VolumeError('invalid', `fieldPath ${goQuote(fieldPath)} does not support subscript`);
  switch (fieldPath) {
    case 'metadata.annotations':
      return formatMap(m.annotations);
    case 'metadata.labels':
      return formatMap(m.labels);
    case 'metadata.name':
      return m.name ?? '';
    case 'metadata.namespace':
      return m.namespace ?? '';
    case 'metadata.uid':
      return m.uid ?? '';
  }
  throw new VolumeError('invalid', `unsupported fieldPath: ${fieldPath}`);
}

/** Node allocatable by resource name (`cpu`, `memory`, `ephemeral-storage`), API quantities. */
export type ResourceList = Readonly<Record<string, string>>;

function ceilDiv(a: bigint, b: bigint): bigint {
  if (b === 0n) throw new VolumeError('invalid', 'divisor must be greater than zero');
  const q = a / b;
  return a % b !== 0n && a > 0n === b > 0n ? q + 1n : q;
}

function findContainer(pod: V1Pod, name: string): V1Container | undefined {
  return (
    (pod.spec?.containers ?? []).find((c) => c.name === name) ??
    (pod.spec?.initContainers ?? []).find((c) => c.name === name)
  );
}

/**
 * The value of a downwardAPI item's `resourceFieldRef` for the named container (upstream
 * `ExtractResourceValueByContainerNameAndNodeAllocatable`): cpu as `ceil(milli/divisor milli)`,
 * memory, ephemeral-storage and hugepages as `ceil(bytes/divisor)`; a divisor of 0 or none is 1.
 * @throws VolumeError for an unknown container or resource
 */
export function extractResourceValue(
  ref: V1ResourceFieldSelector,
  pod: V1Pod,
  nodeAllocatable: ResourceList,
): string {
  const name = ref.containerName ?? '';
  const container = findContainer(pod, name);
  if (container === undefined) throw new VolumeError('invalid', `container ${name} not found`);
  const [kind, resource = ''] = ref.resource.split(/\.(.*)/s);
  const limits: Record<string, string | number | undefined> = { ...(container.resources?.limits ?? {}) };
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    if (limits[r] === undefined && nodeAllocatable[r] !== undefined) limits[r] = nodeAllocatable[r];
  }
  const requests: Record<string, string | number | undefined> = container.resources?.requests ?? {};
  const list = kind === 'limits' ? limits : kind === 'requests' ? requests : undefined;
  const known =
    resource === 'cpu' ||
    resource === 'memory' ||
    resource === 'ephemeral-storage' ||
    resource.startsWith('hugepages-');
  if (list === undefined || !known)
    throw new VolumeError('invalid', `unsupported container resource : ${ref.resource}`);
  const divisorText = ref.divisor === undefined || ref.divisor === '' ? '1' : String(ref.divisor);
  const value = list[resource] ?? '0';
  if (resource === 'cpu') {
    let d = milliValue(divisorText);
    if (d === 0n) d = 1000n;
    return ceilDiv(milliValue(value), d).toString();
  }
  let d = quantityValue(divisorText);
  if (d === 0n) d = 1n;
  return ceilDiv(quantityValue(value), d).toString();
}

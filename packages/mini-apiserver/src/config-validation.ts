/**
 * ConfigMaps, Secrets and ServiceAccounts as kube-apiserver decodes, defaults and validates
 * them: base64 `data` of Secrets (and `binaryData` of ConfigMaps), `stringData` merged into
 * `data` on write, the `Opaque` default type, key names, the 1 MiB size limit, the keys each
 * built-in Secret type requires, and `immutable`.
 *
 * @module
 * @internal
 */
import { badRequest, type StatusCause } from './errors.js';
import { isPlainObject, type KubeObject } from './object.js';

/** Largest total size of a ConfigMap's or Secret's data (`MaxSecretSize`, 1 MiB). */
export const MAX_SECRET_SIZE = 1024 * 1024;

/** Secret type of service account token secrets. */
export const SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = 'kubernetes.io/service-account-token';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const IMMUTABLE_MSG = 'Forbidden: field is immutable when `immutable` is set';
const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function isNewline(c: string | undefined): boolean {
  return c === '\n' || c === '\r';
}

/**
 * Where Go's `base64.StdEncoding` stops decoding `s` (the byte of its `illegal base64 data at
 * input byte N` error), or `undefined` when `s` decodes.
 */
export function base64ErrorOffset(s: string): number | undefined {
  let si = 0;
  for (;;) {
    let j = 0;
    while (j < 4) {
      if (si === s.length) return j === 0 ? undefined : si - j;
      const c = s[si] as string;
      si++;
      if (isNewline(c)) continue;
      if (BASE64_ALPHABET.includes(c)) {
        j++;
        continue;
      }
      if (c !== '=' || j < 2) return si - 1;
      if (j === 2) {
        while (si < s.length && isNewline(s[si])) si++;
        if (si === s.length) return s.length;
        if (s[si] !== '=') return si - 1;
        si++;
      }
      while (si < s.length && isNewline(s[si])) si++;
      return si < s.length ? si : undefined;
    }
  }
}

function goJsonType(v: unknown): string {
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return 'string';
}

function cannotHandle(kind: string, detail: string): never {
  throw badRequest(`${kind} in version "v1" cannot be handled as a ${kind}: ${detail}`);
}

/** Checks a map of strings (null values dropped, as Go decodes them); returns it. */
function stringMap(kind: string, field: string, v: unknown, goType: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isPlainObject(v)) {
    cannotHandle(
      kind,
      `json: cannot unmarshal ${goJsonType(v)} into Go struct field ${kind}.${field} of type map[string]${goType}`,
    );
  }
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (val === null) continue;
    if (typeof val !== 'string') {
      cannotHandle(
        kind,
        `json: cannot unmarshal ${goJsonType(val)} into Go struct field ${kind}.${field} of type ${goType}`,
      );
    }
    out[k] = val;
  }
  return out;
}

/** Checks a map of base64 values; returns it with every value's decoded size. */
function bytesMap(kind: string, field: string, v: unknown): Record<string, string> {
  const map = stringMap(kind, field, v, '[]uint8');
  for (const value of Object.values(map)) {
    const bad = base64ErrorOffset(value);
    if (bad !== undefined) cannotHandle(kind, `illegal base64 data at input byte ${bad}`);
  }
  return map;
}

function decodedSize(b64: string): number {
  return Buffer.from(b64.replace(/[\r\n]/g, ''), 'base64').length;
}

/**
 * Decodes and defaults a ConfigMap, Secret or ServiceAccount about to be stored, in place:
 * Secret `stringData` is merged into `data` (base64) and dropped, `type` defaults to
 * `Opaque`; base64 values are checked.
 * @throws ApiStatusError 400 BadRequest as kube-apiserver's decoder (`illegal base64 data ...`).
 */
export function prepareConfigObject(resource: string, obj: KubeObject): void {
  const o = obj as Record<string, unknown>;
  if (resource === 'configmaps') {
    if (o.data !== undefined && o.data !== null) o.data = stringMap('ConfigMap', 'data', o.data, 'string');
    if (o.binaryData !== undefined && o.binaryData !== null)
      o.binaryData = bytesMap('ConfigMap', 'binaryData', o.binaryData);
  } else if (resource === 'secrets') {
    const data = bytesMap('Secret', 'data', o.data);
    const stringData = stringMap('Secret', 'stringData', o.stringData, 'string');
    for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(v, 'utf8').toString('base64');
    delete o.stringData;
    if (Object.keys(data).length > 0 || (o.data !== undefined && o.data !== null)) o.data = data;
    if (o.type === undefined || o.type === null || o.type === '') o.type = 'Opaque';
    else if (typeof o.type !== 'string') {
      cannotHandle(
        'Secret',
        `json: cannot unmarshal ${goJsonType(o.type)} into Go struct field Secret.type of type v1.SecretType`,
      );
    }
  }
  if (o.immutable === null) delete o.immutable;
}

function keyCauses(field: string, key: string, causes: StatusCause[]): void {
  const msgs: string[] = [];
  if (key.length > 253) msgs.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key)) msgs.push(CONFIG_KEY_MSG);
  if (key === '.') msgs.push("must not be '.'");
  else if (key === '..') msgs.push("must not be '..'");
  else if (key.startsWith('..')) msgs.push("must not start with '..'");
  for (const m of msgs) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${JSON.stringify(key)}: ${m}`,
      field: `${field}[${key}]`,
    });
  }
}

function required(field: string): StatusCause {
  return { reason: 'FieldValueRequired', message: 'Required value', field };
}

function tooLong(field: string): StatusCause {
  return {
    reason: 'FieldValueTooLong',
    message: `Too long: may not be more than ${MAX_SECRET_SIZE} bytes`,
    field,
  };
}

function rec(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

function validateJsonKey(data: Record<string, unknown>, key: string, causes: StatusCause[]): void {
  const v = data[key];
  if (typeof v !== 'string') {
    causes.push(required(`data[${key}]`));
    return;
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.from(v, 'base64').toString('utf8'));
    if (!isPlainObject(parsed))
      throw new Error(
        `json: cannot unmarshal ${goJsonType(parsed)} into Go value of type map[string]interface {}`,
      );
  } catch (err) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: "<secret contents redacted>": ${(err as Error).message}`,
      field: `data[${key}]`,
    });
  }
}

/** Validation of a ConfigMap, Secret or ServiceAccount (after {@link prepareConfigObject}). */
export function validateConfigObject(resource: string, obj: KubeObject, causes: StatusCause[]): void {
  const o = obj as Record<string, unknown>;
  if (resource === 'configmaps') {
    const data = rec(o.data);
    const binary = rec(o.binaryData);
    let total = 0;
    for (const [k, v] of Object.entries(data)) {
      keyCauses('data', k, causes);
      if (k in binary) {
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(k)}: duplicate of key present in binaryData`,
          field: `data[${k}]`,
        });
      }
      total += Buffer.byteLength(String(v));
    }
    for (const [k, v] of Object.entries(binary)) {
      keyCauses('binaryData', k, causes);
      if (k in data) {
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(k)}: duplicate of key present in data`,
          field: `binaryData[${k}]`,
        });
      }
      total += decodedSize(String(v));
    }
    // kube-apiserver reports the ConfigMap's size on the path `[]` (the whole object).
    if (total > MAX_SECRET_SIZE) causes.push(tooLong('[]'));
  } else if (resource === 'secrets') {
    const data = rec(o.data);
    let total = 0;
    for (const [k, v] of Object.entries(data)) {
      keyCauses('data', k, causes);
      total += decodedSize(String(v));
    }
    if (total > MAX_SECRET_SIZE) causes.push(tooLong('data'));
    const annotations = rec(rec(o.metadata).annotations);
    switch (o.type) {
      case SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
        if (
          typeof annotations['kubernetes.io/service-account.name'] !== 'string' ||
          annotations['kubernetes.io/service-account.name'] === ''
        ) {
          causes.push(required('metadata.annotations[kubernetes.io/service-account.name]'));
        }
        break;
      case 'kubernetes.io/dockercfg':
        validateJsonKey(data, '.dockercfg', causes);
        break;
      case 'kubernetes.io/dockerconfigjson':
        validateJsonKey(data, '.dockerconfigjson', causes);
        break;
      case 'kubernetes.io/basic-auth':
        if (!('username' in data) && !('password' in data)) {
          causes.push(required('data[username]'), required('data[password]'));
        }
        break;
      case 'kubernetes.io/ssh-auth':
        if (typeof data['ssh-privatekey'] !== 'string' || data['ssh-privatekey'] === '') {
          causes.push(required('data[ssh-privatekey]'));
        }
        break;
      case 'kubernetes.io/tls':
        if (!('tls.crt' in data)) causes.push(required('data[tls.crt]'));
        if (!('tls.key' in data)) causes.push(required('data[tls.key]'));
        break;
    }
  }
}

function same(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): string => {
    if (!isPlainObject(v) || Object.keys(v).length === 0) return '{}';
    return JSON.stringify(Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1))));
  };
  return norm(a) === norm(b);
}

/** The rules of an update of a ConfigMap or Secret: an immutable object keeps its data (and Secret type). */
export function validateConfigUpdate(
  resource: string,
  next: KubeObject,
  old: KubeObject,
  causes: StatusCause[],
): void {
  if (resource !== 'configmaps' && resource !== 'secrets') return;
  const n = next as Record<string, unknown>;
  const p = old as Record<string, unknown>;
  if (resource === 'secrets' && n.type !== p.type) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${JSON.stringify(n.type)}: field is immutable`,
      field: 'type',
    });
  }
  if (p.immutable !== true) return;
  if (n.immutable !== true)
    causes.push({ reason: 'FieldValueForbidden', message: IMMUTABLE_MSG, field: 'immutable' });
  if (!same(n.data, p.data))
    causes.push({ reason: 'FieldValueForbidden', message: IMMUTABLE_MSG, field: 'data' });
  if (resource === 'configmaps' && !same(n.binaryData, p.binaryData)) {
    causes.push({ reason: 'FieldValueForbidden', message: IMMUTABLE_MSG, field: 'binaryData' });
  }
}

/**
 * Decodes the Kubernetes protobuf encoding of the objects kubectl's typed clients send as
 * protobuf: `kubectl create configmap`, `create secret`, `create serviceaccount` and `create
 * token` (ConfigMap, Secret, ServiceAccount of core/v1 and TokenRequest of
 * authentication.k8s.io/v1, and the TokenReview a kubelet sends; field numbers of their generated.proto). The result is the JSON
 * shape of the object; fields the server sets itself (uid, timestamps, resourceVersion,
 * managedFields) are not decoded.
 *
 * @module
 * @internal
 */
import { bytes, type Fields, fail, fields, MAGIC, strings, text } from './access-review-protobuf.js';
import { decodeRbacFields, RBAC_PROTOBUF_KINDS } from './rbac-protobuf.js';

/** The kinds {@link decodeObject} understands. */
export const PROTOBUF_KINDS: ReadonlySet<string> = new Set([
  'ConfigMap',
  'Secret',
  'ServiceAccount',
  'TokenRequest',
  'TokenReview',
]);

function messages(f: Fields, n: number): Fields[] {
  return (f.get(n) ?? []).filter(Buffer.isBuffer).map((b) => fields(b));
}

function varintField(f: Fields, n: number): bigint | undefined {
  const v = f.get(n)?.[0];
  return typeof v === 'bigint' ? v : undefined;
}

function boolField(f: Fields, n: number): boolean | undefined {
  const v = varintField(f, n);
  return v === undefined ? undefined : v !== 0n;
}

/** A `map<string, string>` (or bytes, as base64) field: repeated entries of key 1, value 2. */
function mapField(f: Fields, n: number, base64: boolean): Record<string, string> | undefined {
  const entries = messages(f, n);
  if (entries.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    const value = bytes(e, 2) ?? Buffer.alloc(0);
    out[text(e, 1)] = base64 ? value.toString('base64') : value.toString('utf8');
  }
  return out;
}

function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return;
  out[key] = value;
}

function objectMeta(b: Buffer | undefined): Record<string, unknown> {
  const f = fields(b ?? Buffer.alloc(0));
  const out: Record<string, unknown> = {};
  put(out, 'name', text(f, 1));
  put(out, 'generateName', text(f, 2));
  put(out, 'namespace', text(f, 3));
  put(out, 'uid', text(f, 5));
  put(out, 'resourceVersion', text(f, 6));
  put(out, 'labels', mapField(f, 11, false));
  put(out, 'annotations', mapField(f, 12, false));
  put(
    out,
    'ownerReferences',
    messages(f, 13).map((r) => {
      const ref: Record<string, unknown> = {};
      put(ref, 'apiVersion', text(r, 5));
      put(ref, 'kind', text(r, 1));
      put(ref, 'name', text(r, 3));
      put(ref, 'uid', text(r, 4));
      put(ref, 'controller', boolField(r, 6));
      put(ref, 'blockOwnerDeletion', boolField(r, 7));
      return ref;
    }),
  );
  put(out, 'finalizers', strings(f, 14));
  return out;
}

function objectReference(r: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  put(out, 'kind', text(r, 1));
  put(out, 'namespace', text(r, 2));
  put(out, 'name', text(r, 3));
  put(out, 'uid', text(r, 4));
  put(out, 'apiVersion', text(r, 5));
  put(out, 'resourceVersion', text(r, 6));
  put(out, 'fieldPath', text(r, 7));
  return out;
}

function decodeBody(kind: string, f: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = { metadata: objectMeta(bytes(f, 1)) };
  switch (kind) {
    case 'ConfigMap':
      put(out, 'data', mapField(f, 2, false));
      put(out, 'binaryData', mapField(f, 3, true));
      put(out, 'immutable', boolField(f, 4));
      break;
    case 'Secret':
      put(out, 'data', mapField(f, 2, true));
      put(out, 'type', text(f, 3));
      put(out, 'stringData', mapField(f, 4, false));
      put(out, 'immutable', boolField(f, 5));
      break;
    case 'ServiceAccount':
      put(out, 'secrets', messages(f, 2).map(objectReference));
      put(
        out,
        'imagePullSecrets',
        messages(f, 3).map((r) => ({ name: text(r, 1) })),
      );
      put(out, 'automountServiceAccountToken', boolField(f, 4));
      break;
    case 'TokenRequest': {
      const spec = fields(bytes(f, 2) ?? Buffer.alloc(0));
      const s: Record<string, unknown> = {};
      put(s, 'audiences', strings(spec, 1));
      const exp = varintField(spec, 4);
      if (exp !== undefined) s.expirationSeconds = Number(BigInt.asIntN(64, exp));
      const ref = bytes(spec, 3);
      if (ref) {
        const r = fields(ref);
        const bound: Record<string, unknown> = {};
        put(bound, 'kind', text(r, 1));
        put(bound, 'apiVersion', text(r, 2));
        put(bound, 'name', text(r, 3));
        put(bound, 'uid', text(r, 4));
        s.boundObjectRef = bound;
      }
      out.spec = s;
      break;
    }
    case 'TokenReview': {
      const spec = fields(bytes(f, 2) ?? Buffer.alloc(0));
      const s: Record<string, unknown> = {};
      put(s, 'token', text(spec, 1));
      put(s, 'audiences', strings(spec, 2));
      out.spec = s;
      break;
    }
  }
  return out;
}

/**
 * Decodes a protobuf body (`k8s\0` magic, `runtime.Unknown` envelope) into the JSON shape of
 * the object it carries, with its `kind` and `apiVersion`.
 * @throws ApiStatusError 400 for bytes that are not such a message, or of a kind not in
 *   {@link PROTOBUF_KINDS}.
 */
export function decodeObject(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) fail();
  const unknown = fields(body.subarray(4));
  const typeMeta = fields(bytes(unknown, 1) ?? Buffer.alloc(0));
  const kind = text(typeMeta, 2);
  const raw = fields(bytes(unknown, 2) ?? Buffer.alloc(0));
  // --- RBAC objects (rbac-protobuf.ts) ---
  if (RBAC_PROTOBUF_KINDS.has(kind)) {
    const metadata = objectMeta(bytes(raw, 1));
    return { kind, apiVersion: text(typeMeta, 1), metadata, ...decodeRbacFields(kind, raw) };
  }
  // --- end ---
  if (!PROTOBUF_KINDS.has(kind)) fail();
  return { kind, apiVersion: text(typeMeta, 1), ...decodeBody(kind, raw) };
}

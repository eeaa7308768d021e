/**
 * Decodes the Kubernetes protobuf encoding of access reviews, which kubectl sends for
 * `kubectl auth can-i`: the `k8s\0` magic, a `runtime.Unknown` envelope, and inside it a
 * `SubjectAccessReview` / `SelfSubjectAccessReview` / `LocalSubjectAccessReview` /
 * `SelfSubjectRulesReview` (generated.proto of authorization/v1).
 * Only the fields the server reads are decoded; others are skipped.
 *
 * @module
 * @internal
 */
import { badRequest } from './errors.js';

/** The protobuf media type. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** The 4 bytes that start every Kubernetes protobuf body (`k8s\0`). */
export const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** The fields of one decoded message, by field number, in order. */
export type Fields = Map<number, Array<Buffer | bigint>>;

/** Throws the 400 of a body that is not a protobuf message. */
export function fail(): never {
  throw badRequest('the body of the request could not be decoded as protobuf');
}

function varint(buf: Buffer, pos: { i: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos.i >= buf.length || shift > 63n) fail();
    const b = buf[pos.i++] as number;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result;
    shift += 7n;
  }
}

/** Splits one message into its fields (length-delimited ones as bytes, varints as numbers). */
export function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  const pos = { i: 0 };
  while (pos.i < buf.length) {
    const key = varint(buf, pos);
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    let value: Buffer | bigint;
    if (wire === 0) value = varint(buf, pos);
    else if (wire === 2) {
      const len = Number(varint(buf, pos));
      if (pos.i + len > buf.length) fail();
      value = buf.subarray(pos.i, pos.i + len);
      pos.i += len;
    } else if (wire === 1) {
      pos.i += 8;
      continue;
    } else if (wire === 5) {
      pos.i += 4;
      continue;
    } else fail();
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}

/** The first length-delimited value of field `n`. */
export function bytes(f: Fields, n: number): Buffer | undefined {
  const v = f.get(n)?.[0];
  return Buffer.isBuffer(v) ? v : undefined;
}

/** The first value of string field `n` (`''` when absent). */
export function text(f: Fields, n: number): string {
  return bytes(f, n)?.toString('utf8') ?? '';
}

/** Every value of repeated string field `n`. */
export function strings(f: Fields, n: number): string[] {
  return (f.get(n) ?? []).filter(Buffer.isBuffer).map((b) => b.toString('utf8'));
}

function resourceAttributes(b: Buffer): Record<string, string> {
  const f = fields(b);
  const names = ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'];
  const out: Record<string, string> = {};
  names.forEach((name, i) => {
    const v = text(f, i + 1);
    if (v !== '') out[name] = v;
  });
  return out;
}

function nonResourceAttributes(b: Buffer): Record<string, string> {
  const f = fields(b);
  return { path: text(f, 1), verb: text(f, 2) };
}

/**
 * Decodes a protobuf access review into its JSON shape (`{ kind, apiVersion, spec }`).
 * @throws ApiStatusError 400 for bytes that are not such a message.
 */
export function decodeAccessReview(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) fail();
  const unknown = fields(body.subarray(4));
  const typeMeta = fields(bytes(unknown, 1) ?? Buffer.alloc(0));
  const review = fields(bytes(unknown, 2) ?? Buffer.alloc(0));
  const specBytes = bytes(review, 2) ?? Buffer.alloc(0);
  const spec = fields(specBytes);
  const kind = text(typeMeta, 2);
  const out: Record<string, unknown> = {};
  if (kind === 'SelfSubjectRulesReview') {
    // SelfSubjectRulesReviewSpec: 1 namespace.
    const namespace = text(spec, 1);
    return { kind, apiVersion: text(typeMeta, 1), spec: namespace === '' ? {} : { namespace } };
  }
  const ra = bytes(spec, 1);
  const nra = bytes(spec, 2);
  if (ra) out.resourceAttributes = resourceAttributes(ra);
  if (nra) out.nonResourceAttributes = nonResourceAttributes(nra);
  if (kind === 'SubjectAccessReview' || kind === 'LocalSubjectAccessReview') {
    // SubjectAccessReviewSpec: 3 user, 4 groups, 6 uid.
    const user = text(spec, 3);
    if (user !== '') out.user = user;
    const groups = strings(spec, 4);
    if (groups.length > 0) out.groups = groups;
  }
  // ObjectMeta: 3 namespace (a LocalSubjectAccessReview's).
  const namespace = text(fields(bytes(review, 1) ?? Buffer.alloc(0)), 3);
  return {
    kind,
    apiVersion: text(typeMeta, 1),
    ...(namespace === '' ? {} : { metadata: { namespace } }),
    spec: out,
  };
}

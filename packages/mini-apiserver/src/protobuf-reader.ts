/**
 * The reader toolkit of the protobuf decoders: the wire format (`k8s\0` magic, the
 * `runtime.Unknown` envelope, fields by number), typed field readers, and table-driven
 * message specs that turn a message into its JSON shape with Go's `omitempty`.
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

const EMPTY: Fields = new Map();

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

/** What a `runtime.Unknown` envelope carries: the type and the raw object's fields. */
export interface Envelope {
  /** `typeMeta.kind`. */
  readonly kind: string;
  /** `typeMeta.apiVersion`. */
  readonly apiVersion: string;
  /** The fields of `raw`, the encoded object. */
  readonly raw: Fields;
}

/**
 * Opens a protobuf body: the `k8s\0` magic, then a `runtime.Unknown` (typeMeta 1, raw 2).
 * @throws ApiStatusError 400 for bytes that are not such a message.
 */
export function envelope(body: Buffer): Envelope {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) fail();
  const unknown = fields(body.subarray(4));
  const typeMeta = message(unknown, 1);
  return { kind: text(typeMeta, 2), apiVersion: text(typeMeta, 1), raw: message(unknown, 2) };
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

/** Message field `n` split into fields, `undefined` when absent. */
export function sub(f: Fields, n: number): Fields | undefined {
  const b = bytes(f, n);
  return b === undefined ? undefined : fields(b);
}

/** Message field `n` split into fields, empty when absent. */
export function message(f: Fields, n: number): Fields {
  return sub(f, n) ?? EMPTY;
}

/** Every value of repeated message field `n`, split into fields. */
export function messages(f: Fields, n: number): Fields[] {
  return (f.get(n) ?? []).filter(Buffer.isBuffer).map((b) => fields(b));
}

/** The first varint of field `n`. */
export function varintField(f: Fields, n: number): bigint | undefined {
  const v = f.get(n)?.[0];
  return typeof v === 'bigint' ? v : undefined;
}

/** The first varint of field `n` as a boolean. */
export function boolField(f: Fields, n: number): boolean | undefined {
  const v = varintField(f, n);
  return v === undefined ? undefined : v !== 0n;
}

/** The first varint of field `n` as an `int32`. */
export function int32(f: Fields, n: number): number | undefined {
  const v = varintField(f, n);
  return v === undefined ? undefined : Number(BigInt.asIntN(32, v));
}

/** The first varint of field `n` as an `int64` (a JS number). */
export function int64(f: Fields, n: number): number | undefined {
  const v = varintField(f, n);
  return v === undefined ? undefined : Number(BigInt.asIntN(64, v));
}

/** A `map<string, string>` (or bytes, as base64) field: repeated entries of key 1, value 2. */
export function mapField(f: Fields, n: number, base64: boolean): Record<string, string> | undefined {
  const entries = messages(f, n);
  if (entries.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    const value = bytes(e, 2) ?? Buffer.alloc(0);
    out[text(e, 1)] = base64 ? value.toString('base64') : value.toString('utf8');
  }
  return out;
}

/** A `map<string, string>` field. */
export const stringMap: FieldReader = (f, n) => mapField(f, n, false);

/** A `map<string, bytes>` field, values as base64 (as in JSON). */
export const bytesMap: FieldReader = (f, n) => mapField(f, n, true);

/** Sets `out[key]` unless `value` is empty (JSON `omitempty`). */
export function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return;
  out[key] = value;
}

/** Reads field `n` of a message into its JSON value (`undefined` when it has none). */
export type FieldReader = (f: Fields, n: number) => unknown;

/**
 * One JSON key of a message: the field number, its reader, and `'keep'` for a key without
 * `omitempty` (set even when empty).
 */
export type FieldSpec = readonly [n: number, read: FieldReader, keep?: 'keep'];

/** A message's JSON keys, in the order they are written. */
export type MessageSpec = Readonly<Record<string, FieldSpec>>;

/** A decoder of one message into its JSON shape. */
export type MessageDecoder = (f: Fields) => Record<string, unknown>;

/** Decodes a message by its spec. */
export function decodeMessage(f: Fields, spec: MessageSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, [n, read, keep]] of Object.entries(spec)) {
    if (keep) out[key] = read(f, n);
    else put(out, key, read(f, n));
  }
  return out;
}

/** The decoder of a message spec. */
export function decoder(spec: MessageSpec): MessageDecoder {
  return (f) => decodeMessage(f, spec);
}

/** A message field decoded by `decode`, `undefined` when absent. */
export function optional(decode: (f: Fields) => unknown): FieldReader {
  return (f, n) => {
    const m = sub(f, n);
    return m === undefined ? undefined : decode(m);
  };
}

/** A message field decoded by `decode`, as an empty message when absent. */
export function embedded(decode: (f: Fields) => unknown): FieldReader {
  return (f, n) => decode(message(f, n));
}

/** A repeated message field, each value decoded by `decode`. */
export function repeated(decode: (f: Fields) => unknown): FieldReader {
  return (f, n) => messages(f, n).map(decode);
}

/** `read`, with a zero value left out (Go's `omitempty` on a plain int or string). */
export function nonZero(read: FieldReader): FieldReader {
  return (f, n) => {
    const v = read(f, n);
    return v === 0 ? undefined : v;
  };
}

/** `metav1.OwnerReference`. */
const OWNER_REFERENCE: MessageSpec = {
  apiVersion: [5, text],
  kind: [1, text],
  name: [3, text],
  uid: [4, text],
  controller: [6, boolField],
  blockOwnerDeletion: [7, boolField],
};

/** `metav1.ObjectMeta`: the fields a client may set. */
const OBJECT_META: MessageSpec = {
  name: [1, text],
  generateName: [2, text],
  namespace: [3, text],
  uid: [5, text],
  resourceVersion: [6, text],
  labels: [11, stringMap],
  annotations: [12, stringMap],
  ownerReferences: [13, repeated(decoder(OWNER_REFERENCE))],
  finalizers: [14, strings],
};

/** An object's `metadata` (field 1 of every top-level kind), decoded. */
export const METADATA = [1, embedded(decoder(OBJECT_META)), 'keep'] as const;

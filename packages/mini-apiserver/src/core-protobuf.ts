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
import { decodeMoreKinds, MORE_PROTOBUF_KINDS } from './kinds-protobuf.js';
import {
  boolField,
  bytesMap,
  decodeMessage,
  decoder,
  embedded,
  envelope,
  fail,
  int64,
  METADATA,
  type MessageSpec,
  optional,
  repeated,
  stringMap,
  strings,
  text,
} from './protobuf-reader.js';

/** `corev1.ObjectReference`. */
const OBJECT_REFERENCE: MessageSpec = {
  kind: [1, text],
  namespace: [2, text],
  name: [3, text],
  uid: [4, text],
  apiVersion: [5, text],
  resourceVersion: [6, text],
  fieldPath: [7, text],
};

/** The top-level fields of each kind decoded here. */
const KINDS: Readonly<Record<string, MessageSpec>> = {
  ConfigMap: {
    metadata: METADATA,
    data: [2, stringMap],
    binaryData: [3, bytesMap],
    immutable: [4, boolField],
  },
  Secret: {
    metadata: METADATA,
    data: [2, bytesMap],
    type: [3, text],
    stringData: [4, stringMap],
    immutable: [5, boolField],
  },
  ServiceAccount: {
    metadata: METADATA,
    secrets: [2, repeated(decoder(OBJECT_REFERENCE))],
    imagePullSecrets: [3, repeated((r) => ({ name: text(r, 1) }))],
    automountServiceAccountToken: [4, boolField],
  },
  TokenRequest: {
    metadata: METADATA,
    spec: [
      2,
      embedded(
        decoder({
          audiences: [1, strings],
          expirationSeconds: [4, int64],
          boundObjectRef: [
            3,
            optional(decoder({ kind: [1, text], apiVersion: [2, text], name: [3, text], uid: [4, text] })),
          ],
        }),
      ),
    ],
  },
  TokenReview: {
    metadata: METADATA,
    spec: [2, embedded(decoder({ token: [1, text], audiences: [2, strings] }))],
  },
};

/** The kinds {@link decodeObject} understands. */
export const PROTOBUF_KINDS: ReadonlySet<string> = new Set(Object.keys(KINDS));

/**
 * Decodes a protobuf body (`k8s\0` magic, `runtime.Unknown` envelope) into the JSON shape of
 * the object it carries, with its `kind` and `apiVersion`.
 * @throws ApiStatusError 400 for bytes that are not such a message, or of a kind not in
 *   {@link PROTOBUF_KINDS}.
 */
export function decodeObject(body: Buffer): Record<string, unknown> {
  const { kind, apiVersion, raw } = envelope(body);
  if (MORE_PROTOBUF_KINDS.has(kind)) return { kind, apiVersion, ...decodeMoreKinds(kind, raw) };
  if (!PROTOBUF_KINDS.has(kind)) fail();
  return { kind, apiVersion, ...decodeMessage(raw, KINDS[kind] as MessageSpec) };
}

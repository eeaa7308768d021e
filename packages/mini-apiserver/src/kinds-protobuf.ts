/**
 * Protobuf decoding of the further kinds kubectl's typed clients send as
 * `application/vnd.kubernetes.protobuf`: Namespace and Service (`kubectl create namespace`,
 * `create service clusterip|nodeport|loadbalancer|externalname`), Role, ClusterRole,
 * RoleBinding and ClusterRoleBinding (`kubectl create role|clusterrole|rolebinding|
 * clusterrolebinding`) and Lease (client-go's leader election), with the field numbers of
 * k8s.io/api's generated.proto (core/v1, rbac/v1, coordination/v1). The result is the JSON
 * shape of the object without `kind`/`apiVersion` (added by `decodeObject`); status is not
 * decoded (the server owns it on create).
 *
 * @module
 * @internal
 */
import {
  boolField,
  decodeMessage,
  decoder,
  embedded,
  type FieldReader,
  type Fields,
  int32,
  METADATA,
  type MessageSpec,
  messages,
  nonZero,
  optional,
  repeated,
  stringMap,
  strings,
  sub,
  text,
  varintField,
} from './protobuf-reader.js';

/** `intstr.IntOrString`: type 1 (0 int, 1 string), intVal 2, strVal 3. */
const intOrString: FieldReader = (f, n) => {
  const v = sub(f, n);
  if (!v) return undefined;
  return varintField(v, 1) === 1n ? text(v, 3) : (int32(v, 2) ?? 0);
};

/** `metav1.LabelSelector`: matchLabels 1, matchExpressions 2 (key 1, operator 2, values 3). */
const LABEL_SELECTOR: MessageSpec = {
  matchLabels: [1, stringMap],
  matchExpressions: [
    2,
    repeated(decoder({ key: [1, text, 'keep'], operator: [2, text, 'keep'], values: [3, strings] })),
  ],
};

/** `metav1.MicroTime` (a Timestamp: seconds 1, nanos 2) as RFC 3339 with microseconds. */
const microTime: FieldReader = (f, n) => {
  const t = sub(f, n);
  if (!t) return undefined;
  const seconds = Number(BigInt.asIntN(64, varintField(t, 1) ?? 0n));
  const nanos = int32(t, 2) ?? 0;
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${iso}.${String(Math.trunc(nanos / 1000)).padStart(6, '0')}Z`;
};

const SERVICE_PORT: MessageSpec = {
  name: [1, text],
  protocol: [2, text],
  appProtocol: [6, text],
  port: [3, (f, n) => int32(f, n) ?? 0, 'keep'],
  targetPort: [4, nonZero(intOrString)],
  nodePort: [5, nonZero(int32)],
};

const SERVICE_SPEC: MessageSpec = {
  ports: [1, repeated(decoder(SERVICE_PORT))],
  selector: [2, stringMap],
  clusterIP: [3, text],
  clusterIPs: [18, strings],
  type: [4, text],
  externalIPs: [5, strings],
  sessionAffinity: [7, text],
  loadBalancerIP: [8, text],
  loadBalancerSourceRanges: [9, strings],
  externalName: [10, text],
  externalTrafficPolicy: [11, text],
  healthCheckNodePort: [12, nonZero(int32)],
  publishNotReadyAddresses: [13, (f, n) => (boolField(f, n) === true ? true : undefined)],
  sessionAffinityConfig: [
    14,
    optional(decoder({ clientIP: [1, optional(decoder({ timeoutSeconds: [1, int32] }))] })),
  ],
  ipFamilies: [19, strings],
  ipFamilyPolicy: [17, text],
  allocateLoadBalancerNodePorts: [20, boolField],
  loadBalancerClass: [21, text],
  internalTrafficPolicy: [22, text],
  trafficDistribution: [23, text],
};

const POLICY_RULE: MessageSpec = {
  verbs: [1, strings, 'keep'],
  apiGroups: [2, strings],
  resources: [3, strings],
  resourceNames: [4, strings],
  nonResourceURLs: [5, strings],
};

/** A role's `rules`: no omitempty, and absent (a nil slice in Go) is JSON null, as kubectl's own JSON has it. */
const RULES = [
  2,
  (f: Fields, n: number) => {
    const rules = messages(f, n).map(decoder(POLICY_RULE));
    return rules.length > 0 ? rules : null;
  },
  'keep',
] as const;

const BINDING: MessageSpec = {
  metadata: METADATA,
  subjects: [
    2,
    repeated(
      decoder({
        kind: [1, text, 'keep'],
        apiGroup: [2, text],
        name: [3, text, 'keep'],
        namespace: [4, text],
      }),
    ),
  ],
  roleRef: [
    3,
    embedded(decoder({ apiGroup: [1, text, 'keep'], kind: [2, text, 'keep'], name: [3, text, 'keep'] })),
    'keep',
  ],
};

/** The top-level fields of each kind decoded here. */
const KINDS: Readonly<Record<string, MessageSpec>> = {
  Namespace: {
    metadata: METADATA,
    spec: [
      2,
      (f, n) => {
        const spec = sub(f, n);
        const finalizers = spec ? strings(spec, 1) : [];
        return finalizers.length > 0 ? { finalizers } : undefined;
      },
    ],
  },
  Service: { metadata: METADATA, spec: [2, embedded(decoder(SERVICE_SPEC)), 'keep'] },
  Role: { metadata: METADATA, rules: RULES },
  ClusterRole: {
    metadata: METADATA,
    rules: RULES,
    aggregationRule: [
      3,
      optional(decoder({ clusterRoleSelectors: [1, repeated(decoder(LABEL_SELECTOR)), 'keep'] })),
    ],
  },
  RoleBinding: BINDING,
  ClusterRoleBinding: BINDING,
  Lease: {
    metadata: METADATA,
    spec: [
      2,
      embedded(
        decoder({
          holderIdentity: [1, text],
          leaseDurationSeconds: [2, int32],
          acquireTime: [3, microTime],
          renewTime: [4, microTime],
          leaseTransitions: [5, int32],
          strategy: [6, text],
          preferredHolder: [7, text],
        }),
      ),
      'keep',
    ],
  },
};

/** The kinds {@link decodeMoreKinds} understands. */
export const MORE_PROTOBUF_KINDS: ReadonlySet<string> = new Set(Object.keys(KINDS));

/**
 * Decodes the body (`runtime.Unknown.raw`) of a kind in {@link MORE_PROTOBUF_KINDS} into its JSON
 * shape (metadata and spec-like fields; no `kind`/`apiVersion`).
 */
export function decodeMoreKinds(kind: string, f: Fields): Record<string, unknown> {
  const spec = MORE_PROTOBUF_KINDS.has(kind) ? KINDS[kind] : undefined;
  return spec ? decodeMessage(f, spec) : decodeMessage(f, { metadata: METADATA });
}

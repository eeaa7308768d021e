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
import { bytes, type Fields, fields, strings, text } from './access-review-protobuf.js';
import { boolField, mapField, messages, objectMeta, put, varintField } from './core-protobuf.js';

/** The kinds {@link decodeMoreKinds} understands. */
export const MORE_PROTOBUF_KINDS: ReadonlySet<string> = new Set([
  'Namespace',
  'Service',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'Lease',
]);

function int32(f: Fields, n: number): number | undefined {
  const v = varintField(f, n);
  return v === undefined ? undefined : Number(BigInt.asIntN(32, v));
}

function sub(f: Fields, n: number): Fields | undefined {
  const b = bytes(f, n);
  return b === undefined ? undefined : fields(b);
}

/** `intstr.IntOrString`: type 1 (0 int, 1 string), intVal 2, strVal 3. */
function intOrString(f: Fields | undefined): number | string | undefined {
  if (!f) return undefined;
  return varintField(f, 1) === 1n ? text(f, 3) : (int32(f, 2) ?? 0);
}

/** `metav1.LabelSelector`: matchLabels 1, matchExpressions 2 (key 1, operator 2, values 3). */
function labelSelector(f: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  put(out, 'matchLabels', mapField(f, 1, false));
  put(
    out,
    'matchExpressions',
    messages(f, 2).map((e) => {
      const r: Record<string, unknown> = { key: text(e, 1), operator: text(e, 2) };
      put(r, 'values', strings(e, 3));
      return r;
    }),
  );
  return out;
}

/** `metav1.MicroTime` (a Timestamp: seconds 1, nanos 2) as RFC 3339 with microseconds. */
function microTime(f: Fields | undefined): string | undefined {
  if (!f) return undefined;
  const seconds = Number(BigInt.asIntN(64, varintField(f, 1) ?? 0n));
  const nanos = int32(f, 2) ?? 0;
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${iso}.${String(Math.trunc(nanos / 1000)).padStart(6, '0')}Z`;
}

function servicePort(p: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  put(out, 'name', text(p, 1));
  put(out, 'protocol', text(p, 2));
  put(out, 'appProtocol', text(p, 6));
  out.port = int32(p, 3) ?? 0;
  const target = intOrString(sub(p, 4));
  if (target !== undefined && target !== 0 && target !== '') out.targetPort = target;
  const nodePort = int32(p, 5);
  if (nodePort !== undefined && nodePort !== 0) out.nodePort = nodePort;
  return out;
}

function serviceSpec(s: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  put(out, 'ports', messages(s, 1).map(servicePort));
  put(out, 'selector', mapField(s, 2, false));
  put(out, 'clusterIP', text(s, 3));
  put(out, 'clusterIPs', strings(s, 18));
  put(out, 'type', text(s, 4));
  put(out, 'externalIPs', strings(s, 5));
  put(out, 'sessionAffinity', text(s, 7));
  put(out, 'loadBalancerIP', text(s, 8));
  put(out, 'loadBalancerSourceRanges', strings(s, 9));
  put(out, 'externalName', text(s, 10));
  put(out, 'externalTrafficPolicy', text(s, 11));
  const hc = int32(s, 12);
  if (hc !== undefined && hc !== 0) out.healthCheckNodePort = hc;
  if (boolField(s, 13) === true) out.publishNotReadyAddresses = true;
  const affinity = sub(s, 14);
  if (affinity) {
    const clientIP = sub(affinity, 1);
    const cfg: Record<string, unknown> = {};
    if (clientIP) {
      const c: Record<string, unknown> = {};
      put(c, 'timeoutSeconds', int32(clientIP, 1));
      cfg.clientIP = c;
    }
    out.sessionAffinityConfig = cfg;
  }
  put(out, 'ipFamilies', strings(s, 19));
  put(out, 'ipFamilyPolicy', text(s, 17));
  put(out, 'allocateLoadBalancerNodePorts', boolField(s, 20));
  put(out, 'loadBalancerClass', text(s, 21));
  put(out, 'internalTrafficPolicy', text(s, 22));
  put(out, 'trafficDistribution', text(s, 23));
  return out;
}

function policyRule(r: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = { verbs: strings(r, 1) };
  put(out, 'apiGroups', strings(r, 2));
  put(out, 'resources', strings(r, 3));
  put(out, 'resourceNames', strings(r, 4));
  put(out, 'nonResourceURLs', strings(r, 5));
  return out;
}

function subject(r: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: text(r, 1) };
  put(out, 'apiGroup', text(r, 2));
  out.name = text(r, 3);
  put(out, 'namespace', text(r, 4));
  return out;
}

/**
 * Decodes the body (`runtime.Unknown.raw`) of a kind in {@link MORE_PROTOBUF_KINDS} into its JSON
 * shape (metadata and spec-like fields; no `kind`/`apiVersion`).
 */
export function decodeMoreKinds(kind: string, f: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = { metadata: objectMeta(bytes(f, 1)) };
  switch (kind) {
    case 'Namespace': {
      const spec = sub(f, 2);
      const finalizers = spec ? strings(spec, 1) : [];
      if (finalizers.length > 0) out.spec = { finalizers };
      break;
    }
    case 'Service':
      out.spec = serviceSpec(sub(f, 2) ?? new Map());
      break;
    case 'Role':
    case 'ClusterRole': {
      // `rules` has no omitempty: absent (a nil slice in Go) is JSON null, as kubectl's own JSON has it.
      const rules = messages(f, 2).map(policyRule);
      out.rules = rules.length > 0 ? rules : null;
      const agg = kind === 'ClusterRole' ? sub(f, 3) : undefined;
      if (agg) out.aggregationRule = { clusterRoleSelectors: messages(agg, 1).map(labelSelector) };
      break;
    }
    case 'RoleBinding':
    case 'ClusterRoleBinding': {
      put(out, 'subjects', messages(f, 2).map(subject));
      const ref = sub(f, 3) ?? new Map();
      out.roleRef = { apiGroup: text(ref, 1), kind: text(ref, 2), name: text(ref, 3) };
      break;
    }
    case 'Lease': {
      const spec = sub(f, 2) ?? new Map();
      const s: Record<string, unknown> = {};
      put(s, 'holderIdentity', text(spec, 1));
      put(s, 'leaseDurationSeconds', int32(spec, 2));
      put(s, 'acquireTime', microTime(sub(spec, 3)));
      put(s, 'renewTime', microTime(sub(spec, 4)));
      put(s, 'leaseTransitions', int32(spec, 5));
      put(s, 'strategy', text(spec, 6));
      put(s, 'preferredHolder', text(spec, 7));
      out.spec = s;
      break;
    }
  }
  return out;
}

/**
 * Decodes the protobuf bodies of rbac.authorization.k8s.io/v1 objects that kubectl's typed
 * clients send (`kubectl create role|clusterrole|rolebinding|clusterrolebinding`): Role,
 * ClusterRole (with `aggregationRule`), RoleBinding and ClusterRoleBinding, field numbers of
 * their generated.proto. `metadata` is decoded by the caller.
 *
 * @module
 * @internal
 */
import { bytes, type Fields, fields, strings, text } from './access-review-protobuf.js';

/** The RBAC kinds {@link decodeRbacFields} understands. */
export const RBAC_PROTOBUF_KINDS: ReadonlySet<string> = new Set([
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
]);

const messages = (f: Fields, n: number): Fields[] =>
  (f.get(n) ?? []).filter(Buffer.isBuffer).map((b) => fields(b));

function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return;
  out[key] = value;
}

function policyRule(r: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = { verbs: strings(r, 1) };
  put(out, 'apiGroups', strings(r, 2));
  put(out, 'resources', strings(r, 3));
  put(out, 'resourceNames', strings(r, 4));
  put(out, 'nonResourceURLs', strings(r, 5));
  return out;
}

function labelSelector(s: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const labels = messages(s, 1);
  if (labels.length > 0) out.matchLabels = Object.fromEntries(labels.map((e) => [text(e, 1), text(e, 2)]));
  put(
    out,
    'matchExpressions',
    messages(s, 2).map((e) => {
      const x: Record<string, unknown> = { key: text(e, 1), operator: text(e, 2) };
      put(x, 'values', strings(e, 3));
      return x;
    }),
  );
  return out;
}

/** The fields after `metadata` of an RBAC object of `kind`. */
export function decodeRbacFields(kind: string, f: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (kind === 'Role' || kind === 'ClusterRole') {
    out.rules = messages(f, 2).map(policyRule);
    const agg = bytes(f, 3);
    if (kind === 'ClusterRole' && agg) {
      out.aggregationRule = { clusterRoleSelectors: messages(fields(agg), 1).map(labelSelector) };
    }
    return out;
  }
  put(
    out,
    'subjects',
    messages(f, 2).map((s) => {
      const subject: Record<string, unknown> = { kind: text(s, 1) };
      put(subject, 'apiGroup', text(s, 2));
      subject.name = text(s, 3);
      put(subject, 'namespace', text(s, 4));
      return subject;
    }),
  );
  const ref = fields(bytes(f, 3) ?? Buffer.alloc(0));
  out.roleRef = { apiGroup: text(ref, 1), kind: text(ref, 2), name: text(ref, 3) };
  return out;
}

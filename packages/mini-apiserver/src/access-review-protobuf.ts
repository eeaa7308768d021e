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
import { bytes, envelope, fields, message, strings, text } from './protobuf-reader.js';

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
  const { kind, apiVersion, raw: review } = envelope(body);
  const spec = message(review, 2);
  const out: Record<string, unknown> = {};
  if (kind === 'SelfSubjectRulesReview') {
    // SelfSubjectRulesReviewSpec: 1 namespace.
    const namespace = text(spec, 1);
    return { kind, apiVersion, spec: namespace === '' ? {} : { namespace } };
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
  const namespace = text(message(review, 1), 3);
  return {
    kind,
    apiVersion,
    ...(namespace === '' ? {} : { metadata: { namespace } }),
    spec: out,
  };
}

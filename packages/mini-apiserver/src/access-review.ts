/**
 * `SubjectAccessReview` and `SelfSubjectAccessReview` (authorization.k8s.io/v1): ask the
 * server's authorizer whether a user (or the caller) may do something, as `kubectl auth
 * can-i` and a kubelet's delegated authorization do. Nothing is stored; the answer is the
 * request with `status` filled in (201 Created).
 *
 * @module
 * @internal
 */
import type { IncomingMessage } from 'node:http';
import { decodeAccessReview } from './access-review-protobuf.js';
import { badRequest, invalid } from './errors.js';
import { isPlainObject } from './object.js';
import { PROTOBUF_MEDIA_TYPE } from './protobuf-reader.js';
import type { Decision, UserInfo } from './rbac.js';
import { checkBodyMediaType, mediaTypeOf, parseJsonBody, readRawBody } from './request-body.js';
import type { RequestInfo } from './request-info.js';

/** The group and version served. */
export const AUTHORIZATION_GROUP = 'authorization.k8s.io';

/** Something that decides requests. */
export interface Authorizer {
  authorize(user: UserInfo, info: RequestInfo): Decision;
}

/** The kube-apiserver `AlwaysAllow` mode. */
export const ALWAYS_ALLOW: Authorizer = { authorize: () => ({ allowed: true, reason: '' }) };

type Obj = Record<string, unknown>;

const str = (o: Obj, k: string): string => (typeof o[k] === 'string' ? (o[k] as string) : '');

function attributesOf(kind: string, spec: Obj): RequestInfo {
  const r = spec.resourceAttributes;
  const n = spec.nonResourceAttributes;
  if (isPlainObject(r) && isPlainObject(n)) {
    throw invalid(AUTHORIZATION_GROUP, kind, '', [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(JSON.stringify(n))}: cannot be specified in combination with resourceAttributes`,
        field: 'spec.nonResourceAttributes',
      },
    ]);
  }
  if (isPlainObject(r)) {
    return {
      isResourceRequest: true,
      path: '',
      verb: str(r, 'verb'),
      apiGroup: str(r, 'group'),
      apiVersion: str(r, 'version'),
      namespace: str(r, 'namespace'),
      resource: str(r, 'resource'),
      subresource: str(r, 'subresource'),
      name: str(r, 'name'),
    };
  }
  if (isPlainObject(n)) {
    return {
      isResourceRequest: false,
      path: str(n, 'path'),
      verb: str(n, 'verb'),
      apiGroup: '',
      apiVersion: '',
      namespace: '',
      resource: '',
      subresource: '',
      name: '',
    };
  }
  throw invalid(AUTHORIZATION_GROUP, kind, '', [
    {
      reason: 'FieldValueInvalid',
      message:
        'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
      field: 'spec.resourceAttributes',
    },
  ]);
}

/**
 * Answers a review: `subjectaccessreviews` judge `spec.user`/`spec.groups`,
 * `selfsubjectaccessreviews` the caller.
 * @throws ApiStatusError 422 for a spec without exactly one kind of attributes or without a subject.
 */
export function review(
  resource: 'subjectaccessreviews' | 'selfsubjectaccessreviews',
  body: Obj,
  caller: UserInfo,
  authorizer: Authorizer,
): Obj {
  const kind = resource === 'subjectaccessreviews' ? 'SubjectAccessReview' : 'SelfSubjectAccessReview';
  const spec = isPlainObject(body.spec) ? body.spec : {};
  const info = attributesOf(kind, spec);
  let user = caller;
  if (resource === 'subjectaccessreviews') {
    const groups = Array.isArray(spec.groups)
      ? spec.groups.filter((g): g is string => typeof g === 'string')
      : [];
    const name = str(spec, 'user');
    if (name === '' && groups.length === 0) {
      throw invalid(AUTHORIZATION_GROUP, kind, '', [
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "": at least one of user or group must be specified',
          field: 'spec.user',
        },
      ]);
    }
    user = { name, groups };
  }
  const decision = authorizer.authorize(user, info);
  const status: Obj = { allowed: decision.allowed };
  if (decision.reason !== '') status.reason = decision.reason;
  const metadata = isPlainObject(body.metadata) ? body.metadata : {};
  return {
    kind,
    apiVersion: `${AUTHORIZATION_GROUP}/v1`,
    metadata: { ...metadata, creationTimestamp: null },
    spec,
    status,
  };
}

/**
 * Reads a review from a request body: JSON, or the protobuf kubectl sends (the answer is JSON,
 * which kubectl also accepts).
 * @throws ApiStatusError 415 for another media type, 400 for a body that does not decode.
 */
export async function readAccessReview(req: IncomingMessage, limitBytes: number): Promise<Obj> {
  checkBodyMediaType(req.headers['content-type']);
  const raw = await readRawBody(req, limitBytes);
  const body =
    mediaTypeOf(req.headers['content-type']) === PROTOBUF_MEDIA_TYPE
      ? decodeAccessReview(raw)
      : parseJsonBody(raw.toString('utf8'));
  if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object');
  return body;
}

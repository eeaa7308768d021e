/**
 * Discovery documents: `/api`, `/api/v1`, `/apis`, `/apis/<group>`, `/apis/<group>/<version>`
 * and `/version`, in the legacy (non-aggregated) JSON format every client understands.
 *
 * @module
 * @internal
 */
import { EVENTS_GROUP, EVENTS_V1_RESOURCES } from './events-v1.js';
import { openApiV3Schemas } from './openapi.js';
import { RESOURCE_TYPES, RESOURCE_VERBS, type ResourceType } from './resources.js';

/** The `/version` answer. */
export const VERSION_INFO = {
  major: '1',
  minor: '36',
  emulationMajor: '1',
  emulationMinor: '36',
  minCompatibilityMajor: '1',
  minCompatibilityMinor: '35',
  gitVersion: 'v1.36.0-nodeagent-mini',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'n/a',
  compiler: 'n/a',
  platform: `${process.platform}/${process.arch}`,
} as const;

/** Served by the access-review handler, not the store: create only. */
const AUTHORIZATION_RESOURCES = [
  {
    name: 'localsubjectaccessreviews',
    singularName: 'localsubjectaccessreview',
    namespaced: true,
    kind: 'LocalSubjectAccessReview',
    verbs: ['create'],
  },
  {
    name: 'selfsubjectaccessreviews',
    singularName: 'selfsubjectaccessreview',
    namespaced: false,
    kind: 'SelfSubjectAccessReview',
    verbs: ['create'],
  },
  {
    name: 'selfsubjectrulesreviews',
    singularName: 'selfsubjectrulesreview',
    namespaced: false,
    kind: 'SelfSubjectRulesReview',
    verbs: ['create'],
  },
  {
    name: 'subjectaccessreviews',
    singularName: 'subjectaccessreview',
    namespaced: false,
    kind: 'SubjectAccessReview',
    verbs: ['create'],
  },
];

/** Served by the token review handler: create only. */
const AUTHENTICATION_RESOURCES = [
  {
    name: 'tokenreviews',
    singularName: 'tokenreview',
    namespaced: false,
    kind: 'TokenReview',
    verbs: ['create'],
  },
];

/** Groups served by handlers rather than the store, with their resources. */
const HANDLER_GROUPS: ReadonlyMap<string, readonly unknown[]> = new Map([
  ['authentication.k8s.io', AUTHENTICATION_RESOURCES],
  ['authorization.k8s.io', AUTHORIZATION_RESOURCES],
  [EVENTS_GROUP, EVENTS_V1_RESOURCES],
]);

function groups(): Map<string, ResourceType[]> {
  const out = new Map<string, ResourceType[]>();
  for (const t of RESOURCE_TYPES) {
    if (t.group === '') continue;
    const list = out.get(t.group) ?? [];
    list.push(t);
    out.set(t.group, list);
  }
  return out;
}

/** `/api` (APIVersions). */
export function apiVersions(serverAddress: string): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupDoc(group: string, version: string): unknown {
  const gv = { groupVersion: `${group}/${version}`, version };
  return { name: group, versions: [gv], preferredVersion: gv };
}

/** `/apis` (APIGroupList). */
export function apiGroupList(): unknown {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [
      ...[...groups().entries()].map(([g, types]) => groupDoc(g, (types[0] as ResourceType).version)),
      ...[...HANDLER_GROUPS.keys()].map((g) => groupDoc(g, 'v1')),
    ],
  };
}

/** `/apis/<group>` (APIGroup), or `undefined` for an unknown group. */
export function apiGroup(group: string): unknown {
  if (HANDLER_GROUPS.has(group)) {
    return { kind: 'APIGroup', apiVersion: 'v1', ...(groupDoc(group, 'v1') as object) };
  }
  const types = groups().get(group);
  if (!types) return undefined;
  return {
    kind: 'APIGroup',
    apiVersion: 'v1',
    ...(groupDoc(group, (types[0] as ResourceType).version) as object),
  };
}

/** `/api/v1` or `/apis/<group>/<version>` (APIResourceList), or `undefined` when unknown. */
export function apiResourceList(group: string, version: string): unknown {
  const handled = HANDLER_GROUPS.get(group);
  if (handled && version === 'v1') {
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/v1`, resources: handled };
  }
  const types = RESOURCE_TYPES.filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  const resources: unknown[] = [];
  for (const t of types) {
    const main: Record<string, unknown> = {
      name: t.resource,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: RESOURCE_VERBS,
    };
    if (t.shortNames.length > 0) main.shortNames = t.shortNames;
    if (t.categories.length > 0) main.categories = t.categories;
    resources.push(main);
    if (t.hasStatus) {
      resources.push({
        name: `${t.resource}/status`,
        singularName: '',
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: ['get', 'patch', 'update'],
      });
    }
    if (t.resource === 'serviceaccounts') {
      resources.push({
        name: 'serviceaccounts/token',
        singularName: '',
        namespaced: true,
        group: 'authentication.k8s.io',
        version: 'v1',
        kind: 'TokenRequest',
        verbs: ['create'],
      });
    }
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources,
  };
}

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

/**
 * `/openapi/v3` index. The per-group documents only describe PATCH operations with the
 * `fieldValidation` parameter, which is what kubectl looks for to hand validation to the
 * server instead of downloading full schemas (the server does its own validation).
 */
export function openApiV3Index(): unknown {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const t of RESOURCE_TYPES) {
    const p = gvPath(t.group, t.version);
    paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=mini` };
  }
  return { paths };
}

/** `/openapi/v3/<api/v1 | apis/group/version>`, or `undefined` when unknown. */
export function openApiV3Document(path: string): unknown {
  const types = RESOURCE_TYPES.filter((t) => gvPath(t.group, t.version) === path);
  if (types.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  for (const t of types) {
    const prefix = `/${path}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.resource}`;
    const gvk = { group: t.group, version: t.version, kind: t.kind };
    const params = [
      { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
      { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
      { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
    ];
    paths[prefix] = {
      post: {
        operationId: `create${t.kind}`,
        'x-kubernetes-action': 'post',
        'x-kubernetes-group-version-kind': gvk,
        parameters: params,
      },
    };
    paths[`${prefix}/{name}`] = {
      put: {
        operationId: `replace${t.kind}`,
        'x-kubernetes-action': 'put',
        'x-kubernetes-group-version-kind': gvk,
        parameters: params,
      },
      patch: {
        operationId: `patch${t.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': gvk,
        parameters: params,
        requestBody: { content: { 'application/merge-patch+json': { schema: { type: 'object' } } } },
      },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes (mini-apiserver)', version: VERSION_INFO.gitVersion },
    paths,
    components: { schemas: openApiV3Schemas() },
  };
}

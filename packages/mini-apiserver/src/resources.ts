/**
 * The resource types the mini API server serves, with the discovery facts about each
 * (group, version, kind, scope, verbs, short names, subresources).
 *
 * @module
 */

/** Static description of one served resource type. */
export interface ResourceType {
  /** API group; `''` for the core group. */
  readonly group: string;
  /** API version inside the group, e.g. `v1`. */
  readonly version: string;
  /** `apiVersion` written in objects: `v1` or `<group>/<version>`. */
  readonly apiVersion: string;
  /** Plural resource name used in paths, e.g. `pods`. */
  readonly resource: string;
  /** Singular name, e.g. `pod`. */
  readonly singular: string;
  /** Kind, e.g. `Pod`. */
  readonly kind: string;
  /** Kind of the list, e.g. `PodList`. */
  readonly listKind: string;
  /** Whether objects live in a namespace. */
  readonly namespaced: boolean;
  /** kubectl short names, e.g. `po`. */
  readonly shortNames: readonly string[];
  /** Whether the type has a `status` subresource (PUT/PATCH to the main resource ignore status). */
  readonly hasStatus: boolean;
  /** Category names for discovery (`all`). */
  readonly categories: readonly string[];
}

function rt(
  group: string,
  version: string,
  resource: string,
  singular: string,
  kind: string,
  namespaced: boolean,
  shortNames: string[],
  hasStatus: boolean,
  categories: string[] = [],
): ResourceType {
  return {
    group,
    version,
    apiVersion: group === '' ? version : `${group}/${version}`,
    resource,
    singular,
    kind,
    listKind: `${kind}List`,
    namespaced,
    shortNames,
    hasStatus,
    categories,
  };
}

/** Every resource type served, in discovery order. */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  rt('', 'v1', 'pods', 'pod', 'Pod', true, ['po'], true, ['all']),
  rt('', 'v1', 'nodes', 'node', 'Node', false, ['no'], true),
  rt('', 'v1', 'services', 'service', 'Service', true, ['svc'], true, ['all']),
  rt('', 'v1', 'events', 'event', 'Event', true, ['ev'], false),
  rt('', 'v1', 'namespaces', 'namespace', 'Namespace', false, ['ns'], true),
  rt('', 'v1', 'configmaps', 'configmap', 'ConfigMap', true, ['cm'], false),
  rt('', 'v1', 'secrets', 'secret', 'Secret', true, [], false),
  rt('', 'v1', 'serviceaccounts', 'serviceaccount', 'ServiceAccount', true, ['sa'], false),
  rt('discovery.k8s.io', 'v1', 'endpointslices', 'endpointslice', 'EndpointSlice', true, [], false),
  rt('networking.k8s.io', 'v1', 'servicecidrs', 'servicecidr', 'ServiceCIDR', false, [], true),
  rt('apps', 'v1', 'daemonsets', 'daemonset', 'DaemonSet', true, ['ds'], true, ['all']),
  rt('coordination.k8s.io', 'v1', 'leases', 'lease', 'Lease', true, ['lease'], false),
  rt('rbac.authorization.k8s.io', 'v1', 'roles', 'role', 'Role', true, [], false),
  rt('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'clusterrole', 'ClusterRole', false, [], false),
  rt('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'rolebinding', 'RoleBinding', true, [], false),
  rt(
    'rbac.authorization.k8s.io',
    'v1',
    'clusterrolebindings',
    'clusterrolebinding',
    'ClusterRoleBinding',
    false,
    [],
    false,
  ),
];

/** The verbs every served type supports, as listed in discovery. */
export const RESOURCE_VERBS: readonly string[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

/** Name of a resource type for the store API: the plural (`pods`, `leases`, `endpointslices`). */
export type ResourceName =
  | 'pods'
  | 'nodes'
  | 'services'
  | 'events'
  | 'namespaces'
  | 'configmaps'
  | 'secrets'
  | 'serviceaccounts'
  | 'endpointslices'
  | 'servicecidrs'
  | 'daemonsets'
  | 'leases'
  | 'roles'
  | 'clusterroles'
  | 'rolebindings'
  | 'clusterrolebindings';

const BY_NAME = new Map<string, ResourceType>();
for (const t of RESOURCE_TYPES) {
  BY_NAME.set(t.resource, t);
  BY_NAME.set(`${t.resource}.${t.group}`, t);
  BY_NAME.set(`${t.group}/${t.resource}`, t);
}

/**
 * Finds a resource type by plural (`pods`), `plural.group` or `group/plural`.
 * @returns `undefined` for a type the server does not serve.
 */
export function findResourceType(name: string): ResourceType | undefined {
  return BY_NAME.get(name);
}

/** Finds a resource type by API group, version and plural, as they appear in a path. */
export function resourceTypeForPath(
  group: string,
  version: string,
  resource: string,
): ResourceType | undefined {
  const t = BY_NAME.get(resource);
  return t && t.group === group && t.version === version ? t : undefined;
}

/**
 * The part of kube-apiserver's bootstrap RBAC policy every cluster has and clients rely on:
 * discovery and health paths for everyone authenticated (`system:discovery`,
 * `system:public-info-viewer`), self access reviews (`system:basic-user`, which `kubectl
 * auth can-i` needs), the issuer discovery documents for service accounts
 * (`system:service-account-issuer-discovery`) and the unbound `system:auth-delegator`
 * (token and access reviews, for servers that delegate authentication) and the unbound
 * `system:kubelet-api-admin` (full access to the kubelet API, for the API server's kubelet
 * client). Created in the store when the server starts in RBAC mode.
 *
 * @module
 * @internal
 */
import type { KubeObject } from './object.js';

const BOOTSTRAP_META = {
  labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
  annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
};

function clusterRole(name: string, rules: unknown[]): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, ...BOOTSTRAP_META },
    rules,
  } as KubeObject;
}

function bindingToGroups(name: string, groups: string[]): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, ...BOOTSTRAP_META },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  } as KubeObject;
}

/** The bootstrap ClusterRoles, then their ClusterRoleBindings. */
export function bootstrapPolicy(): { clusterRoles: KubeObject[]; clusterRoleBindings: KubeObject[] } {
  return {
    clusterRoles: [
      clusterRole('system:discovery', [
        {
          verbs: ['get'],
          nonResourceURLs: [
            '/api',
            '/api/*',
            '/apis',
            '/apis/*',
            '/healthz',
            '/livez',
            '/openapi',
            '/openapi/*',
            '/readyz',
            '/version',
            '/version/',
          ],
        },
      ]),
      clusterRole('system:basic-user', [
        {
          verbs: ['create'],
          apiGroups: ['authorization.k8s.io'],
          resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
        },
        { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
      ]),
      clusterRole('system:service-account-issuer-discovery', [
        {
          verbs: ['get'],
          nonResourceURLs: [
            '/.well-known/openid-configuration',
            '/.well-known/openid-configuration/',
            '/openid/v1/jwks',
            '/openid/v1/jwks/',
          ],
        },
      ]),
      clusterRole('system:auth-delegator', [
        { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'] },
        { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'] },
      ]),
      clusterRole('system:kubelet-api-admin', [
        { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['nodes'] },
        { verbs: ['proxy'], apiGroups: [''], resources: ['nodes'] },
        {
          verbs: ['*'],
          apiGroups: [''],
          resources: ['nodes/proxy', 'nodes/metrics', 'nodes/spec', 'nodes/stats', 'nodes/log'],
        },
      ]),
      clusterRole('system:public-info-viewer', [
        { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
      ]),
    ],
    clusterRoleBindings: [
      bindingToGroups('system:discovery', ['system:authenticated']),
      bindingToGroups('system:basic-user', ['system:authenticated']),
      bindingToGroups('system:service-account-issuer-discovery', ['system:serviceaccounts']),
      bindingToGroups('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
    ],
  };
}

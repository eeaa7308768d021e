/**
 * The ServiceAccount admission plugin's mutation of new pods (kube-apiserver's
 * `plugin/pkg/admission/serviceaccount`): the `default` service account when none is named,
 * a check that the service account exists, its image pull secrets, and the projected
 * `kube-api-access-<suffix>` volume (token, cluster CA, namespace) mounted read-only at
 * `/var/run/secrets/kubernetes.io/serviceaccount` in every container and init container.
 *
 * @module
 */
import { forbidden } from './errors.js';
import { isPlainObject, type KubeObject } from './object.js';
import { WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS } from './serviceaccount-token.js';
import type { ObjectStore } from './store.js';

/** Name of the service account pods use when they name none. */
export const DEFAULT_SERVICE_ACCOUNT_NAME = 'default';

/** Where the token volume is mounted in containers (`DefaultAPITokenMountPath`). */
export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Prefix (before the `-` and the random suffix) of the token volume's name. */
export const SERVICE_ACCOUNT_VOLUME_NAME = 'kube-api-access';

/** The ConfigMap the root CA publisher keeps in every namespace. */
export const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt';

/** Annotation of mirror pods (pods of static manifests), which are not mutated. */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** Five random characters as apimachinery's `SimpleNameGenerator` appends. */
export function randomNameSuffix(random: () => number = Math.random): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_CHARS[Math.floor(random() * GENERATE_CHARS.length)];
  return s;
}

/** The projected volume source of the token volume, exactly as upstream's `TokenVolumeSource()`. */
export function tokenVolumeSource(): Record<string, unknown> {
  return {
    sources: [
      { serviceAccountToken: { expirationSeconds: WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: ROOT_CA_CONFIG_MAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      {
        downwardAPI: {
          items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
        },
      },
    ],
    defaultMode: 0o644,
  };
}

/** Options of {@link admitPod}. */
export interface PodAdmissionOptions {
  /** Add the token volume (`MountServiceAccountToken`). */
  readonly mountServiceAccountToken: boolean;
  /** Random source of the volume name's suffix. */
  readonly random?: () => number;
}

function list(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.filter(isPlainObject) : [];
}

function podName(pod: KubeObject): string {
  const meta = pod.metadata ?? {};
  if (typeof meta.name === 'string' && meta.name !== '') return meta.name;
  if (typeof meta.generateName === 'string' && meta.generateName !== '') return meta.generateName;
  return 'Unknown';
}

function refusal(pod: KubeObject, message: string): never {
  throw forbidden('', 'pods', podName(pod), message);
}

/** Whether a pod names a Secret anywhere (`VisitPodSecretNames` over all containers). */
function referencesSecrets(spec: Record<string, unknown>): boolean {
  if (list(spec.imagePullSecrets).length > 0) return true;
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const c of list(spec[key])) {
      for (const e of list(c.envFrom)) if (isPlainObject(e.secretRef)) return true;
      for (const e of list(c.env)) {
        if (isPlainObject(e.valueFrom) && isPlainObject(e.valueFrom.secretKeyRef)) return true;
      }
    }
  }
  for (const v of list(spec.volumes)) {
    if (isPlainObject(v.secret)) return true;
    if (isPlainObject(v.projected) && list(v.projected.sources).some((src) => isPlainObject(src.secret)))
      return true;
    if (isPlainObject(v.azureFile)) return true;
    if (isPlainObject(v.csi) && isPlainObject(v.csi.nodePublishSecretRef)) return true;
    for (const plugin of ['cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos']) {
      const source = v[plugin];
      if (isPlainObject(source) && isPlainObject(source.secretRef)) return true;
    }
  }
  return false;
}

function validateMirrorPod(pod: KubeObject, spec: Record<string, unknown>): void {
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') {
    refusal(pod, 'a mirror pod may not reference service accounts');
  }
  if (referencesSecrets(spec)) refusal(pod, 'a mirror pod may not reference secrets');
  for (const v of list(spec.volumes)) {
    if (
      isPlainObject(v.projected) &&
      list(v.projected.sources).some((src) => isPlainObject(src.serviceAccountToken))
    ) {
      refusal(pod, 'a mirror pod may not use ServiceAccountToken volume projections');
    }
  }
}

/**
 * Mutates a pod being created in `namespace` as the ServiceAccount admission plugin does.
 * @throws ApiStatusError 403 Forbidden (`error looking up service account <ns>/<name>: ...`)
 *   when the service account does not exist, or for a mirror pod that references one.
 */
export function admitPod(
  store: ObjectStore,
  namespace: string,
  pod: KubeObject,
  options: PodAdmissionOptions,
): void {
  const spec = isPlainObject(pod.spec) ? pod.spec : undefined;
  if (spec === undefined) return;
  const annotations = pod.metadata?.annotations;
  if (isPlainObject(annotations) && MIRROR_POD_ANNOTATION in annotations) {
    validateMirrorPod(pod, spec);
    return;
  }
  if (typeof spec.serviceAccountName !== 'string' || spec.serviceAccountName === '') {
    spec.serviceAccountName = DEFAULT_SERVICE_ACCOUNT_NAME;
  }
  const saName = spec.serviceAccountName as string;
  const sa = store.tryGet('serviceaccounts', namespace, saName);
  if (!sa) {
    refusal(
      pod,
      `error looking up service account ${namespace}/${saName}: serviceaccount ${JSON.stringify(saName)} not found`,
    );
  }
  const saFields = sa as Record<string, unknown>;
  const automount =
    typeof spec.automountServiceAccountToken === 'boolean'
      ? spec.automountServiceAccountToken
      : typeof saFields.automountServiceAccountToken === 'boolean'
        ? saFields.automountServiceAccountToken
        : true;
  if (options.mountServiceAccountToken && automount) mountToken(spec, options.random);
  const pullSecrets = list(saFields.imagePullSecrets);
  // An empty list is omitted on the wire, as upstream's empty slice.
  if (
    (!Array.isArray(spec.imagePullSecrets) || spec.imagePullSecrets.length === 0) &&
    pullSecrets.length > 0
  ) {
    spec.imagePullSecrets = pullSecrets.map((s) => ({ name: s.name }));
  }
}

function mountToken(spec: Record<string, unknown>, random: (() => number) | undefined): void {
  let volumeName = '';
  for (const v of list(spec.volumes)) {
    if (typeof v.name === 'string' && v.name.startsWith(`${SERVICE_ACCOUNT_VOLUME_NAME}-`)) {
      volumeName = v.name;
      break;
    }
  }
  const hasVolume = volumeName !== '';
  if (!hasVolume) volumeName = `${SERVICE_ACCOUNT_VOLUME_NAME}-${randomNameSuffix(random)}`;
  let needsVolume = false;
  for (const key of ['initContainers', 'containers']) {
    const containers = spec[key];
    if (!Array.isArray(containers)) continue;
    for (const c of containers) {
      if (!isPlainObject(c)) continue;
      const mounts = list(c.volumeMounts);
      if (mounts.some((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH)) continue;
      c.volumeMounts = [
        ...(Array.isArray(c.volumeMounts) ? c.volumeMounts : []),
        { name: volumeName, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH },
      ];
      needsVolume = true;
    }
  }
  if (!hasVolume && needsVolume) {
    spec.volumes = [
      ...(Array.isArray(spec.volumes) ? spec.volumes : []),
      { name: volumeName, projected: tokenVolumeSource() },
    ];
  }
}

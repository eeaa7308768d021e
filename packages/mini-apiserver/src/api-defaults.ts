/**
 * API defaulting of pods as kube-apiserver applies it when it decodes a create or update
 * (`SetDefaults_Pod`, `SetDefaults_PodSpec`, `SetDefaults_Container`, probe and volume
 * defaults), plus the `DefaultTolerationSeconds` admission plugin, and the extra pod and
 * service field checks that go with them.
 *
 * @module
 */
import type { StatusCause } from './errors.js';
import { isPlainObject, type KubeObject } from './object.js';

type Rec = Record<string, unknown>;

/** `DefaultTolerationSeconds` admission: seconds a pod tolerates a not-ready/unreachable node. */
export const DEFAULT_TOLERATION_SECONDS = 300;

function setIfAbsent(o: Rec, key: string, value: unknown): void {
  if (o[key] === undefined || o[key] === null || o[key] === '') o[key] = value;
}

/**
 * The pull policy kube-apiserver defaults for an image: `Always` when the tag is `latest`
 * or the reference has neither tag nor digest, `IfNotPresent` otherwise.
 */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const at = image.indexOf('@');
  const ref = at >= 0 ? image.slice(0, at) : image;
  const lastSlash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  const tag = colon > lastSlash ? ref.slice(colon + 1) : '';
  if (tag === '') return at >= 0 ? 'IfNotPresent' : 'Always';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(p: unknown): void {
  if (!isPlainObject(p)) return;
  setIfAbsent(p, 'timeoutSeconds', 1);
  setIfAbsent(p, 'periodSeconds', 10);
  setIfAbsent(p, 'successThreshold', 1);
  setIfAbsent(p, 'failureThreshold', 3);
  if (isPlainObject(p.httpGet)) {
    setIfAbsent(p.httpGet, 'path', '/');
    setIfAbsent(p.httpGet, 'scheme', 'HTTP');
  }
}

function defaultContainer(c: unknown): void {
  if (!isPlainObject(c)) return;
  if (typeof c.image === 'string' && c.image !== '')
    setIfAbsent(c, 'imagePullPolicy', defaultPullPolicy(c.image));
  setIfAbsent(c, 'terminationMessagePath', '/dev/termination-log');
  setIfAbsent(c, 'terminationMessagePolicy', 'File');
  setIfAbsent(c, 'resources', {});
  if (Array.isArray(c.ports))
    for (const p of c.ports) if (isPlainObject(p)) setIfAbsent(p, 'protocol', 'TCP');
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  if (Array.isArray(c.env)) {
    for (const e of c.env) {
      const fieldRef = isPlainObject(e) && isPlainObject(e.valueFrom) ? e.valueFrom.fieldRef : undefined;
      if (isPlainObject(fieldRef)) setIfAbsent(fieldRef, 'apiVersion', 'v1');
    }
  }
}

function defaultVolume(v: unknown): void {
  if (!isPlainObject(v)) return;
  for (const k of ['secret', 'configMap', 'projected', 'downwardAPI'])
    if (isPlainObject(v[k])) setIfAbsent(v[k], 'defaultMode', 420);
  if (isPlainObject(v.hostPath)) setIfAbsent(v.hostPath, 'type', '');
}

function tolerates(tolerations: unknown[], key: string): boolean {
  return tolerations.some(
    (t) =>
      isPlainObject(t) &&
      (t.effect === 'NoExecute' || t.effect === undefined || t.effect === '') &&
      ((t.operator === 'Exists' && (t.key === undefined || t.key === '')) || t.key === key),
  );
}

/**
 * Applies kube-apiserver's pod defaults in place (what `kubectl get pod -o yaml` shows for a
 * pod created from a bare spec).
 * @param create whether this is a create (the admission-time tolerations are added on create only)
 */
export function defaultPod(pod: KubeObject, create: boolean): void {
  const spec = pod.spec;
  if (!isPlainObject(spec)) return;
  setIfAbsent(spec, 'restartPolicy', 'Always');
  setIfAbsent(spec, 'dnsPolicy', 'ClusterFirst');
  setIfAbsent(spec, 'terminationGracePeriodSeconds', 30);
  setIfAbsent(spec, 'schedulerName', 'default-scheduler');
  setIfAbsent(spec, 'securityContext', {});
  if (spec.enableServiceLinks === undefined || spec.enableServiceLinks === null)
    spec.enableServiceLinks = true;
  for (const list of [spec.containers, spec.initContainers, spec.ephemeralContainers])
    if (Array.isArray(list)) for (const c of list) defaultContainer(c);
  if (Array.isArray(spec.volumes)) for (const v of spec.volumes) defaultVolume(v);
  if (create) {
    const tolerations = Array.isArray(spec.tolerations) ? [...spec.tolerations] : [];
    for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
      if (!tolerates(tolerations, key))
        tolerations.push({
          key,
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: DEFAULT_TOLERATION_SECONDS,
        });
    }
    spec.tolerations = tolerations;
  }
}

/**
 * Applies kube-apiserver's DaemonSet defaults in place (`SetDefaults_DaemonSet` of apps/v1:
 * a `RollingUpdate` strategy with `maxUnavailable: 1` and `maxSurge: 0`,
 * `revisionHistoryLimit: 10`, and the pod template's spec defaulted as a pod's — without the
 * `DefaultTolerationSeconds` admission, which applies to pods only).
 */
export function defaultDaemonSet(ds: KubeObject): void {
  const spec = ds.spec;
  if (!isPlainObject(spec)) return;
  if (!isPlainObject(spec.updateStrategy)) spec.updateStrategy = {};
  const strategy = spec.updateStrategy as Rec;
  setIfAbsent(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    if (!isPlainObject(strategy.rollingUpdate)) strategy.rollingUpdate = {};
    const ru = strategy.rollingUpdate as Rec;
    if (ru.maxUnavailable === undefined || ru.maxUnavailable === null) ru.maxUnavailable = 1;
    if (ru.maxSurge === undefined || ru.maxSurge === null) ru.maxSurge = 0;
  }
  if (spec.revisionHistoryLimit === undefined || spec.revisionHistoryLimit === null)
    spec.revisionHistoryLimit = 10;
  if (isPlainObject(spec.template)) defaultPod(spec.template as KubeObject, false);
}

/** An `Unsupported value` cause as upstream's `field.NotSupported`. */
export function notSupported(field: string, value: unknown, supported: readonly string[]): StatusCause {
  return {
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((s) => `"${s}"`).join(', ')}`,
    field,
  };
}

function checkEnum(
  o: Rec,
  key: string,
  field: string,
  supported: readonly string[],
  causes: StatusCause[],
): void {
  const v = o[key];
  if (v !== undefined && v !== null && !supported.includes(String(v)))
    causes.push(notSupported(field, v, supported));
}

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** Pod fields with an enumerated value set, checked as upstream's `ValidatePodSpec`. */
export function validatePodEnums(spec: Rec, causes: StatusCause[]): void {
  checkEnum(
    spec,
    'dnsPolicy',
    'spec.dnsPolicy',
    ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'],
    causes,
  );
  const grace = spec.terminationGracePeriodSeconds;
  if (typeof grace === 'number' && grace < 0)
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${grace}: must be greater than or equal to 0`,
      field: 'spec.terminationGracePeriodSeconds',
    });
  for (const [listName, list] of [
    ['containers', spec.containers],
    ['initContainers', spec.initContainers],
  ] as const) {
    if (!Array.isArray(list)) continue;
    list.forEach((c: unknown, i: number) => {
      if (!isPlainObject(c)) return;
      const f = `spec.${listName}[${i}]`;
      checkEnum(c, 'imagePullPolicy', `${f}.imagePullPolicy`, ['Always', 'IfNotPresent', 'Never'], causes);
      checkEnum(
        c,
        'terminationMessagePolicy',
        `${f}.terminationMessagePolicy`,
        ['File', 'FallbackToLogsOnError'],
        causes,
      );
      if (Array.isArray(c.ports))
        c.ports.forEach((p: unknown, j: number) => {
          if (isPlainObject(p)) checkEnum(p, 'protocol', `${f}.ports[${j}].protocol`, PROTOCOLS, causes);
        });
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
        const p = c[probe];
        if (!isPlainObject(p)) continue;
        for (const k of ['timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
          const v = p[k];
          if (typeof v === 'number' && v < 0)
            causes.push({
              reason: 'FieldValueInvalid',
              message: `Invalid value: ${v}: must be greater than or equal to 0`,
              field: `${f}.${probe}.${k}`,
            });
        }
        if (
          (probe === 'livenessProbe' || probe === 'startupProbe') &&
          p.successThreshold !== undefined &&
          p.successThreshold !== 1
        )
          causes.push({
            reason: 'FieldValueInvalid',
            message: `Invalid value: ${JSON.stringify(p.successThreshold)}: must be 1`,
            field: `${f}.${probe}.successThreshold`,
          });
      }
    });
  }
}

/** Service fields with an enumerated value set, checked as upstream's `ValidateService`. */
export function validateServiceEnums(spec: Rec, causes: StatusCause[]): void {
  checkEnum(spec, 'type', 'spec.type', ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'], causes);
  checkEnum(spec, 'sessionAffinity', 'spec.sessionAffinity', ['ClientIP', 'None'], causes);
  checkEnum(spec, 'internalTrafficPolicy', 'spec.internalTrafficPolicy', ['Cluster', 'Local'], causes);
  checkEnum(spec, 'externalTrafficPolicy', 'spec.externalTrafficPolicy', ['Cluster', 'Local'], causes);
  checkEnum(
    spec,
    'ipFamilyPolicy',
    'spec.ipFamilyPolicy',
    ['PreferDualStack', 'RequireDualStack', 'SingleStack'],
    causes,
  );
  if (Array.isArray(spec.ports))
    spec.ports.forEach((p: unknown, i: number) => {
      if (isPlainObject(p)) checkEnum(p, 'protocol', `spec.ports[${i}].protocol`, PROTOCOLS, causes);
    });
}

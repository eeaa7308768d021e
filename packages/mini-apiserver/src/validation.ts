/**
 * Object validation with field causes (what the real server reports as 422 Invalid):
 * names, and the fields of each type that clients most often get wrong.
 *
 * @module
 */

import { validatePodEnums, validateServiceEnums } from './api-defaults.js';
import { validateConfigObject, validateConfigUpdate } from './config-validation.js';
import { type ApiStatusError, invalid, type StatusCause } from './errors.js';
import { validateAnnotations, validateLabels } from './meta-validation.js';
import { isPlainObject, type KubeObject } from './object.js';
import { validateVolumeMounts, validateVolumes } from './pod-volume-validation.js';
import type { ResourceType } from './resources.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

function required(field: string): StatusCause {
  return { reason: 'FieldValueRequired', message: 'Required value', field };
}

function invalidValue(field: string, value: unknown, detail: string): StatusCause {
  // Go's %q for strings: quotes and control characters escaped.
  const shown = JSON.stringify(value);
  return { reason: 'FieldValueInvalid', message: `Invalid value: ${shown}: ${detail}`, field };
}

type NameRule = 'label' | 'subdomain' | 'dns1035' | 'path';

const NAME_RULES: Readonly<Record<string, NameRule>> = {
  pods: 'subdomain',
  nodes: 'subdomain',
  services: 'dns1035',
  events: 'subdomain',
  namespaces: 'label',
  endpointslices: 'subdomain',
  leases: 'subdomain',
  // RBAC objects: any valid path segment (`system:node` has a colon), as ValidateRBACName.
  roles: 'path',
  clusterroles: 'path',
  rolebindings: 'path',
  clusterrolebindings: 'path',
};

/** Checks a name against a DNS rule; returns a cause or `undefined`. */
export function checkName(field: string, name: string, rule: NameRule): StatusCause | undefined {
  if (rule === 'path') {
    if (name === '.' || name === '..') return invalidValue(field, name, `may not be '${name}'`);
    for (const c of ['/', '%'])
      if (name.includes(c)) return invalidValue(field, name, `may not contain '${c}'`);
  } else if (rule === 'label') {
    if (name.length > 63) return invalidValue(field, name, 'must be no more than 63 characters');
    if (!DNS1123_LABEL.test(name)) return invalidValue(field, name, LABEL_MSG);
  } else if (rule === 'dns1035') {
    if (name.length > 63) return invalidValue(field, name, 'must be no more than 63 characters');
    if (!DNS1035_LABEL.test(name)) return invalidValue(field, name, DNS1035_MSG);
  } else {
    if (name.length > 253) return invalidValue(field, name, 'must be no more than 253 characters');
    if (!DNS1123_SUBDOMAIN.test(name)) return invalidValue(field, name, SUBDOMAIN_MSG);
  }
  return undefined;
}

function validatePort(field: string, port: unknown, causes: StatusCause[]): void {
  if (port === undefined || port === null) {
    causes.push(required(field));
  } else if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    causes.push(invalidValue(field, port, 'must be between 1 and 65535, inclusive'));
  }
}

function validateContainers(
  field: string,
  list: unknown,
  requireOne: boolean,
  volumes: ReadonlySet<string>,
  causes: StatusCause[],
): void {
  if (list === undefined || list === null || (Array.isArray(list) && list.length === 0)) {
    if (requireOne) causes.push(required(field));
    return;
  }
  if (!Array.isArray(list)) {
    causes.push(invalidValue(field, list, 'must be a list'));
    return;
  }
  const seen = new Set<string>();
  list.forEach((c: unknown, i: number) => {
    const f = `${field}[${i}]`;
    const ctr = isPlainObject(c) ? c : {};
    const name = ctr.name;
    if (typeof name !== 'string' || name === '') causes.push(required(`${f}.name`));
    else {
      const bad = checkName(`${f}.name`, name, 'label');
      if (bad) causes.push(bad);
      if (seen.has(name))
        causes.push({
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: "${name}"`,
          field: `${f}.name`,
        });
      seen.add(name);
    }
    if (typeof ctr.image !== 'string' || ctr.image === '') causes.push(required(`${f}.image`));
    validateVolumeMounts(f, ctr.volumeMounts, volumes, causes);
    if (Array.isArray(ctr.ports)) {
      ctr.ports.forEach((p: unknown, j: number) => {
        validatePort(
          `${f}.ports[${j}].containerPort`,
          isPlainObject(p) ? p.containerPort : undefined,
          causes,
        );
      });
    }
  });
}

/** A pod's spec, with the field paths of a Pod (`spec.…`). */
function validatePodSpec(spec: Record<string, unknown>, causes: StatusCause[]): void {
  const volumes = validateVolumes(spec.volumes, (f, n) => checkName(f, n, 'label'), causes);
  validateContainers('spec.containers', spec.containers, true, volumes, causes);
  validateContainers('spec.initContainers', spec.initContainers, false, volumes, causes);
  validatePodEnums(spec, causes);
  const rp = spec.restartPolicy;
  if (rp !== undefined && rp !== 'Always' && rp !== 'OnFailure' && rp !== 'Never') {
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: "${String(rp)}": supported values: "Always", "OnFailure", "Never"`,
      field: 'spec.restartPolicy',
    });
  }
}

/** Go's `%#v` of a `map[string]string`, as upstream prints it in a field error: keys sorted. */
function goStringMap(m: Record<string, unknown> | undefined): string {
  if (m === undefined) return 'map[string]string(nil)';
  const entries = Object.keys(m)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(String(m[k]))}`);
  return `map[string]string{${entries.join(', ')}}`;
}

/** Whether a label selector (`matchLabels`, `matchExpressions`) selects `labels`. */
function selectorMatches(selector: Record<string, unknown>, labels: Record<string, unknown>): boolean {
  const ml = isPlainObject(selector.matchLabels) ? selector.matchLabels : {};
  for (const [k, v] of Object.entries(ml)) if (labels[k] !== v) return false;
  const exprs = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  for (const e of exprs) {
    if (!isPlainObject(e) || typeof e.key !== 'string') return false;
    const values = Array.isArray(e.values) ? e.values.map(String) : [];
    const has = Object.hasOwn(labels, e.key);
    const value = has ? String(labels[e.key]) : undefined;
    switch (e.operator) {
      case 'In':
        if (value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/**
 * apps/v1 DaemonSet spec, as upstream's `ValidateDaemonSetSpec`: a non-empty selector that
 * selects the template's labels, the template's pod spec (field paths under
 * `spec.template.spec`), `restartPolicy` `Always` only, and the update strategy's type.
 */
function validateDaemonSetSpec(specValue: unknown, causes: StatusCause[]): void {
  const spec = isPlainObject(specValue) ? specValue : {};
  const selector = isPlainObject(spec.selector) ? spec.selector : undefined;
  const template = isPlainObject(spec.template) ? spec.template : undefined;
  const templateMeta = template && isPlainObject(template.metadata) ? template.metadata : {};
  const labels = isPlainObject(templateMeta.labels) ? templateMeta.labels : {};
  // Upstream's order: a nil selector selects nothing (so the labels do not match), an empty
  // one selects everything and is refused on its own.
  if (selector === undefined || !selectorMatches(selector, labels)) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${goStringMap(isPlainObject(templateMeta.labels) ? labels : undefined)}: \`selector\` does not match template \`labels\``,
      field: 'spec.template.metadata.labels',
    });
  }
  if (selector !== undefined) {
    const ml = isPlainObject(selector.matchLabels) ? selector.matchLabels : {};
    const exprs = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
    if (Object.keys(ml).length === 0 && exprs.length === 0) {
      // Go prints the (non-Stringer) struct with %#v.
      const labelsPart = isPlainObject(selector.matchLabels)
        ? 'map[string]string{}'
        : 'map[string]string(nil)';
      const exprPart = Array.isArray(selector.matchExpressions)
        ? '[]v1.LabelSelectorRequirement{}'
        : '[]v1.LabelSelectorRequirement(nil)';
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: v1.LabelSelector{MatchLabels:${labelsPart}, MatchExpressions:${exprPart}}: empty selector is invalid for daemonset`,
        field: 'spec.selector',
      });
    }
  }
  validateLabels(templateMeta.labels, 'spec.template.metadata.labels', causes);
  validateAnnotations(templateMeta.annotations, 'spec.template.metadata.annotations', causes);
  const podSpec = template && isPlainObject(template.spec) ? template.spec : undefined;
  if (podSpec === undefined) {
    causes.push(required('spec.template.spec.containers'));
  } else {
    const own: StatusCause[] = [];
    validatePodSpec(podSpec, own);
    for (const c of own) {
      causes.push(c.field?.startsWith('spec.') ? { ...c, field: `spec.template.${c.field}` } : c);
    }
    // Unset only on a store write without API defaulting, which would make it `Always`.
    const rp = podSpec.restartPolicy;
    if (rp !== undefined && rp !== 'Always') {
      causes.push({
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(rp)}: supported values: "Always"`,
        field: 'spec.template.spec.restartPolicy',
      });
    }
    if (podSpec.activeDeadlineSeconds !== undefined && podSpec.activeDeadlineSeconds !== null) {
      causes.push(
        invalidValue(
          'spec.template.spec.activeDeadlineSeconds',
          podSpec.activeDeadlineSeconds,
          'must not be specified',
        ),
      );
    }
  }
  const strategy = isPlainObject(spec.updateStrategy) ? spec.updateStrategy : {};
  const st = strategy.type;
  if (st !== undefined && st !== 'OnDelete' && st !== 'RollingUpdate') {
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(st)}: supported values: "OnDelete", "RollingUpdate"`,
      field: 'spec.updateStrategy.type',
    });
  }
}

function validateSpecific(type: ResourceType, obj: KubeObject, causes: StatusCause[]): void {
  const o = obj as Record<string, unknown>;
  switch (type.resource) {
    case 'pods': {
      const spec = isPlainObject(o.spec) ? o.spec : undefined;
      if (!spec) {
        causes.push(required('spec.containers'));
        return;
      }
      validatePodSpec(spec, causes);
      break;
    }
    case 'daemonsets':
      validateDaemonSetSpec(o.spec, causes);
      break;
    case 'services': {
      const spec = isPlainObject(o.spec) ? o.spec : {};
      validateServiceEnums(spec, causes);
      const headless = spec.clusterIP === 'None' || spec.type === 'ExternalName';
      const ports = spec.ports;
      if (!Array.isArray(ports) || ports.length === 0) {
        if (!headless) causes.push(required('spec.ports'));
        return;
      }
      ports.forEach((p: unknown, i: number) => {
        const port = isPlainObject(p) ? p : {};
        validatePort(`spec.ports[${i}].port`, port.port, causes);
        const tp = port.targetPort;
        if (typeof tp === 'number') validatePort(`spec.ports[${i}].targetPort`, tp, causes);
        if (ports.length > 1 && (typeof port.name !== 'string' || port.name === '')) {
          causes.push(required(`spec.ports[${i}].name`));
        }
      });
      break;
    }
    case 'endpointslices': {
      const at = o.addressType;
      if (at === undefined) causes.push(required('addressType'));
      else if (at !== 'IPv4' && at !== 'IPv6' && at !== 'FQDN') {
        causes.push({
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: "${String(at)}": supported values: "FQDN", "IPv4", "IPv6"`,
          field: 'addressType',
        });
      }
      const eps = o.endpoints;
      if (Array.isArray(eps)) {
        eps.forEach((e: unknown, i: number) => {
          const addrs = isPlainObject(e) ? e.addresses : undefined;
          if (!Array.isArray(addrs) || addrs.length === 0) causes.push(required(`endpoints[${i}].addresses`));
        });
      }
      break;
    }
    case 'configmaps':
    case 'secrets':
      validateConfigObject(type.resource, obj, causes);
      break;
    case 'events': {
      const io = isPlainObject(o.involvedObject) ? o.involvedObject : undefined;
      if (!io) causes.push(required('involvedObject'));
      break;
    }
  }
}

/**
 * Validates an object about to be stored (`old`: the stored version it replaces, for the
 * rules of an update).
 * @returns the 422 error to throw, or `undefined` when the object is valid.
 */
export function validateObject(
  type: ResourceType,
  obj: KubeObject,
  old?: KubeObject,
): ApiStatusError | undefined {
  const causes: StatusCause[] = [];
  const meta = obj.metadata ?? {};
  const name = typeof meta.name === 'string' ? meta.name : '';
  if (name === '') {
    causes.push({
      reason: 'FieldValueRequired',
      message: 'Required value: name or generateName is required',
      field: 'metadata.name',
    });
  } else {
    const bad = checkName('metadata.name', name, NAME_RULES[type.resource] ?? 'subdomain');
    if (bad) causes.push(bad);
  }
  if (type.namespaced) {
    const ns = meta.namespace;
    if (typeof ns !== 'string' || ns === '') causes.push(required('metadata.namespace'));
    else {
      const bad = checkName('metadata.namespace', ns, 'label');
      if (bad) causes.push(bad);
    }
  }
  validateLabels(meta.labels, 'metadata.labels', causes);
  validateAnnotations(meta.annotations, 'metadata.annotations', causes);
  if (old !== undefined) validateConfigUpdate(type.resource, obj, old, causes);
  validateSpecific(type, obj, causes);
  return causes.length > 0 ? invalid(type.group, type.kind, name, causes) : undefined;
}

/**
 * Field selectors (`spec.nodeName=node-1,status.phase!=Failed`) and the selectable fields
 * of each resource type, as the real server supports them.
 *
 * @module
 */
import { badRequest } from './errors.js';
import type { KubeObject } from './object.js';
import type { ResourceType } from './resources.js';

/** The selectable field values of one object (`metadata.name` → `x`). */
export type FieldSet = Readonly<Record<string, string>>;

/** One `field=value` or `field!=value` requirement. */
export interface FieldRequirement {
  readonly field: string;
  readonly value: string;
  readonly negate: boolean;
}

/** A parsed field selector; an empty one matches everything. */
export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  /** Whether `fields` satisfy every requirement. */
  matches(fields: FieldSet): boolean;
  /** The value required for `field` by an `=` requirement, if any (used for key lookups). */
  exact(field: string): string | undefined;
}

class ParsedFieldSelector implements FieldSelector {
  constructor(readonly requirements: readonly FieldRequirement[]) {}
  matches(fields: FieldSet): boolean {
    for (const r of this.requirements) {
      const v = fields[r.field] ?? '';
      if (r.negate ? v === r.value : v !== r.value) return false;
    }
    return true;
  }
  exact(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && !r.negate)?.value;
  }
}

/** A field selector that matches everything. */
export const ALL_FIELDS: FieldSelector = new ParsedFieldSelector([]);

function str(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : String(v);
}

function rec(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
}

const EXTRA_FIELDS: Readonly<Record<string, readonly string[]>> = {
  pods: [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.nominatedNodeName',
  ],
  nodes: ['spec.unschedulable'],
  namespaces: ['status.phase'],
  events: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  services: [],
  secrets: ['type'],
  endpointslices: [],
  leases: [],
};

/** The selectable field names of a resource type. */
export function selectableFields(type: ResourceType): readonly string[] {
  return ['metadata.name', 'metadata.namespace', ...(EXTRA_FIELDS[type.resource] ?? [])];
}

/** Extracts the selectable field values of an object. */
export function fieldsOf(type: ResourceType, obj: KubeObject): FieldSet {
  const meta = rec(obj.metadata);
  const out: Record<string, string> = {
    'metadata.name': str(meta.name),
    'metadata.namespace': str(meta.namespace),
  };
  const o = obj as Record<string, unknown>;
  switch (type.resource) {
    case 'pods': {
      const spec = rec(o.spec);
      const status = rec(o.status);
      out['spec.nodeName'] = str(spec.nodeName);
      out['spec.restartPolicy'] = str(spec.restartPolicy);
      out['spec.schedulerName'] = str(spec.schedulerName);
      out['spec.serviceAccountName'] = str(spec.serviceAccountName);
      out['spec.hostNetwork'] = spec.hostNetwork === true ? 'true' : 'false';
      out['status.phase'] = str(status.phase);
      out['status.podIP'] = str(status.podIP);
      out['status.nominatedNodeName'] = str(status.nominatedNodeName);
      break;
    }
    case 'nodes':
      out['spec.unschedulable'] = rec(o.spec).unschedulable === true ? 'true' : 'false';
      break;
    case 'namespaces':
      out['status.phase'] = str(rec(o.status).phase);
      break;
    case 'secrets':
      out.type = str(o.type);
      break;
    case 'events': {
      const io = rec(o.involvedObject);
      for (const k of ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']) {
        out[`involvedObject.${k}`] = str(io[k]);
      }
      out.reason = str(o.reason);
      out.reportingComponent = str(o.reportingComponent);
      out.source = str(rec(o.source).component);
      out.type = str(o.type);
      break;
    }
  }
  return out;
}

/**
 * Parses a field selector for a resource type.
 * @throws ApiStatusError (400 BadRequest) on a syntax error or an unsupported field.
 */
export function parseFieldSelector(type: ResourceType, selector: string | undefined | null): FieldSelector {
  if (selector === undefined || selector === null || selector.trim() === '') return ALL_FIELDS;
  const allowed = selectableFields(type);
  const reqs: FieldRequirement[] = [];
  for (const raw of selector.split(',')) {
    const part = raw.trim();
    const m = /^([^=!]+)(==|!=|=)(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${part}'`);
    const field = (m[1] as string).trim();
    if (!allowed.includes(field)) {
      throw badRequest(`field label not supported: ${field}`);
    }
    reqs.push({ field, value: (m[3] as string).trim(), negate: m[2] === '!=' });
  }
  return new ParsedFieldSelector(reqs);
}

/**
 * Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, what `kubectl
 * get` asks for) for every kind served: ConfigMap (NAME, DATA, AGE), Secret (NAME, TYPE, DATA,
 * AGE) and ServiceAccount (NAME, SECRETS, AGE) here, the others in `table-printers.ts`, with
 * the cells of kube-apiserver's printers.
 *
 * @module
 * @internal
 */
import { badRequest } from './errors.js';
import { isPlainObject, type KubeObject } from './object.js';
import type { ResourceType } from './resources.js';
import { printerColumns, rowConditions } from './table-printers.js';

interface Column {
  readonly name: string;
  readonly type: string;
  readonly format: string;
  readonly description: string;
  /** 1 for the columns `kubectl get` shows only with `-o wide`. */
  readonly priority?: number;
  readonly cell: (obj: Record<string, unknown>) => unknown;
}

const NAME_DOC =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const AGE_DOC =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

function count(v: unknown): number {
  return isPlainObject(v) ? Object.keys(v).length : Array.isArray(v) ? v.length : 0;
}

/** apimachinery's `duration.HumanDuration`. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

function columns(type: ResourceType, now: number): Column[] | undefined {
  const name: Column = {
    name: 'Name',
    type: 'string',
    format: 'name',
    description: NAME_DOC,
    cell: (o) => (isPlainObject(o.metadata) ? o.metadata.name : ''),
  };
  const age: Column = {
    name: 'Age',
    type: 'string',
    format: '',
    description: AGE_DOC,
    cell: (o) => {
      const ts = isPlainObject(o.metadata) ? o.metadata.creationTimestamp : undefined;
      return typeof ts === 'string' ? humanDuration(now - Date.parse(ts)) : '<unknown>';
    },
  };
  switch (type.resource) {
    case 'configmaps':
      return [
        name,
        {
          name: 'Data',
          type: 'string',
          format: '',
          description:
            "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
          cell: (o) => count(o.data) + count(o.binaryData),
        },
        age,
      ];
    case 'secrets':
      return [
        name,
        {
          name: 'Type',
          type: 'string',
          format: '',
          description:
            'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types',
          cell: (o) => (typeof o.type === 'string' ? o.type : ''),
        },
        {
          name: 'Data',
          type: 'string',
          format: '',
          description:
            "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
          cell: (o) => count(o.data),
        },
        age,
      ];
    case 'serviceaccounts':
      return [
        name,
        {
          name: 'Secrets',
          type: 'string',
          format: '',
          description:
            'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.',
          cell: (o) => count(o.secrets),
        },
        age,
      ];
    default:
      return printerColumns(type.resource, name, age, NAME_DOC, AGE_DOC, now, humanDuration);
  }
}

/**
 * The Table version asked for by an `Accept` header (`v1` or `v1beta1` of meta.k8s.io), or
 * `undefined` when the client does not ask for a Table.
 */
export function tableVersion(accept: string | undefined): 'v1' | 'v1beta1' | undefined {
  if (accept === undefined) return undefined;
  let found: 'v1' | 'v1beta1' | undefined;
  for (const part of accept.split(',')) {
    const params = part.split(';').map((p) => p.trim());
    if (params[0] !== 'application/json' || !params.includes('as=Table') || !params.includes('g=meta.k8s.io'))
      continue;
    if (params.includes('v=v1')) return 'v1';
    if (params.includes('v=v1beta1')) found = 'v1beta1';
  }
  return found;
}

/** Whether `type` has Table columns here. */
export function hasTable(type: ResourceType): boolean {
  return columns(type, 0) !== undefined;
}

/** What each Table row carries as its `object` (the `includeObject` query parameter). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/**
 * The `includeObject` parameter of a Table request; `Metadata` when unset or empty.
 * @throws ApiStatusError 400 for any other value, with upstream's message
 */
export function includeObjectParam(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject') ?? '';
  if (v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`unrecognized includeObject value: ${JSON.stringify(v)}`);
}

/**
 * A `Table` of `objects`, or `undefined` for a kind without columns. Each row's `object` is the
 * object's PartialObjectMetadata (`Metadata`), the whole object (`Object`: what `kubectl get
 * --sort-by` sorts on) or absent (`None`).
 */
export function toTable(
  type: ResourceType,
  version: 'v1' | 'v1beta1',
  objects: readonly KubeObject[],
  listMeta: Record<string, unknown>,
  now: number,
  includeObject: IncludeObject = 'Metadata',
): Record<string, unknown> | undefined {
  const cols = columns(type, now);
  if (!cols) return undefined;
  const apiVersion = `meta.k8s.io/${version}`;
  return {
    kind: 'Table',
    apiVersion,
    metadata: listMeta,
    columnDefinitions: cols.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format,
      description: c.description,
      priority: c.priority ?? 0,
    })),
    rows: objects.map((o) => {
      const conditions = rowConditions(type.resource, o as Record<string, unknown>, now, humanDuration);
      return {
        cells: cols.map((c) => c.cell(o as Record<string, unknown>)),
        ...(conditions.length > 0 ? { conditions } : {}),
        ...(includeObject === 'None'
          ? {}
          : {
              object:
                includeObject === 'Object'
                  ? o
                  : { kind: 'PartialObjectMetadata', apiVersion, metadata: o.metadata ?? {} },
            }),
      };
    }),
  };
}

/**
 * The object of a watch event as a one-row Table (what kube-apiserver sends to `kubectl get
 * -w`), with the object's resourceVersion as the Table's.
 */
export function watchTableJson(
  type: ResourceType,
  version: 'v1' | 'v1beta1',
  json: string,
  now: number,
  includeObject: IncludeObject = 'Metadata',
): string {
  const obj = JSON.parse(json) as KubeObject;
  const table = toTable(
    type,
    version,
    [obj],
    { resourceVersion: obj.metadata?.resourceVersion ?? '' },
    now,
    includeObject,
  );
  return table ? JSON.stringify(table) : json;
}

/**
 * References to the objects events are about, as the kubelet builds them: a pod, one of its
 * containers (`fieldPath` `spec.containers{name}`), the node (`uid` = node name), or any API
 * object with a kind.
 *
 * @module
 */
import type { ObjectReference } from './event.js';

/** The fields of an API object a reference is made from (a `V1Pod`, `V1Node`, … fits). */
export interface ReferencedObject {
  readonly apiVersion?: string | undefined;
  readonly kind?: string | undefined;
  readonly metadata?:
    | {
        readonly name?: string | undefined;
        readonly namespace?: string | undefined;
        readonly uid?: string | undefined;
        readonly resourceVersion?: string | undefined;
      }
    | undefined;
}

/** The pod fields a container reference needs (a `V1Pod` fits). */
export interface ReferencedPod extends ReferencedObject {
  readonly spec?:
    | {
        readonly containers?: readonly { readonly name: string }[] | undefined;
        readonly initContainers?: readonly { readonly name: string }[] | undefined;
        readonly ephemeralContainers?: readonly { readonly name: string }[] | undefined;
      }
    | undefined;
}

/** Thrown when no reference can be made: the object has no kind or no name. */
export class InvalidReferenceError extends Error {
  override readonly name = 'InvalidReferenceError';
  /** @param what names the object. @param problem what is missing. */
  constructor(
    readonly what: string,
    problem: string,
  ) {
    super(`cannot make an event reference to ${what}: ${problem}`);
  }
}

function defined(ref: Record<string, string | undefined>): ObjectReference {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(ref)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}

/**
 * A reference to an API object (upstream `ref.GetReference`).
 * @param defaults kind and apiVersion to use when the object does not carry them (list items often don't).
 * @throws InvalidReferenceError when the object has no kind (and none is given) or no name
 */
export function objectReference(
  object: ReferencedObject,
  defaults: { readonly kind?: string; readonly apiVersion?: string } = {},
): ObjectReference {
  const kind = object.kind || defaults.kind;
  const name = object.metadata?.name;
  const what = `${kind ?? 'object'} ${object.metadata?.namespace ? `${object.metadata.namespace}/` : ''}${name ?? '<unnamed>'}`;
  if (!kind) throw new InvalidReferenceError(what, 'no kind');
  if (!name) throw new InvalidReferenceError(what, 'no metadata.name');
  return defined({
    kind,
    namespace: object.metadata?.namespace,
    name,
    uid: object.metadata?.uid,
    apiVersion: object.apiVersion || defaults.apiVersion,
    resourceVersion: object.metadata?.resourceVersion,
  });
}

/** A reference to a pod (`kind` Pod, `apiVersion` v1 unless the object says otherwise). */
export function podReference(pod: ReferencedObject): ObjectReference {
  return objectReference(pod, { kind: 'Pod', apiVersion: 'v1' });
}

/**
 * A reference to a container of a pod (upstream `GenerateContainerRef`): the pod with
 * `fieldPath` `spec.containers{name}`, `spec.initContainers{name}` or
 * `spec.ephemeralContainers{name}`.
 * @throws InvalidReferenceError when the pod has no container of that name
 */
export function containerReference(pod: ReferencedPod, containerName: string): ObjectReference {
  const spec = pod.spec;
  let field: string | undefined;
  if (spec?.containers?.some((c) => c.name === containerName)) field = 'spec.containers';
  else if (spec?.initContainers?.some((c) => c.name === containerName)) field = 'spec.initContainers';
  else if (spec?.ephemeralContainers?.some((c) => c.name === containerName))
    field = 'spec.ephemeralContainers';
  const ref = podReference(pod);
  if (field === undefined) {
    throw new InvalidReferenceError(
      `Pod ${ref.namespace ?? ''}/${ref.name ?? ''}`,
      `no container ${JSON.stringify(containerName)}`,
    );
  }
  return { ...ref, fieldPath: `${field}{${containerName}}` };
}

/** The kubelet's reference to its node: kind Node, the node name as name and UID, no namespace. */
export function nodeReference(nodeName: string): ObjectReference {
  if (nodeName === '') throw new InvalidReferenceError('Node <unnamed>', 'no node name');
  return { kind: 'Node', name: nodeName, uid: nodeName };
}

/**
 * The admission contract (upstream `lifecycle.PodAdmitHandler`): a handler looks at a pod and
 * the pods already admitted and says yes, or no with a one-word reason and a message.
 *
 * @module
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';

/** What a handler judges: the new pod and the pods already admitted on this node. */
export interface PodAdmitAttributes {
  /** The pod asking to run. */
  readonly pod: V1Pod;
  /** The active pods already admitted (the new one excluded). */
  readonly otherPods: readonly V1Pod[];
}

/** A handler's answer. `reason` and `message` are set when `admit` is false. */
export interface PodAdmitResult {
  /** Whether the pod may run. */
  readonly admit: boolean;
  /** One CamelCase word, e.g. `OutOfcpu`, `NodeAffinity`, `SysctlForbidden`, `Evicted`. */
  readonly reason?: string;
  /** A sentence for humans, e.g. `Node didn't have enough resource: cpu, requested: 64000, used: 0, capacity: 2000`. */
  readonly message?: string;
}

/**
 * One admission check. The eviction manager's pressure check, the sysctl allow-list and the
 * predicates each implement it; {@link PodAdmitter} runs them in order, first rejection wins.
 */
export interface PodAdmitHandler {
  /** Judges `attrs.pod`. Must not throw for bad input: reject it instead. */
  admit(attrs: PodAdmitAttributes): PodAdmitResult;
}

/** Where the predicates read the Node object (labels, taints, allocatable). */
export type NodeGetter = () => V1Node | undefined;

/** The admitted answer. */
export const ADMITTED: PodAdmitResult = Object.freeze({ admit: true });

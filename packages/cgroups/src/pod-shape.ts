/**
 * The parts of a pod the cgroup code reads; a `V1Pod` from `@kubernetes/client-node` fits.
 *
 * @module
 */
import type { QosContainer } from '@nodeagent/kubecontainer';

/** The part of a container the cgroup code reads (a `V1Container` fits). */
export interface CgroupContainer extends QosContainer {
  /** `Always` on an init container makes it a sidecar (restartable init container). */
  readonly restartPolicy?: string;
}

/** The part of a pod the cgroup code reads (a `V1Pod` fits). */
export interface CgroupPod {
  /** The pod's UID names its cgroup (`pod<uid>`). */
  readonly metadata?: { readonly uid?: string; readonly name?: string; readonly namespace?: string };
  /** Containers and the RuntimeClass overhead. */
  readonly spec?: {
    readonly containers?: readonly CgroupContainer[];
    readonly initContainers?: readonly CgroupContainer[];
    /** `spec.overhead` (RuntimeClass pod overhead), added to the pod's requests and non-zero limits. */
    readonly overhead?: Readonly<Record<string, string>>;
  };
  /** A QoS class already computed (`status.qosClass`) wins. */
  readonly status?: { readonly qosClass?: string };
}

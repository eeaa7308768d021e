/**
 * The parts of a pod the cgroup code reads; a `V1Pod` from `@kubernetes/client-node` fits.
 *
 * @module
 */
import type { ResourceContainer, ResourcePod } from '@nodeagent/kubecontainer';

/** The part of a container the cgroup code reads (a `V1Container` fits; `@nodeagent/kubecontainer`'s `ResourceContainer`). */
export type CgroupContainer = ResourceContainer;

/** The part of a pod the cgroup code reads (a `V1Pod` fits). */
export interface CgroupPod extends ResourcePod {
  /** The pod's UID names its cgroup (`pod<uid>`). */
  readonly metadata?: { readonly uid?: string; readonly name?: string; readonly namespace?: string };
  /** A QoS class already computed (`status.qosClass`) wins. */
  readonly status?: { readonly qosClass?: string };
}

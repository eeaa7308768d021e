/**
 * The kubelet's predicate admission (upstream `lifecycle.predicateAdmitHandler`): the OS
 * checks first, then the scheduler's general filter (resources fit, node affinity, node name,
 * host ports) and the NoExecute taints of non-static pods. The first failure is the answer:
 * a resource shortage as `OutOf<resource>` with `InsufficientResourceError`'s message, any
 * other predicate as its name with `Predicate <name> failed: <reason>`.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isStaticPod } from '@nodeagent/pod-workers';
import {
  ADMITTED,
  type NodeGetter,
  type PodAdmitAttributes,
  type PodAdmitHandler,
  type PodAdmitResult,
} from './admit-handler.js';
import { insufficientResourceMessage, insufficientResources } from './fit.js';
import { requiredNodeAffinityMatches } from './node-affinity.js';
import { NodeInfo, podHostPorts } from './node-info.js';
import { findMatchingUntoleratedTaint } from './taints.js';

/** Predicate names and their failure reasons (the scheduler plugins' `Name` and `ErrReason`). */
export const PREDICATE_REASONS = {
  NodeAffinity: "node(s) didn't match Pod's node affinity/selector",
  NodeName: "node(s) didn't match the requested node name",
  NodePorts: "node(s) didn't have free ports for the requested pod ports",
  TaintToleration: "node(s) had taints that the pod didn't tolerate",
} as const;

/** A predicate that failed, other than a resource shortage. */
export type PredicateName = keyof typeof PREDICATE_REASONS;

/** Options of {@link PredicateAdmitHandler}. */
export interface PredicateAdmitHandlerOptions {
  /** Returns this node's Node object (labels, taints, allocatable); undefined while unknown. */
  readonly node: NodeGetter;
  /**
   * The node's operating system as `runtime.GOOS` spells it, for the `kubernetes.io/os` label
   * and `spec.os.name` checks.
   * @default 'linux'
   */
  readonly nodeOS?: string;
}

/** The reason a resource shortage is reported under (`OutOfcpu`, `OutOfpods`, `OutOfexample.com/gpu`). */
export function outOfResourceReason(resourceName: string): string {
  return `OutOf${resourceName}`;
}

function predicateFailure(name: PredicateName): PodAdmitResult {
  return { admit: false, reason: name, message: `Predicate ${name} failed: ${PREDICATE_REASONS[name]}` };
}

function hostPortsFit(pod: V1Pod, info: NodeInfo): boolean {
  return podHostPorts(pod).every(
    (want) =>
      !info.usedPorts.some(
        (used) =>
          used.protocol === want.protocol &&
          used.hostPort === want.hostPort &&
          (used.hostIP === want.hostIP || used.hostIP === '0.0.0.0' || want.hostIP === '0.0.0.0'),
      ),
  );
}

/** Resources, node affinity and selector, node name, host ports, NoExecute taints, node OS. */
export class PredicateAdmitHandler implements PodAdmitHandler {
  readonly #node: NodeGetter;
  readonly #os: string;

  /** @param options see {@link PredicateAdmitHandlerOptions}. */
  constructor(options: PredicateAdmitHandlerOptions) {
    this.#node = options.node;
    this.#os = options.nodeOS ?? 'linux';
  }

  /** Upstream's `Admit`: the first failing check decides. */
  admit({ pod, otherPods }: PodAdmitAttributes): PodAdmitResult {
    const node = this.#node();
    if (node === undefined) {
      return { admit: false, reason: 'InvalidNodeInfo', message: 'Kubelet cannot get node info.' };
    }
    // The node label is treated as this OS whatever it says; the pod's *label* is compared.
    const podOsLabel = pod.metadata?.labels?.['kubernetes.io/os'];
    if (podOsLabel !== undefined && podOsLabel !== this.#os) {
      return {
        admit: false,
        reason: 'PodOSSelectorNodeLabelDoesNotMatch',
        message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
      };
    }
    const osName = pod.spec?.os?.name;
    if (osName !== undefined && osName !== this.#os) {
      return {
        admit: false,
        reason: 'PodOSNotSupported',
        message: "Failed to admit pod as the OS field doesn't match node OS",
      };
    }
    const info = new NodeInfo(node, otherPods);
    const short = insufficientResources(pod, info)[0];
    if (short !== undefined) {
      return {
        admit: false,
        reason: outOfResourceReason(short.resourceName),
        message: insufficientResourceMessage(short),
      };
    }
    if (!requiredNodeAffinityMatches(pod, node)) return predicateFailure('NodeAffinity');
    const wanted = pod.spec?.nodeName;
    if (wanted !== undefined && wanted !== '' && wanted !== node.metadata?.name)
      return predicateFailure('NodeName');
    if (!hostPortsFit(pod, info)) return predicateFailure('NodePorts');
    // The kubelet looks only at NoExecute taints (NoSchedule is the scheduler's), never for static pods.
    if (!isStaticPod(pod)) {
      const untolerated = findMatchingUntoleratedTaint(
        node.spec?.taints ?? [],
        pod.spec?.tolerations ?? [],
        (t) => t.effect === 'NoExecute',
      );
      if (untolerated !== undefined) return predicateFailure('TaintToleration');
    }
    return ADMITTED;
  }
}

/**
 * The kubelet's admission step (`canAdmitPod` inside `HandlePodAdditions`): run the handlers
 * in order against the pods admitted so far, keep the admitted pod's requests on the books
 * until it is released, and give a rejected pod the status the kubelet writes (`Failed`,
 * the reason, `Pod was rejected: <message>`).
 *
 * @module
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { podQosClass } from '@nodeagent/kubecontainer';
import { ADMITTED, type PodAdmitHandler, type PodAdmitResult } from './admit-handler.js';

/** Options of {@link PodAdmitter}. */
export interface PodAdmitterOptions {
  /**
   * The handlers, asked in this order; the first rejection is the answer. The kubelet's order
   * is the eviction manager's pressure check, the sysctl allow-list, then the predicates.
   */
  readonly handlers: readonly PodAdmitHandler[];
}

function uidOf(pod: V1Pod): string {
  return pod.metadata?.uid ?? '';
}

/** Admits pods and accounts the admitted ones against the node. */
export class PodAdmitter {
  readonly #handlers: readonly PodAdmitHandler[];
  readonly #admitted = new Map<string, V1Pod>();

  /** @param options see {@link PodAdmitterOptions}. */
  constructor(options: PodAdmitterOptions) {
    this.#handlers = options.handlers;
  }

  /** The pods admitted and not yet released. */
  admittedPods(): V1Pod[] {
    return [...this.#admitted.values()];
  }

  /** Whether the pod with this UID was admitted and not released. */
  isAdmitted(uid: string): boolean {
    return this.#admitted.has(uid);
  }

  /**
   * Judges `pod` against the admitted pods (a pod already admitted is admitted again without
   * a check, as the kubelet only admits additions). On success the pod is on the books.
   */
  admit(pod: V1Pod): PodAdmitResult {
    const uid = uidOf(pod);
    if (this.#admitted.has(uid)) {
      this.#admitted.set(uid, pod);
      return ADMITTED;
    }
    const otherPods = this.admittedPods();
    for (const handler of this.#handlers) {
      let result: PodAdmitResult;
      try {
        result = handler.admit({ pod, otherPods });
      } catch (err) {
        result = {
          admit: false,
          reason: 'UnexpectedAdmissionError',
          message: `Unexpected error while attempting to admit the pod: ${(err as Error).message}`,
        };
      }
      if (!result.admit) return result;
    }
    this.#admitted.set(uid, pod);
    return ADMITTED;
  }

  /** Replaces an admitted pod's object (a spec update), keeping its place on the books. */
  update(pod: V1Pod): void {
    const uid = uidOf(pod);
    if (this.#admitted.has(uid)) this.#admitted.set(uid, pod);
  }

  /** Takes a pod off the books (terminated, removed or rejected). */
  release(uid: string): void {
    this.#admitted.delete(uid);
  }
}

/** The status the kubelet writes for a rejected pod (`rejectPod`). */
export function rejectedPodStatus(pod: V1Pod, result: PodAdmitResult): V1PodStatus {
  return {
    qosClass: podQosClass(pod),
    phase: 'Failed',
    reason: result.reason ?? 'UnknownReason',
    message: `Pod was rejected: ${result.message ?? ''}`,
  };
}
